// Invariants of the windowed logs' line chooser (parser/log_lines.cpp) on
// arbitrary engine output, which the agent's container largely writes: it
// never crashes or reads past the end, is deterministic, answers at most
// the budget in whole lines, and never moves the cursor back.
#include <string>
#include <string_view>

#include "fuzz/check.hpp"
#include "fuzz/entry.hpp"
#include "parser/log_lines.hpp"

namespace hb::fuzz {

void loglines_one(const std::uint8_t* data, std::size_t size) {
    if (size < 8) return;
    LogWindow window;
    window.lines = static_cast<std::uint16_t>(data[0] % 4 == 0 ? 0 : data[1] % 20 + 1);
    if (data[0] & 0x10) {
        // A since near the stamps the input may carry (2026-12-02...).
        window.since_ns = 1796245045602731173 + (data[2] % 8) - 4;
        window.since_seen = data[3] % 4;
    }
    if (!window.given()) window.lines = 1;
    const bool cut = data[4] & 1;
    const std::size_t budget = 40 + static_cast<std::size_t>(data[5]) * 8;
    const std::string_view output(reinterpret_cast<const char*>(data + 8), size - 8);

    const parser::LogSelection s = parser::select_lines(output, cut, window, budget);
    const parser::LogSelection again = parser::select_lines(output, cut, window, budget);
    HB_FUZZ_CHECK(s.text == again.text && s.cursor == again.cursor && s.more == again.more);
    const std::string text = parser::selected_text(output, s);
    HB_FUZZ_CHECK(text.size() <= budget);
    HB_FUZZ_CHECK(text.empty() || text.back() == '\n');
    // Every range inside the output, in order: what the executor checks.
    std::size_t from = 0;
    std::size_t untimed = 0;
    for (const LogRange& r : s.text) {
        HB_FUZZ_CHECK(r.start >= from && r.end <= output.size() && r.start <= r.end);
        from = r.end;
    }
    from = 0;
    for (const LogRange& r : s.untimed) {
        HB_FUZZ_CHECK(r.start >= from && r.end <= output.size() && r.start < r.end);
        from = r.end;
        untimed += r.end - r.start;
    }
    HB_FUZZ_CHECK(untimed <= 4096 && s.untimed.size() <= kMaxLogUntimedRanges);
    if (window.since_ns != kNoTime) {
        const bool forward = s.cursor.ns > window.since_ns ||
                             (s.cursor.ns == window.since_ns && s.cursor.seen >= window.since_seen);
        HB_FUZZ_CHECK(forward);
    }
    // Nothing answered: the cursor stays, but for a view cut inside the
    // line already sent, where it moves past that line's first piece.
    if (text.empty() && window.since_ns != kNoTime) {
        const bool stays = s.cursor == (LogCursor{window.since_ns, window.since_seen});
        const bool moves_on = cut && s.cursor == (LogCursor{window.since_ns + 1, 0});
        HB_FUZZ_CHECK(stays || moves_on);
    }
    const std::string_view group =
        output.substr(s.group_first.start, s.group_first.end - s.group_first.start);
    (void)parser::pieces_before(output, s.cursor.ns, group);
}

}  // namespace hb::fuzz

#include "engines/podman/log_lines.hpp"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <optional>

#include "ipc/rfc3339.hpp"
#include "ipc/sys.hpp"

namespace hb::exec {
namespace {

constexpr std::size_t kMaxUntimed = 4096;
// "2026-12-03T11:49:25.926492145+01:00" is 35 bytes: a stamp is never longer.
constexpr std::size_t kMaxStampBytes = 40;

struct Line {
    std::string_view text;  // with its newline (none for an unfinished last line)
    std::int64_t ns = 0;
    std::uint32_t nth = 0;     // its place among the output's lines with this stamp, from 1
    std::size_t group_at = 0;  // where the output's first line with this stamp starts
};

// Calls `each(Line)` for every complete stamped line, in order, until it
// returns false; unstamped ones go to `untimed`. Returns the unfinished
// last line, if it has a stamp (its text without a newline).
template <typename F>
std::optional<Line> for_each_line(std::string_view output, std::string& untimed, F&& each) {
    std::int64_t group = 0;
    std::uint32_t nth = 0;
    std::size_t group_at = 0;
    std::size_t at = 0;
    while (at < output.size()) {
        const std::size_t end = output.find('\n', at);
        const std::string_view text = output.substr(
            at, end == std::string_view::npos ? std::string_view::npos : end + 1 - at);
        const std::int64_t ns = line_stamp(text);
        if (ns != 0 && ns != group) {
            group = ns;
            group_at = at;
            nth = 0;
        }
        if (end == std::string_view::npos) {
            if (ns == 0) return std::nullopt;
            return Line{text, ns, nth + 1, group_at};
        }
        at = end + 1;
        if (ns == 0) {
            if (untimed.size() + text.size() <= kMaxUntimed) untimed.append(text);
            continue;
        }
        if (!each(Line{text, ns, ++nth, group_at})) return std::nullopt;
    }
    return std::nullopt;
}

// A line alone longer than the budget (or one the read limit cut): its
// head, and how much of it was left out.
std::string cut_line(std::string_view text, std::size_t budget) {
    char note[80];
    const auto with_note = [&](std::size_t keep) {
        return static_cast<std::size_t>(std::snprintf(
            note, sizeof note, " [line cut: %zu bytes not shown]\n", text.size() - keep));
    };
    std::size_t keep = budget > 48 ? budget - 48 : 0;
    keep = std::min(keep, text.size());
    const std::size_t note_size = with_note(keep);
    keep = std::min(keep, budget > note_size ? budget - note_size : 0);
    with_note(keep);
    return std::string(text.substr(0, keep)) + note;
}

// The complete line of `output` that starts at `at`, with its newline.
std::string_view line_at(std::string_view output, std::size_t at) {
    const std::size_t end = output.find('\n', at);
    return output.substr(at, end == std::string_view::npos ? std::string_view::npos : end + 1 - at);
}

// A complete line as answered: whole when it fits the budget, else cut.
std::string shown(std::string_view text, std::size_t budget) {
    return text.size() > budget ? cut_line(text, budget) : std::string(text);
}

// Whether the line just before the first line of a stamp (at `first_at`)
// holds a piece with that stamp: the engine wrote that piece's stamp,
// exactly as it wrote the first line's, inside it. Text the agent wrote to
// look so only costs one more query (follow_log.cpp).
bool continued_into(std::string_view output, std::size_t first_at) {
    if (first_at == 0) return false;
    const std::string_view first_line = line_at(output, first_at);
    const std::string_view stamp_text = first_line.substr(0, first_line.find(' '));
    const std::size_t prev = output.rfind('\n', first_at - 2);  // the previous line's start
    const std::size_t from = prev == std::string_view::npos ? 0 : prev + 1;
    return output.substr(from, first_at - from).find(stamp_text) != std::string_view::npos;
}

}  // namespace

std::int64_t line_stamp(std::string_view line) {
    const std::size_t space = line.substr(0, kMaxStampBytes).find(' ');
    if (space == std::string_view::npos) return 0;
    return rfc3339_ns(line.substr(0, space));
}

std::int64_t oldest_stamp(std::string_view output) {
    std::int64_t first = 0;
    std::string ignored;
    for_each_line(output, ignored, [&](const Line& line) {
        first = line.ns;
        return false;
    });
    return first;
}

LogSelection select_lines(std::string_view output, bool cut, const LogWindow& window,
                          std::size_t budget) {
    LogSelection out;
    const bool since = window.since_ns != kNoTime;
    if (since) out.cursor = LogCursor{window.since_ns, window.since_seen};
    const std::size_t limit = window.lines != 0 ? window.lines : SIZE_MAX;
    // Where the last chosen line's stamp begins in this view.
    std::optional<std::size_t> chosen_group_at;
    const auto chose = [&](const Line& line) {
        out.cursor = LogCursor{line.ns, line.nth};
        chosen_group_at = line.group_at;
    };
    // Already answered by an earlier request: at or before the cursor.
    const auto sent = [&](const Line& line) {
        return line.ns < window.since_ns ||
               (line.ns == window.since_ns && line.nth <= window.since_seen);
    };

    if (since) {
        // Oldest first, from just after the cursor, until the budget or the
        // limit: whatever is left is `more`, for the next request.
        std::size_t taken = 0;
        bool stopped = false;
        const std::optional<Line> unfinished =
            for_each_line(output, out.untimed, [&](const Line& line) {
                if (sent(line)) return true;
                if (taken == limit || (taken > 0 && out.text.size() + line.text.size() > budget)) {
                    stopped = true;
                    return false;
                }
                out.text += shown(line.text, budget);
                chose(line);
                ++taken;
                return true;
            });
        // A view cut inside its first new line: that line's head, so a line
        // longer than the read limit cannot stop the log for good.
        if (taken == 0 && !stopped && cut && unfinished) {
            if (!sent(*unfinished)) {
                out.text = cut_line(unfinished->text, budget);
                chose(*unfinished);
            } else if (unfinished->ns == window.since_ns && window.since_ns < INT64_MAX) {
                // Its head was answered, and it is longer than the read
                // limit: the view must start past its first piece, or no
                // later line could ever be read. One nanosecond on: the
                // engine's next piece.
                out.cursor = LogCursor{window.since_ns + 1, 0};
            }
        }
        out.more = stopped || cut;
    } else {
        // The newest: keep the last `lines` of the view that fit the budget.
        std::deque<Line> kept;
        std::size_t bytes = 0;
        for_each_line(output, out.untimed, [&](const Line& line) {
            kept.push_back(line);
            bytes += line.text.size();
            while (kept.size() > limit || (kept.size() > 1 && bytes > budget)) {
                bytes -= kept.front().text.size();
                kept.pop_front();
            }
            return true;
        });
        for (const Line& line : kept) out.text += shown(line.text, budget);
        if (!kept.empty()) chose(kept.back());
        out.more = cut;
    }
    if (chosen_group_at && continued_into(output, *chosen_group_at)) {
        out.continued = true;
        out.group_first = std::string(line_at(output, *chosen_group_at));
    }
    return out;
}

std::optional<std::uint32_t> pieces_before(std::string_view view, std::int64_t ns,
                                           std::string_view group_first) {
    std::uint32_t before = 0;
    bool found = false;
    std::string ignored;
    for_each_line(view, ignored, [&](const Line& line) {
        if (line.text == group_first) {
            found = true;
            return false;
        }
        if (line.ns == ns) ++before;
        return true;
    });
    if (!found) return std::nullopt;
    return before;
}

std::string engine_since(std::int64_t cursor_ns) {
    const std::int64_t t = cursor_ns - 1;
    std::string stamp = sys::format_utc(t / 1000000000);  // "YYYY-MM-DDTHH:MM:SSZ"
    char frac[16];
    std::snprintf(frac, sizeof frac, ".%09lldZ", static_cast<long long>(t % 1000000000));
    stamp.pop_back();
    return stamp + frac;
}

}  // namespace hb::exec

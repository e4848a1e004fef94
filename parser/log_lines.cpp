#include "parser/log_lines.hpp"

#include <algorithm>
#include <deque>
#include <optional>

#include "ipc/rfc3339.hpp"

namespace hb::parser {
namespace {

// "2026-12-03T11:49:25.926492145+01:00" is 35 bytes: a stamp is never longer.
constexpr std::size_t kMaxStampBytes = 40;

struct Line {
    std::size_t at = 0;     // where it starts in the output
    std::string_view text;  // with its newline (none for an unfinished last line)
    std::int64_t ns = 0;
    std::uint32_t nth = 0;     // its place among the output's lines with this stamp, from 1
    std::size_t group_at = 0;  // where the output's first line with this stamp starts
};

// Appends [at, at + size) to `ranges`, joined to the last one when it
// follows it.
void add_range(std::vector<LogRange>& ranges, std::size_t at, std::size_t size) {
    const auto start = static_cast<std::uint32_t>(at);
    const auto end = static_cast<std::uint32_t>(at + size);
    if (!ranges.empty() && ranges.back().end == start) {
        ranges.back().end = end;
    } else {
        ranges.push_back(LogRange{start, end});
    }
}

struct Untimed {
    std::vector<LogRange>& ranges;
    std::size_t bytes = 0;
    void add(std::size_t at, std::size_t size) {
        if (bytes + size > kMaxLogUntimedBytes) return;
        if (ranges.size() == kMaxLogUntimedRanges && ranges.back().end != at) return;
        add_range(ranges, at, size);
        bytes += size;
    }
};

// Calls `each(Line)` for every complete stamped line, in order, until it
// returns false; unstamped ones go to `untimed`. Returns the unfinished
// last line, if it has a stamp (its text without a newline).
template <typename F>
std::optional<Line> for_each_line(std::string_view output, Untimed& untimed, F&& each) {
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
            return Line{at, text, ns, nth + 1, group_at};
        }
        const std::size_t line_at = at;
        at = end + 1;
        if (ns == 0) {
            untimed.add(line_at, text.size());
            continue;
        }
        if (!each(Line{line_at, text, ns, ++nth, group_at})) return std::nullopt;
    }
    return std::nullopt;
}

template <typename F>
std::optional<Line> for_each_line(std::string_view output, F&& each) {
    std::vector<LogRange> ignored;
    Untimed untimed{ignored};
    return for_each_line(output, untimed, each);
}

// How much of a line of `size` bytes, longer than the budget (or cut by the
// read limit), is shown: the head and its note together fit the budget.
std::size_t cut_keep(std::size_t size, std::size_t budget) {
    std::size_t keep = budget > 48 ? budget - 48 : 0;
    keep = std::min(keep, size);
    const std::size_t note_size = log_cut_note(size - keep).size();
    return std::min(keep, budget > note_size ? budget - note_size : 0);
}

// The complete line of `output` that starts at `at`, with its newline.
std::string_view line_at(std::string_view output, std::size_t at) {
    const std::size_t end = output.find('\n', at);
    return output.substr(at, end == std::string_view::npos ? std::string_view::npos : end + 1 - at);
}

// Whether the line just before the first line of a stamp (at `first_at`)
// holds a piece with that stamp: the engine wrote that piece's stamp,
// exactly as it wrote the first line's, inside it. Text the agent wrote to
// look so only costs one more query (engines/podman/follow_log.cpp).
bool continued_into(std::string_view output, std::size_t first_at) {
    if (first_at == 0) return false;
    const std::string_view first_line = line_at(output, first_at);
    const std::string_view stamp_text = first_line.substr(0, first_line.find(' '));
    const std::size_t prev = output.rfind('\n', first_at - 2);  // the previous line's start
    const std::size_t from = prev == std::string_view::npos ? 0 : prev + 1;
    return output.substr(from, first_at - from).find(stamp_text) != std::string_view::npos;
}

// The chosen text so far: its ranges, its size, and a cut line's whole size.
struct Chosen {
    LogSelection& out;
    std::size_t size = 0;
    // A complete line as answered: whole when it fits the budget, else cut.
    void add(const Line& line, std::size_t budget) {
        if (line.text.size() > budget) {
            cut(line, budget);
            return;
        }
        add_range(out.text, line.at, line.text.size());
        size += line.text.size();
    }
    void cut(const Line& line, std::size_t budget) {
        const std::size_t keep = cut_keep(line.text.size(), budget);
        out.text.assign(1, LogRange{static_cast<std::uint32_t>(line.at),
                                    static_cast<std::uint32_t>(line.at + keep)});
        out.cut = line.text.size();
        size = keep + log_cut_note(line.text.size() - keep).size();
    }
};

}  // namespace

std::int64_t line_stamp(std::string_view line) {
    const std::size_t space = line.substr(0, kMaxStampBytes).find(' ');
    if (space == std::string_view::npos) return 0;
    return rfc3339_ns(line.substr(0, space));
}

LogSelection select_lines(std::string_view output, bool cut, const LogWindow& window,
                          std::size_t budget) {
    LogSelection out;
    Chosen chosen{out};
    Untimed untimed{out.untimed};
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
        // limit: whatever is left is `more`, for the next request. A cut
        // line is alone (its head and note leave less than a line's room),
        // and so are more ranges than an answer holds (a budget of at most
        // kMaxLogAnswerBytes never needs them).
        std::size_t taken = 0;
        bool stopped = false;
        const std::optional<Line> unfinished =
            for_each_line(output, untimed, [&](const Line& line) {
                if (sent(line)) return true;
                if (taken == limit || (taken > 0 && chosen.size + line.text.size() > budget) ||
                    (taken > 0 && (out.cut != 0 || out.text.size() == kMaxLogTextRanges))) {
                    stopped = true;
                    return false;
                }
                chosen.add(line, budget);
                chose(line);
                ++taken;
                return true;
            });
        // A view cut inside its first new line: that line's head, so a line
        // longer than the read limit cannot stop the log for good.
        if (taken == 0 && !stopped && cut && unfinished) {
            if (!sent(*unfinished)) {
                chosen.cut(*unfinished, budget);
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
        for_each_line(output, untimed, [&](const Line& line) {
            kept.push_back(line);
            bytes += line.text.size();
            while (kept.size() > limit || (kept.size() > 1 && bytes > budget)) {
                bytes -= kept.front().text.size();
                kept.pop_front();
            }
            return true;
        });
        for (const Line& line : kept) chosen.add(line, budget);
        if (!kept.empty()) chose(kept.back());
        out.more = cut;
    }
    if (chosen_group_at && continued_into(output, *chosen_group_at)) {
        out.continued = true;
        const std::string_view first = line_at(output, *chosen_group_at);
        out.group_first = LogRange{static_cast<std::uint32_t>(*chosen_group_at),
                                   static_cast<std::uint32_t>(*chosen_group_at + first.size())};
    }
    return out;
}

std::string selected_text(std::string_view output, const LogSelection& selection) {
    std::string text;
    for (const LogRange& r : selection.text) text += output.substr(r.start, r.end - r.start);
    if (selection.cut != 0) text += log_cut_note(selection.cut - text.size());
    return text;
}

std::optional<std::uint32_t> pieces_before(std::string_view view, std::int64_t ns,
                                           std::string_view group_first) {
    std::uint32_t before = 0;
    bool found = false;
    for_each_line(view, [&](const Line& line) {
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

LogLinesAnswer answer_log_lines(std::string_view file, const LogLinesRequest& request) {
    LogLinesAnswer answer;
    switch (request.kind) {
        case LogLinesKind::Select: {
            LogSelection s = select_lines(file, request.cut, request.window, request.budget);
            answer.text = std::move(s.text);
            answer.untimed = std::move(s.untimed);
            answer.cut = static_cast<std::uint32_t>(s.cut);
            answer.cursor = s.cursor;
            answer.more = s.more;
            answer.continued = s.continued;
            answer.group = s.group_first;
            break;
        }
        case LogLinesKind::Pieces: {
            const auto pieces = pieces_before(file.substr(request.group_len), request.group_ns,
                                              file.substr(0, request.group_len));
            if (!pieces) answer.status = LogLinesStatus::NotFound;
            answer.value = pieces.value_or(0);
            break;
        }
    }
    return answer;
}

}  // namespace hb::parser

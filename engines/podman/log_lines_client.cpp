#include "engines/podman/log_lines_client.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include "executor/oneshot_reader.hpp"
#include "ipc/sys.hpp"
#include "ipc/unique_fd.hpp"

namespace hb::exec {
namespace {

// 16 MiB is walked in well under a second; the bound only keeps a hung
// reader from holding the drain (as inspect_client.cpp).
constexpr int kLogLinesTimeoutMs = reader_timeout_ms(10000, 60000);

// One round trip: the reader reads `request.size` bytes of `fd` from
// offset 0. Any answer but a well-formed one in the file is an error.
Result<LogLinesAnswer> ask(const std::string& parser_path, int fd, LogLinesKind kind,
                           std::size_t size, LogLinesRequest request = {}) {
    constexpr std::uint32_t kSeq = 1;
    request.kind = kind;
    request.size = static_cast<std::uint32_t>(size);
    if (::lseek(fd, 0, SEEK_SET) != 0) return make_error(sys::errno_text("lseek"));
    request.seq = kSeq;
    auto bytes = ask_oneshot_reader(
        parser_path,
        {"--log-lines", "the log-line reader", kLogLinesAnswerSize, kLogLinesTimeoutMs},
        encode_log_lines_request(request), fd);
    if (!bytes) return bytes.error();
    auto a = decode_log_lines_answer(*bytes, request.size);
    if (!a) return make_error("the log-line reader's answer was refused: " + a.error().message);
    // A selection, or (Pieces) nothing but the count.
    const bool fits = kind == LogLinesKind::Select
                          ? a->status == LogLinesStatus::Ok && a->value == 0
                          : a->text.empty() && a->untimed.empty() && a->cut == 0 && !a->more &&
                                !a->continued && a->cursor == LogCursor{} &&
                                a->value <= kMaxCursorSeen;
    if (a->seq != kSeq || !fits) return make_error("the log-line reader answered another request");
    return a;
}

Result<void> read_ranges(int fd, const std::vector<LogRange>& ranges, std::string& out) {
    for (const LogRange& r : ranges) {
        std::string part(r.end - r.start, '\0');
        if (::pread(fd, part.data(), part.size(), r.start) != static_cast<ssize_t>(part.size()))
            return make_error(sys::errno_text("cannot read the engine's log"));
        out += part;
    }
    return {};
}

}  // namespace

Result<LogSelection> select_in_sandbox(const std::string& parser_path, const LogView& view,
                                       const LogWindow& window, std::size_t budget) {
    LogLinesRequest request;
    request.cut = view.cut;
    request.window = window;
    request.budget = static_cast<std::uint32_t>(budget);
    auto a = ask(parser_path, view.fd, LogLinesKind::Select, view.size, request);
    if (!a) return a.error();
    LogSelection out;
    out.cursor = a->cursor;
    out.more = a->more;
    out.continued = a->continued;
    out.group = a->group;
    if (auto read = read_ranges(view.fd, a->text, out.text); !read) return read.error();
    if (a->cut != 0) out.text += log_cut_note(a->cut - out.text.size());
    if (auto read = read_ranges(view.fd, a->untimed, out.untimed); !read) return read.error();
    // The text within the budget, the cursor well-formed and not before
    // the window's.
    const LogCursor c = a->cursor;
    if (out.text.size() > budget || out.untimed.size() > kMaxLogUntimedBytes || c.ns < 0 ||
        c.seen > kMaxCursorSeen ||
        (window.since_ns != kNoTime &&
         (c.ns < window.since_ns || (c.ns == window.since_ns && c.seen < window.since_seen)))) {
        return make_error("the log-line reader's answer was refused: too long, or a bad cursor");
    }
    return out;
}

Result<std::optional<std::uint32_t>> pieces_in_sandbox(const std::string& parser_path,
                                                       const LogView& earlier, LogRange group,
                                                       const LogView& view, std::int64_t ns) {
    // One file for the reader: the line looked for, then the view.
    UniqueFd both(::memfd_create("hostbridge-log-pieces", MFD_CLOEXEC));
    std::string bytes;
    if (auto read = read_ranges(earlier.fd, {group}, bytes); !read) return read.error();
    const LogRange all{0, static_cast<std::uint32_t>(view.size)};
    if (auto read = read_ranges(view.fd, {all}, bytes); !read) return read.error();
    if (!both || !sys::write_all(both.get(), bytes)) return make_error(sys::errno_text("memfd"));
    LogLinesRequest request;
    request.group_ns = ns;
    request.group_len = group.end - group.start;
    auto a = ask(parser_path, both.get(), LogLinesKind::Pieces, bytes.size(), request);
    if (!a) return a.error();
    if (a->status == LogLinesStatus::NotFound) return std::optional<std::uint32_t>{};
    return std::optional<std::uint32_t>{static_cast<std::uint32_t>(a->value)};
}

}  // namespace hb::exec

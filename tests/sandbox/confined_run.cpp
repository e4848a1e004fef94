#include "tests/sandbox/confined_run.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include "ipc/sys.hpp"
#include "ipc/unique_fd.hpp"

namespace hb::sandbox::test {
namespace {

Error errno_error(const char* what) {
    return make_error(sys::errno_text(std::string("confining the step: ") + what));
}

// Printable ASCII as it is; anything else as \xNN (sys::escape_unprintable
// would double the backslashes an honest message already escaped with).
std::string shown_as_sent(const std::string& text) {
    const bool printable =
        std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
    return printable ? text : sys::escape_unprintable(text);
}

}  // namespace

Result<std::string> run_confined(const Confinement& confinement, std::size_t max_answer,
                                 const std::function<Result<std::string>()>& body, int* abi) {
    int ends[2];
    if (::pipe2(ends, O_CLOEXEC) != 0) return errno_error("pipe");
    UniqueFd from_child(ends[0]);
    UniqueFd to_parent(ends[1]);
    const pid_t pid = ::fork();
    if (pid < 0) return errno_error("fork");
    if (pid == 0) {
        // The answer: 'x' and why the child could not be confined, or the
        // ABI as one digit, then 'o' and the bytes or 'e' and the error.
        std::string answer;
        try {
            auto confined = confine_self(confinement, to_parent.get());
            if (!confined) {
                answer = "x" + confined.error().message;
            } else {
                auto result = body();
                answer = std::string(1, static_cast<char>('0' + *confined)) +
                         (result ? "o" + *result : "e" + result.error().message);
            }
        } catch (...) {
            answer = "xthe confined step threw";
        }
        const bool sent = sys::write_all(to_parent.get(), answer);
        ::_exit(sent ? 0 : 1);
    }
    sys::ChildGuard child(pid);
    to_parent.reset();
    std::string answer;
    // On these two errors the guard kills the child: one that says too
    // much may be blocked writing the rest, and waiting for it would hang.
    if (!sys::read_all(from_child.get(), answer, max_answer + 2)) {
        return errno_error("reading the confined step's answer");
    }
    if (answer.size() > max_answer + 2) return make_error("the confined step answered too much");
    int status = 0;
    if (sys::waitpid_retry(child.release(), &status) < 0) return errno_error("waitpid");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        return make_error(
            WIFSIGNALED(status)
                ? "the confined step died (signal " + std::to_string(WTERMSIG(status)) + ")"
                : "the confined step failed (exit " + std::to_string(WEXITSTATUS(status)) + ")");
    }
    if (!answer.empty() && answer[0] == 'x') {
        return make_error("the step could not be confined: " + shown_as_sent(answer.substr(1)));
    }
    if (answer.size() < 2 || answer[0] < '0' || answer[0] > '0' + kLandlockAbi ||
        (answer[1] != 'o' && answer[1] != 'e')) {
        return make_error("the confined step answered out of shape");
    }
    if (abi != nullptr) *abi = answer[0] - '0';
    if (answer[1] == 'e') return make_error(shown_as_sent(answer.substr(2)));
    return answer.substr(2);
}

}  // namespace hb::sandbox::test

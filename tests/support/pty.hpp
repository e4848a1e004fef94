// A child the test talks with while it runs: what it shows is read as it
// comes (wait for a question, for a line of a --follow), and an answer
// can be typed. On a pseudo-terminal, for a program that behaves
// differently there (asks "[y/N]", starts a pager, must not show raw
// bytes), or with its stdout on a pipe.
#pragma once

#include <chrono>
#include <string>

#include "tests/support/process.hpp"

namespace hb::test {

class Interactive {
  public:
    enum class Via {
        // stdin, stdout and stderr on a new pseudo-terminal, its controlling
        // terminal, in a session of its own (as forkpty(3) starts it).
        terminal,
        // stdout on a pipe; stdin and stderr as `command` says.
        pipe,
    };
    // Starts `command` (its in, out and err apply only as `via` says);
    // throws when it cannot.
    explicit Interactive(Command command, Via via = Via::terminal);
    ~Interactive();  // the child killed and reaped if still running
    Interactive(const Interactive&) = delete;
    Interactive& operator=(const Interactive&) = delete;

    // Reads until `text` was shown, the child closed its end, or `limit`
    // passed; whether `text` was shown.
    bool read_until(const std::string& text,
                    std::chrono::milliseconds limit = std::chrono::seconds(60));
    // Types `text` on its terminal (Via::terminal); throws when it cannot.
    void type(const std::string& text) const;
    // Reads what it still shows until it closes its end, then waits for it
    // (killed once `limit` passed): its exit code, or -signal.
    int finish(std::chrono::milliseconds limit = std::chrono::seconds(60));

    // Everything read so far (a terminal's line ends are "\r\n", and what
    // was typed is echoed).
    [[nodiscard]] const std::string& shown() const { return shown_; }
    [[nodiscard]] Child& child() { return child_; }

  private:
    // Appends what arrives before `deadline`; false once the child closed
    // its end or the deadline passed.
    bool read_some(std::chrono::steady_clock::time_point deadline);

    int fd_ = -1;  // the terminal's master side, or the pipe's read end
    Child child_;
    std::string shown_;
};

}  // namespace hb::test

// Runs a body in a forked child confined by sandbox/confine.hpp and
// returns what it returned, as values over a pipe, for the confinement's
// tests (test_confine.cpp): hostbridge-snapshot confines itself the same
// way (snapshot/serve.cpp). An error also when the child could not be
// confined, died, or answered more or out of shape; an error's text is shown
// as the child sent it only when it is printable ASCII (else each other byte
// as \xNN). `abi`, when given, receives the Landlock ABI the child ran under.
// Call it with one thread: a child forked while another thread holds a lock
// (the sanitizers' allocator's) waits for ever.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "ipc/result.hpp"
#include "sandbox/confine.hpp"

namespace hb::sandbox::test {

Result<std::string> run_confined(const Confinement& confinement, std::size_t max_answer,
                                 const std::function<Result<std::string>()>& body,
                                 int* abi = nullptr);

}  // namespace hb::sandbox::test

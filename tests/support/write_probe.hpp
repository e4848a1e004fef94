// What a confined step must not be able to do to the person's files, tried
// for real (sandbox/confine.hpp): each way of writing, creating, removing,
// renaming, linking, truncating or re-permissioning a file in a directory
// that stands for the home, one attempt each. The sandbox tests run it
// confined and unconfined; the snapshot test runs it inside the copy's
// child (tests/executor/test_build_snapshot.cpp).
#pragma once

#include <string>
#include <vector>

namespace hb::test {

struct WriteAttempt {
    std::string what;  // "create home/new", ...
    int error = 0;     // errno of the attempt; 0: it succeeded
};

// Tries every write below on `home`, which must hold the files `secret`
// and `movable` and a directory `dir` (prepare_probe_home makes them).
std::vector<WriteAttempt> try_writes(const std::string& home);
void prepare_probe_home(const std::string& home);
// Whether `home` is as prepare_probe_home left it: nothing created,
// removed, renamed, truncated, re-permissioned or given an xattr.
bool probe_home_untouched(const std::string& home);

// One line per attempt ("<errno> <what>"), and back.
std::string encode_attempts(const std::vector<WriteAttempt>& attempts);
std::vector<WriteAttempt> decode_attempts(const std::string& text);

}  // namespace hb::test

// The one "plain relative path" rule: what the integrity gate, the spool,
// the build snapshot, `bridge.json`'s paths, the admin tool's spool and
// stack checks and the host request clients accept as a path beneath a
// directory. Plain means that a prefix test is enough to say where it
// points: no component may climb ("..") or name the same place twice
// (empty or "."), so there is one spelling per path. A NUL is refused too:
// the kernel would end the path there. Linked by both processes.
#pragma once

#include <cstdint>
#include <string_view>

namespace hb {

// The first thing wrong with a path, in the order checked; None when it is
// plain.
enum class PathProblem : std::uint8_t {
    None,
    Empty,      // the whole path is ""
    Absolute,   // it begins with '/'
    EmptyPart,  // an empty component: "a//b", a trailing '/'
    Dot,        // a "." component
    DotDot,     // a ".." component
    Nul,        // a NUL byte in a component
};

// `components` split on '/': the first component that is empty, ".", ".."
// or holds a NUL ("" is one empty component). For the part of an absolute
// path after its leading '/'.
PathProblem component_problem(std::string_view components);

// A relative path: Empty, Absolute, else component_problem.
PathProblem relative_path_problem(std::string_view path);

// relative_path_problem(path) == None: "a", "a/b.c", "..a"; never "",
// "/a", "a/", "a//b", "./a", "a/..".
bool is_plain_relative(std::string_view path);

// One component: is_plain_relative and no '/' ("x", ".x"; never "", ".",
// "..", "a/b").
bool is_plain_name(std::string_view name);

}  // namespace hb

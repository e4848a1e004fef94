// The one "plain relative path" rule (ipc/path_component.hpp), every edge
// the six places that once spelled it out checked.
#include <gtest/gtest.h>

#include <string>

#include "ipc/path_component.hpp"

namespace hb {
namespace {

using P = PathProblem;

TEST(PathComponent, PlainRelativePaths) {
    for (std::string_view path : {"a", "a/b", "a/b/c.txt", "..a", "a..", "...", ".git/x", "a/.b",
                                  "untracked/hostbridge", "-", "a b/c"}) {
        EXPECT_EQ(relative_path_problem(path), P::None) << path;
        EXPECT_TRUE(is_plain_relative(path)) << path;
    }
}

TEST(PathComponent, EveryRefusalNamesItsReason) {
    EXPECT_EQ(relative_path_problem(""), P::Empty);
    EXPECT_EQ(relative_path_problem("/"), P::Absolute);
    EXPECT_EQ(relative_path_problem("/a"), P::Absolute);
    EXPECT_EQ(relative_path_problem("a/"), P::EmptyPart);  // a trailing slash
    EXPECT_EQ(relative_path_problem("a//b"), P::EmptyPart);
    EXPECT_EQ(relative_path_problem("."), P::Dot);
    EXPECT_EQ(relative_path_problem("./a"), P::Dot);
    EXPECT_EQ(relative_path_problem("a/./b"), P::Dot);
    EXPECT_EQ(relative_path_problem("a/."), P::Dot);
    EXPECT_EQ(relative_path_problem(".."), P::DotDot);
    EXPECT_EQ(relative_path_problem("../a"), P::DotDot);
    EXPECT_EQ(relative_path_problem("a/../b"), P::DotDot);
    EXPECT_EQ(relative_path_problem("a/.."), P::DotDot);
    EXPECT_EQ(relative_path_problem(std::string_view("a\0b", 3)), P::Nul);
    EXPECT_EQ(relative_path_problem(std::string_view("a/\0", 3)), P::Nul);
    EXPECT_EQ(relative_path_problem(std::string_view("\0", 1)), P::Nul);
    for (std::string_view path : {"", "/", "/a", "a/", "a//b", ".", "./a", "..", "a/.."})
        EXPECT_FALSE(is_plain_relative(path)) << path;
}

// The first bad component decides, so `bridge.json` names the one a person
// must fix first (common/config.cpp).
TEST(PathComponent, TheFirstBadComponentDecides) {
    EXPECT_EQ(relative_path_problem("../a//b"), P::DotDot);
    EXPECT_EQ(relative_path_problem("a//../b"), P::EmptyPart);
    EXPECT_EQ(relative_path_problem("./.."), P::Dot);
}

// After an absolute path's leading '/': "" is one empty component, and a
// second leading '/' an empty one too.
TEST(PathComponent, ComponentsOfAnAbsolutePath) {
    EXPECT_EQ(component_problem("usr/lib"), P::None);
    EXPECT_EQ(component_problem(""), P::EmptyPart);
    EXPECT_EQ(component_problem("/usr"), P::EmptyPart);
    EXPECT_EQ(component_problem("usr/"), P::EmptyPart);
    EXPECT_EQ(component_problem("usr/../etc"), P::DotDot);
    EXPECT_EQ(component_problem("./usr"), P::Dot);
}

TEST(PathComponent, OneName) {
    for (std::string_view name : {"x", ".x", "..x", "snapshot-1"})
        EXPECT_TRUE(is_plain_name(name)) << name;
    for (std::string_view name : {"", ".", "..", "a/b", "/a", "a/"})
        EXPECT_FALSE(is_plain_name(name)) << name;
    EXPECT_FALSE(is_plain_name(std::string_view("a\0", 2)));
}

}  // namespace
}  // namespace hb

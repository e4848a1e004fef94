// How a FROM or COPY --from reference compares with the images bridge.json
// allows (ipc/image_ref.hpp, docs/BUILDS.md "What a build may name").
#include <gtest/gtest.h>

#include <string>

#include "ipc/image_ref.hpp"

namespace hb {
namespace {

std::string canon(std::string_view ref) {
    return canonical_image_ref(ref).value_or("(refused)");
}

const std::string kHex(64, 'c');

TEST(ImageRef, NamesAreMadeCanonical) {
    EXPECT_EQ(canon("alpine"), "alpine:latest");
    EXPECT_EQ(canon("alpine:3.20"), "alpine:3.20");
    EXPECT_EQ(canon("library/alpine"), "library/alpine:latest");  // still short
    EXPECT_EQ(canon("docker.io/alpine"), "docker.io/library/alpine:latest");
    EXPECT_EQ(canon("index.docker.io/alpine:3"), "docker.io/library/alpine:3");
    EXPECT_EQ(canon("docker.io/library/alpine"), "docker.io/library/alpine:latest");
    EXPECT_EQ(canon("docker.io/bitnami/redis:7.2"), "docker.io/bitnami/redis:7.2");
    EXPECT_EQ(canon("localhost/app_web"), "localhost/app_web:latest");
    EXPECT_EQ(canon("localhost:5000/team/base:1.2"), "localhost:5000/team/base:1.2");
    EXPECT_EQ(canon("quay.io/podman/stable:v4.3.1"), "quay.io/podman/stable:v4.3.1");
    EXPECT_EQ(canon("node:20-bookworm-slim"), "node:20-bookworm-slim");
    EXPECT_EQ(canon("my-app__x.y"), "my-app__x.y:latest");
    // A digest decides: a tag beside it is dropped.
    EXPECT_EQ(canon("alpine@sha256:" + kHex), "alpine@sha256:" + kHex);
    EXPECT_EQ(canon("alpine:3@sha256:" + kHex), "alpine@sha256:" + kHex);
    EXPECT_EQ(canon("docker.io/alpine@sha256:" + kHex), "docker.io/library/alpine@sha256:" + kHex);
}

TEST(ImageRef, IdsAreTheirOwnKind) {
    EXPECT_EQ(canon(kHex), "sha256:" + kHex);
    EXPECT_EQ(canon("sha256:" + kHex), "sha256:" + kHex);
    // Hex alone is the prefix of some image's id to podman's lookup.
    for (const char* prefix : {"0", "1", "cafe", "deadbeef", "abc123", "ccccccccccccc"})
        EXPECT_EQ(canon(prefix), "(refused)") << prefix;
    EXPECT_EQ(canon(kHex.substr(1)), "(refused)");
    // With a tag or a path it is a name again.
    EXPECT_EQ(canon("cafe:1"), "cafe:1");
    EXPECT_EQ(canon("localhost/cafe"), "localhost/cafe:latest");
}

TEST(ImageRef, AnythingElseIsRefused) {
    for (const char* bad : {"",
                            "Alpine",
                            "docker.io/Library/alpine",
                            "ALPINE:3",
                            "Quay.io/x/y",
                            "alpine:",
                            ":3",
                            "alpine:-x",
                            "alpine@",
                            "alpine@sha256:abc",
                            "alpine@sha512:abc",
                            "/alpine",
                            "alpine/",
                            "a//b",
                            "a/-b",
                            "a/b-",
                            "a...b",
                            "a___b",
                            "docker://alpine",
                            "oci:/x",
                            "a b",
                            "a\tb",
                            "a$b",
                            "a'b",
                            "a\"b",
                            "a\\b",
                            "a`b",
                            "localhost:/x",
                            "localhost:99999/x",
                            "-a/b",
                            "x.io:5000a/b"}) {
        EXPECT_EQ(canon(bad), "(refused)") << bad;
    }
    EXPECT_EQ(canon("a:" + std::string(129, 't')), "(refused)");
    EXPECT_EQ(canon("a/" + std::string(260, 'x')), "(refused)");
}

TEST(ImageRef, AShortNameMatchesItsLocalAndDockerHubNames) {
    const auto match = [](std::string_view a, std::string_view b) {
        return image_refs_match(canon(a), canon(b)) && image_refs_match(canon(b), canon(a));
    };
    EXPECT_TRUE(match("alpine", "docker.io/library/alpine:latest"));
    EXPECT_TRUE(match("alpine", "alpine:latest"));
    EXPECT_TRUE(match("alpine", "localhost/alpine"));
    EXPECT_TRUE(match("library/alpine", "docker.io/library/alpine"));
    EXPECT_TRUE(match("bitnami/redis:7", "docker.io/bitnami/redis:7"));
    EXPECT_TRUE(match("app_web", "localhost/app_web:latest"));
    EXPECT_TRUE(match("alpine@sha256:" + kHex, "docker.io/library/alpine@sha256:" + kHex));

    EXPECT_FALSE(match("alpine", "alpine:3.20"));  // the default tag is latest
    EXPECT_FALSE(match("alpine:3.20", "alpine:3.2"));
    EXPECT_FALSE(match("alpine", "alpine@sha256:" + kHex));  // a tag allows no digest
    EXPECT_FALSE(match("alpine", "quay.io/alpine"));
    EXPECT_FALSE(match("alpine", "docker.io/other/alpine"));
    EXPECT_FALSE(match("localhost/alpine", "docker.io/library/alpine"));  // both qualified
    EXPECT_FALSE(match("secret", "localhost/app_web"));
    EXPECT_FALSE(match("library/alpine", "localhost/alpine"));
    EXPECT_FALSE(match(kHex, "alpine"));
    EXPECT_FALSE(match(kHex, std::string(64, 'd')));
    EXPECT_TRUE(match(kHex, "sha256:" + kHex));
}

}  // namespace
}  // namespace hb

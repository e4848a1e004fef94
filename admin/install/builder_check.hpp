// What `doctor` says about the engine that builds (docs/BUILDS.md): its name
// and version, and, for a podman older than the upstream fixes of the two
// buildah escapes the snapshot and the screen stand in for, that nothing
// else does; for docker, a version no test ran. A version says nothing of a distribution's
// backports, so the note says "unless your distribution backported them".
#pragma once

#include <optional>
#include <string>

namespace hb::admin {

// The docker engine the tests run (docs/DOCKER.md, "The docker the tests
// run"); doctor names any other.
inline constexpr const char* kTestedDocker = "26.1.5";

struct BuilderReport {
    std::string line;                 // "builder: podman 4.3.1 (buildah inside)"
    std::optional<std::string> note;  // the CVE note, when the version predates the fixes
};

// `engine`: bridge.json's build.engine; `version`: what `ENGINE version`
// printed (trimmed): podman's client, docker's daemon (`{{.Server.Version}}`).
BuilderReport describe_builder(const std::string& engine, const std::string& version);

// True when `version` ("4.3.1", "5.2.5-rc1") is older than major.minor.patch;
// false when it cannot be read.
bool version_before(const std::string& version, int major, int minor, int patch);

}  // namespace hb::admin

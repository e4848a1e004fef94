#include "admin/install/builder_check.hpp"

#include <array>
#include <cstdio>

namespace hb::admin {

bool version_before(const std::string& version, int major, int minor, int patch) {
    std::array<int, 3> v{};
    if (std::sscanf(version.c_str(), "%d.%d.%d", &v[0], &v[1], &v[2]) != 3) return false;
    const std::array<int, 3> want{major, minor, patch};
    return v < want;
}

BuilderReport describe_builder(const std::string& engine, const std::string& version) {
    const std::string name = engine.substr(engine.rfind('/') + 1);
    BuilderReport r;
    if (name != "podman") {
        r.line = "builder: " + name + " " + version +
                 " (BuildKit: the buildah escapes below do not apply); builds run from "
                 "snapshots screened in the sandbox";
        // Debian's "26.1.5+dfsg1": the upstream version is what a test ran.
        const std::string upstream = version.substr(0, version.find_first_of("+-~"));
        if (name == "docker" && upstream != kTestedDocker)
            r.note = "no test ran docker " + version + ": the tests run docker " +
                     std::string(kTestedDocker) +
                     " (Debian 13's; docs/DOCKER.md), so nothing measured says how this one "
                     "builds, mounts or pulls";
        return r;
    }
    r.line = "builder: podman " + version +
             " (buildah inside); builds run from snapshots screened in the sandbox";
    // Upstream: CVE-2024-1753 fixed in podman 5.0.1 (buildah 1.35.1),
    // CVE-2024-9675 in podman 5.2.5 (buildah 1.37.5).
    if (version_before(version, 5, 2, 5)) {
        r.note = "podman " + version +
                 " predates the upstream fixes for CVE-2024-1753 (podman 5.0.1) and "
                 "CVE-2024-9675 (podman 5.2.5); unless your distribution backported them "
                 "(Debian 12's 4.3.1 has neither), only the snapshot and the Containerfile "
                 "screen stand between the agent and the host at a rebuild";
    }
    return r;
}

}  // namespace hb::admin

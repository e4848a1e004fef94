// screen-verdicts [--buildkit] [--allow REF]... FILE...: prints, for each FILE, the
// Containerfile screen's verdict as `<reason> <line> <flag> FILE` (the wire
// numbers of ipc/screen_wire.hpp; 0 0 0 = accepted), with the REFs as the
// images a build may name (bridge.json's base images, ipc/image_ref.hpp).
// Test-only: tests/e2e/screen_cases.sh builds what it accepts with the real
// podman. The shipped binaries have no such mode (the executor screens
// through hostbridge-parser --screen's socket).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "ipc/image_ref.hpp"
#include "parser/containerfile_screen.hpp"

int main(int argc, char** argv) {
    std::vector<std::string> allowed;
    int i = 1;
    // --buildkit: read as docker's BuildKit reads (tests/e2e/docker_build_cases.sh).
    const bool buildkit = argc > 1 && std::strcmp(argv[1], "--buildkit") == 0;
    if (buildkit) ++i;
    for (; i + 1 < argc && std::strcmp(argv[i], "--allow") == 0; i += 2) {
        const auto ref = hb::canonical_image_ref(argv[i + 1]);
        if (!ref) {
            std::fprintf(stderr, "screen-verdicts: not an image reference: %s\n", argv[i + 1]);
            return 64;
        }
        allowed.push_back(*ref);
    }
    std::sort(allowed.begin(), allowed.end());
    allowed.erase(std::unique(allowed.begin(), allowed.end()), allowed.end());
    if (i >= argc) {
        std::fprintf(stderr, "usage: screen-verdicts [--buildkit] [--allow REF]... FILE...\n");
        return 64;
    }
    for (; i < argc; ++i) {
        std::ifstream in(argv[i], std::ios::binary);
        if (!in) {
            std::fprintf(stderr, "screen-verdicts: cannot read %s\n", argv[i]);
            return 66;
        }
        const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
        const hb::ScreenVerdict v = hb::parser::screen_containerfile(
            bytes, allowed,
            buildkit ? hb::parser::Builder::BuildKit : hb::parser::Builder::Buildah);
        std::printf("%d %u %d %s\n", static_cast<int>(v.reason), v.line, static_cast<int>(v.flag),
                    argv[i]);
    }
    return 0;
}

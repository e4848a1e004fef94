// screen-verdicts FILE...: prints, for each FILE, the Containerfile screen's
// verdict as `<reason> <line> <flag> FILE` (the wire numbers of
// ipc/screen_wire.hpp; 0 0 0 = accepted). Test-only: tests/e2e/screen_cases.sh
// builds what it accepts with the real podman. The shipped binaries have no
// such mode (the executor screens through hostbridge-parser --screen's socket).
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

#include "parser/containerfile_screen.hpp"

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: screen-verdicts FILE...\n");
        return 64;
    }
    for (int i = 1; i < argc; ++i) {
        std::ifstream in(argv[i], std::ios::binary);
        if (!in) {
            std::fprintf(stderr, "screen-verdicts: cannot read %s\n", argv[i]);
            return 66;
        }
        const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
        const hb::ScreenVerdict v = hb::parser::screen_containerfile(bytes);
        std::printf("%d %u %d %s\n", static_cast<int>(v.reason), v.line, static_cast<int>(v.flag),
                    argv[i]);
    }
    return 0;
}

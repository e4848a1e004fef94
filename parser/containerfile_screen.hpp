// The screen a Containerfile passes before the bridge lets podman build it:
// a pure function over its bytes (no I/O, no clock, no globals) that reads
// them the way Debian 12's buildah 1.28 (imagebuilder's Dockerfile parser)
// does, and refuses whatever would let the build reach the host, and
// whatever it cannot read with certainty. It rests on what was measured of
// podman 4.3.1 / buildah 1.28 (docs/BUILDS.md, "What the builder does")
// and on imagebuilder's parser at the commit buildah 1.28 vendors
// (4151e43600df). The verdict is a few small integers (its vocabulary is
// ipc/screen_wire.hpp, which the executor reads too); the executor prints
// "Containerfile line N: <flag name>: <reason text>".
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ipc/screen_wire.hpp"

namespace hb::parser {

// buildah reads a Containerfile with Go's bufio.Scanner and never checks its
// error: at the first line longer than this it silently stops reading, and
// builds what it has read so far. Longer lines are refused.
inline constexpr std::size_t kMaxContainerfileLineBytes = 65535;

// Whose reading the screen holds a file to. BuildKit's (docker 26's
// built-in Dockerfile frontend, buildx 0.13) is buildah's and more: a
// `# syntax=` line refused, every `<<` a heredoc (docs/DOCKER.md, "What
// BuildKit does with a Dockerfile").
enum class Builder { Buildah, BuildKit };

// Screens a whole Containerfile. `allowed` are the images a FROM or COPY
// --from may name besides earlier stages and `FROM scratch`: canonical,
// sorted, unique (ipc/image_ref.hpp; the executor's ScreenRequest). Never
// throws; allocates one buffer of at most the input's size, reused for
// every instruction, and a copy of each stage name.
ScreenVerdict screen_containerfile(std::span<const std::uint8_t> bytes,
                                   std::span<const std::string> allowed,
                                   Builder builder = Builder::Buildah) noexcept;

// The admin tool's reading, on the host (install and upgrade record what
// an install's Containerfiles name, admin/install/base_images.hpp): the same
// screen, but every image a FROM or COPY --from names other than a stage or
// scratch is collected, canonical, sorted and unique, instead of refused.
// The verdict is the screen's otherwise (a name with no canonical form is
// still ImageNotAllowed).
struct NamedImages {
    ScreenVerdict verdict;
    std::vector<std::string> images;
};
NamedImages containerfile_images(std::span<const std::uint8_t> bytes) noexcept;

}  // namespace hb::parser

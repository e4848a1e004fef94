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
#include <string_view>

#include "ipc/screen_wire.hpp"

namespace hb::parser {

// buildah reads a Containerfile with Go's bufio.Scanner and never checks its
// error: at the first line longer than this it silently stops reading, and
// builds what it has read so far. Longer lines are refused.
inline constexpr std::size_t kMaxContainerfileLineBytes = 65535;

// Screens a whole Containerfile. Never throws; allocates one buffer of at
// most the input's size, reused for every instruction (linear time).
ScreenVerdict screen_containerfile(std::span<const std::uint8_t> bytes) noexcept;

}  // namespace hb::parser

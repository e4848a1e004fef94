// How the bridge compares image references: a build's FROM and COPY --from
// against the images bridge.json allows (its services' own tags and the
// person's `--base-image`s), docs/BUILDS.md, "What a build may name".
//
// A reference is made canonical first, or refused:
//   - an image id, `<64 hex>` or `sha256:<64 hex>`, is `sha256:<64 hex>`;
//   - a name is `[DOMAIN/]PATH` then `:TAG` (default `latest`) or
//     `@sha256:<64 hex>` (a tag next to a digest is dropped: the digest
//     decides); `index.docker.io` is `docker.io`, and `docker.io/x` is
//     `docker.io/library/x`. A name without a domain stays short.
// Refused (nullopt): anything outside the grammar below, upper case outside a
// tag, a transport (`docker://`, `oci:`...), and a short name made only of
// hex digits (podman's lookup takes it as a prefix of any image's id).
//
// Two canonical references match when equal, or when one is short, PATH,
// and the other is `localhost/PATH` or `docker.io/PATH` (library/ added):
// podman 4.3 resolves a short name in its store as localhost/PATH first,
// then through the search registries (docker.io on Debian 12).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace hb {

// The longest canonical reference the bridge records or sends (a u8 length
// on the screen's wire, ipc/screen_wire.hpp).
inline constexpr std::size_t kMaxImageRefBytes = 255;

std::optional<std::string> canonical_image_ref(std::string_view ref);

// Both arguments canonical (canonical_image_ref's answers).
bool image_refs_match(std::string_view a, std::string_view b);

}  // namespace hb

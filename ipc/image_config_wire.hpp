// The image-config reader's vocabulary and its two fixed-size messages.
//
// With an engine user (docs/ENGINE-USER.md) buildah cannot see the engine's
// store, so a base image's ONBUILD triggers are read from its config as the
// engine hands it out: `podman save --format docker-archive` (a row of
// engines/argv_table.cpp), one tar file the client writes as it comes,
// nothing extracted. The archive and the config in it are the engine's and
// the image author's, so the executor reads neither: a fresh
// `hostbridge-parser --image-config`, locked down as the request parser is,
// walks the tar through the fd the executor attaches and answers a count
// (engines/podman/image_config_client.cpp).
//
//   ImageConfigRequest (8 bytes):  0 u32 magic "HBC1"   4 u32 seq
//   ImageConfigAnswer (16 bytes):  0 u32 magic   4 u32 seq   8 u8 status
//                                  9..11 zero   12 u32 triggers
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "ipc/result.hpp"

namespace hb {

// An image config is a few KiB (its history grows it); anything larger is
// refused unread past this.
inline constexpr std::size_t kMaxImageConfigBytes = 4u << 20;
// More triggers than any image needs: a larger count is refused as garbage.
inline constexpr std::uint32_t kMaxImageTriggers = 10000;
inline constexpr std::size_t kImageConfigRequestSize = 8;
inline constexpr std::size_t kImageConfigAnswerSize = 16;
inline constexpr std::uint32_t kImageConfigMagic = 0x48424331;  // "HBC1"

// Wire values fixed (one byte each); append only.
enum class ImageConfigStatus : std::uint8_t {
    Ok = 0,
    TooLarge = 1,  // over kMaxImageConfigBytes
    NotJson = 2,   // not JSON, or nested deeper than any image config
    // Not an object, or config / config.OnBuild of the wrong kind, or an
    // OnBuild entry that is not a string.
    BadShape = 3,
    // The archive is not a tar podman's writer makes: a header out of
    // shape, a bad checksum, an entry cut short.
    BadArchive = 4,
    // The archive holds no top-level <64 hex>.json, or more than one.
    NotOneConfig = 5,
};
inline constexpr ImageConfigStatus kLastImageConfigStatus = ImageConfigStatus::NotOneConfig;

std::string_view image_config_status_text(ImageConfigStatus status);

struct ImageConfigAnswer {
    std::uint32_t seq = 0;
    ImageConfigStatus status = ImageConfigStatus::Ok;
    std::uint32_t triggers = 0;  // entries of config.OnBuild; 0 unless Ok
    bool operator==(const ImageConfigAnswer&) const = default;
};

std::array<std::uint8_t, kImageConfigRequestSize> encode_image_config_request(std::uint32_t seq);
Result<std::uint32_t> decode_image_config_request(std::span<const std::uint8_t> bytes);

std::array<std::uint8_t, kImageConfigAnswerSize> encode_image_config_answer(
    const ImageConfigAnswer& answer);
// Refuses a wrong size or magic, nonzero padding, a status out of range, a
// count with a failed status and a count over kMaxImageTriggers.
Result<ImageConfigAnswer> decode_image_config_answer(std::span<const std::uint8_t> bytes);

}  // namespace hb

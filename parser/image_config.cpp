#include "parser/image_config.hpp"

#include <nlohmann/json.hpp>

#include <string_view>

#include "ipc/json_depth.hpp"

namespace hb::parser {
namespace {

using nlohmann::json;

// An image config is a few levels deep; a deeper one is not an engine's,
// and nlohmann's parser recurses per level.
constexpr std::size_t kMaxDepth = 16;

ImageConfigAnswer failed(std::uint32_t seq, ImageConfigStatus status) {
    return ImageConfigAnswer{seq, status, 0};
}

}  // namespace

ImageConfigAnswer read_image_config(std::span<const std::uint8_t> bytes, std::uint32_t seq) {
    if (bytes.size() > kMaxImageConfigBytes) return failed(seq, ImageConfigStatus::TooLarge);
    const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    if (!json_depth_within(text, kMaxDepth)) return failed(seq, ImageConfigStatus::NotJson);
    const json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) return failed(seq, ImageConfigStatus::NotJson);
    if (!doc.is_object()) return failed(seq, ImageConfigStatus::BadShape);
    const auto config = doc.find("config");
    if (config == doc.end() || config->is_null()) return ImageConfigAnswer{seq, {}, 0};
    if (!config->is_object()) return failed(seq, ImageConfigStatus::BadShape);
    const auto onbuild = config->find("OnBuild");
    if (onbuild == config->end() || onbuild->is_null()) return ImageConfigAnswer{seq, {}, 0};
    if (!onbuild->is_array() || onbuild->size() > kMaxImageTriggers)
        return failed(seq, ImageConfigStatus::BadShape);
    for (const json& trigger : *onbuild) {
        if (!trigger.is_string()) return failed(seq, ImageConfigStatus::BadShape);
    }
    return ImageConfigAnswer{seq, ImageConfigStatus::Ok,
                             static_cast<std::uint32_t>(onbuild->size())};
}

}  // namespace hb::parser

// The build-input screen wire's shared half: the one rule both ends hold the
// request's image list to. The executor's half is ipc/screen_wire_executor.cpp,
// the parser's ipc/screen_wire_parser.cpp.
#include "ipc/screen_wire.hpp"

namespace hb {

Result<void> check_screen_images(const std::vector<std::string>& images) {
    if (images.size() > kMaxScreenImages) return make_error("screen request: too many images");
    for (std::size_t i = 0; i < images.size(); ++i) {
        const std::string& image = images[i];
        if (image.empty() || image.size() > kMaxImageRefBytes)
            return make_error("screen request: an image of a wrong length");
        if (canonical_image_ref(image) != image)
            return make_error("screen request: an image not in canonical form");
        if (i > 0 && images[i - 1] >= image)
            return make_error("screen request: images out of order or repeated");
    }
    return {};
}

}  // namespace hb

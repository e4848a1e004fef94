// The image-config wire's shared half: its status words. The executor's half
// is ipc/image_config_wire_executor.cpp, the parser's
// ipc/image_config_wire_parser.cpp.
#include "ipc/image_config_wire.hpp"

namespace hb {

std::string_view image_config_status_text(ImageConfigStatus status) {
    switch (status) {
        case ImageConfigStatus::Ok:
            return "ok";
        case ImageConfigStatus::TooLarge:
            return "the image config is larger than the reader reads";
        case ImageConfigStatus::NotJson:
            return "the image config is not JSON";
        case ImageConfigStatus::BadShape:
            return "the image config is not shaped as an image config";
        case ImageConfigStatus::BadArchive:
            return "the saved image is not a tar archive as podman writes one";
        case ImageConfigStatus::NotOneConfig:
            return "the saved image holds no config file, or more than one";
    }
    return "unknown status";
}

}  // namespace hb

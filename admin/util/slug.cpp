#include "admin/util/slug.hpp"

namespace hb::admin {

std::string derive_slug(std::string_view project_dir) {
    while (project_dir.size() > 1 && project_dir.back() == '/') project_dir.remove_suffix(1);
    auto slash = project_dir.rfind('/');
    std::string_view base =
        slash == std::string_view::npos ? project_dir : project_dir.substr(slash + 1);
    std::string slug;
    for (char c : base) {
        // A UTF-8 continuation byte belongs to the character already replaced.
        if ((static_cast<unsigned char>(c) & 0xC0) == 0x80) continue;
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        bool keep = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
        slug.push_back(keep ? c : '-');
    }
    return slug;
}

}  // namespace hb::admin

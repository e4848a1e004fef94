#include "ipc/pin_paths.hpp"

#include <climits>

#include "ipc/path_component.hpp"

namespace hb {

bool is_checkout_path(std::string_view path) {
    return path == "." || (path.size() < PATH_MAX && is_plain_relative(path));
}

bool is_container_path(std::string_view path) {
    if (path.empty() || path[0] != '/' || path.size() >= PATH_MAX) return false;
    for (const char c : path) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
    }
    return path == "/" || component_problem(path.substr(1)) == PathProblem::None;
}

std::string bind_pin_root(std::string_view run_dir) {
    return std::string(run_dir) + "/.hostbridge-binds";
}

std::string bind_pin_path(std::string_view run_dir, std::string_view rel) {
    std::string name;
    if (rel == ".") {
        name = "%2E";
    } else {
        for (char c : rel) {
            if (c == '%') {
                name += "%25";
            } else if (c == '/') {
                name += "%2F";
            } else {
                name += c;
            }
        }
    }
    return bind_pin_root(run_dir) + "/" + name;
}

}  // namespace hb

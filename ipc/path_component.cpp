#include "ipc/path_component.hpp"

namespace hb {

PathProblem component_problem(std::string_view components) {
    for (std::size_t start = 0;;) {
        const std::size_t slash = components.find('/', start);
        const std::string_view part = components.substr(start, slash - start);
        if (part.empty()) return PathProblem::EmptyPart;
        if (part == ".") return PathProblem::Dot;
        if (part == "..") return PathProblem::DotDot;
        if (part.find('\0') != std::string_view::npos) return PathProblem::Nul;
        if (slash == std::string_view::npos) return PathProblem::None;
        start = slash + 1;
    }
}

PathProblem relative_path_problem(std::string_view path) {
    if (path.empty()) return PathProblem::Empty;
    if (path.front() == '/') return PathProblem::Absolute;
    return component_problem(path);
}

bool is_plain_relative(std::string_view path) {
    return relative_path_problem(path) == PathProblem::None;
}

bool is_plain_name(std::string_view name) {
    return name.find('/') == std::string_view::npos && is_plain_relative(name);
}

}  // namespace hb

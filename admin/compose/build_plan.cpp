#include "admin/compose/build_plan.hpp"

#include <sys/stat.h>

#include <algorithm>

#include "admin/util/fs_util.hpp"
#include "common/sha256.hpp"

namespace hb::admin {
namespace {

// The names podman-compose 1.0.3 tries, in its order, when `dockerfile` is
// not given (docker compose looks for Dockerfile only).
constexpr const char* kDefaultContainerfiles[] = {"Containerfile", "ContainerFile", "containerfile",
                                                  "Dockerfile",    "DockerFile",    "dockerfile"};

bool regular_file(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// "a/b" from "./a//b/"; empty when it climbs, is absolute, holds a control
// character or names the context itself: the build reads only inside its
// snapshot.
std::string normal_relative(const std::string& raw) {
    return normal_inside(raw).value_or("");
}

}  // namespace

std::string compose_project_name(const std::string& dir_basename) {
    std::string out;
    for (char c : dir_basename) {
        const char l = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
        if ((l >= 'a' && l <= 'z') || (l >= '0' && l <= '9') || l == '-' || l == '_') out += l;
    }
    while (!out.empty() && (out[0] == '-' || out[0] == '_')) out.erase(0, 1);
    if (out.size() > 63) out.resize(63);
    return out;
}

std::string install_project_name(const std::string& project_dir, const std::string& compose_file) {
    const std::string dir = compose_file.substr(0, compose_file.rfind('/'));
    std::string base = compose_project_name(dir.substr(dir.rfind('/') + 1));
    if (base.size() > 52) base.resize(52);
    const std::string hash = common::sha256_hex(project_dir).substr(0, 8);
    return base.empty() ? "hb" + hash : base + "_hb" + hash;
}

std::optional<BuildSettings> plan_builds(const BuildPlanInput& in,
                                         std::vector<std::string>& notes) {
    if (in.builds == nullptr || in.buildable == nullptr || in.buildable->empty()) {
        return std::nullopt;
    }
    if (in.engine.empty()) {
        notes.push_back("no podman or docker found to build with: every rebuild is refused");
        return std::nullopt;
    }
    const std::string& project = in.project;
    if (project.empty()) {
        notes.push_back("no compose project name: every rebuild is refused");
        return std::nullopt;
    }
    BuildSettings settings;
    if (in.previous != nullptr && *in.previous) {
        settings.network = (*in.previous)->network;
        settings.max_files = (*in.previous)->max_files;
        settings.max_bytes = (*in.previous)->max_bytes;
        settings.base_images = (*in.previous)->base_images;
    }
    settings.engine = in.engine;
    settings.project = project;
    const bool podman = in.podman_compose;
    if (podman) {
        settings.buildah = in.buildah;
        if (in.buildah.empty())
            notes.push_back(
                "no buildah found (Debian: apt install buildah): every rebuild is refused, "
                "because only buildah shows a base image's ONBUILD triggers (docs/BUILDS.md)");
    }
    for (const ComposeBuild& b : *in.builds) {
        if (!std::binary_search(in.buildable->begin(), in.buildable->end(), b.service)) continue;
        ServiceBuild s;
        s.service = b.service;
        s.context = b.context;
        if (!b.dockerfile.empty()) {
            s.containerfile = normal_relative(b.dockerfile);
            if (s.containerfile.empty() || s.containerfile.ends_with(".in")) {
                notes.push_back("rebuild " + b.service + " is refused: its dockerfile " +
                                "must lie inside its build context");
                continue;
            }
        } else {
            const std::string base =
                in.project_dir + (b.context == "." ? "" : "/" + b.context) + "/";
            s.containerfile = "Dockerfile";
            for (const char* name : kDefaultContainerfiles) {
                if (podman || std::string(name) == "Dockerfile") {
                    if (regular_file(base + name)) {
                        s.containerfile = name;
                        break;
                    }
                }
            }
        }
        s.target = b.target;
        s.args = b.args;
        const char sep = podman ? '_' : '-';
        s.image = b.image.empty() ? project + sep + b.service : b.image;
        s.container =
            b.container_name.empty() ? project + sep + b.service + sep + "1" : b.container_name;
        // What bridge.json refuses in an argv word (common/config.cpp).
        const auto bad_word = [](const std::string& w) {
            return w.empty() || w[0] == '-' || std::any_of(w.begin(), w.end(), [](char c) {
                       return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
                   });
        };
        const bool odd = (!s.target.empty() && bad_word(s.target)) || bad_word(s.image) ||
                         std::any_of(s.args.begin(), s.args.end(), bad_word);
        if (odd || !is_valid_container_name(s.container)) {
            notes.push_back("rebuild " + b.service +
                            " is refused: its image, container name, target or build args "
                            "cannot be passed as plain words");
            continue;
        }
        settings.services.push_back(std::move(s));
    }
    std::sort(settings.services.begin(), settings.services.end(),
              [](const ServiceBuild& a, const ServiceBuild& b) { return a.service < b.service; });
    return settings;
}

Result<BuildSettings> plan_stack_builds(
    const std::vector<std::pair<std::string, std::string>>& contexts,
    const std::vector<std::pair<std::string, std::string>>& containerfiles,
    const std::vector<std::string>& buildable, const std::optional<BuildSettings>* previous) {
    BuildSettings settings;
    if (previous != nullptr && *previous) {
        settings.max_files = (*previous)->max_files;
        settings.max_bytes = (*previous)->max_bytes;
        settings.base_images = (*previous)->base_images;
    }
    for (const auto& [service, context] : contexts) {
        if (!std::binary_search(buildable.begin(), buildable.end(), service))
            return make_error("--build-context names " + service +
                              ", which is not a buildable service");
        ServiceBuild s;
        s.service = service;
        s.context = context;
        s.containerfile = "Containerfile";
        for (const auto& [named, file] : containerfiles)
            if (named == service) s.containerfile = file;
        settings.services.push_back(std::move(s));
    }
    std::sort(settings.services.begin(), settings.services.end(),
              [](const ServiceBuild& a, const ServiceBuild& b) { return a.service < b.service; });
    return settings;
}

}  // namespace hb::admin

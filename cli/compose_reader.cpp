#include "cli/compose_reader.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <set>

#include "cli/fs_util.hpp"
#include "ipc/wire.hpp"

namespace hb::cli {
namespace {

constexpr int kMaxDepth = 16;  // include/extends nesting; also breaks cycles

std::string dir_of(const std::string& file) {
    auto slash = file.rfind('/');
    return slash == 0 ? "/" : file.substr(0, slash);
}

std::string resolve_relative(const std::string& base_dir, const std::string& path) {
    if (!path.empty() && path[0] == '/') return lexically_normal(path);
    return lexically_normal(base_dir + "/" + path);
}

// A key of a mapping, honouring YAML merge keys (`<<: *anchor` or a list of
// them), which yaml-cpp 0.7 leaves to the application: a direct key wins,
// then the merged maps in order.
YAML::Node lookup(const YAML::Node& map, const std::string& key, int depth = 0) {
    if (!map.IsMap() || depth > kMaxDepth) return YAML::Node(YAML::NodeType::Undefined);
    for (const auto& item : map) {
        if (item.first.IsScalar() && item.first.Scalar() == key) return item.second;
    }
    for (const auto& item : map) {
        if (!item.first.IsScalar() || item.first.Scalar() != "<<") continue;
        if (item.second.IsMap()) {
            YAML::Node found = lookup(item.second, key, depth + 1);
            if (found.IsDefined()) return found;
        } else if (item.second.IsSequence()) {
            for (const auto& merged : item.second) {
                YAML::Node found = lookup(merged, key, depth + 1);
                if (found.IsDefined()) return found;
            }
        }
    }
    return YAML::Node(YAML::NodeType::Undefined);
}

class Reader {
  public:
    explicit Reader(const FileSource& source) : source_(source) {}

    Result<void> read_root(const std::string& file) {
        auto doc = load(file, /*required=*/true);
        if (!doc) return doc.error();
        return read_document(file, *doc, 0);
    }

    ComposeModel finish(const std::string& root) {
        ComposeModel model;
        for (const auto& [name, buildable] : services_) {
            model.services.push_back(name);
            if (buildable) model.buildable.push_back(name);
        }
        referenced_.erase(root);
        model.referenced_files.assign(referenced_.begin(), referenced_.end());
        model.warnings = std::move(warnings_);
        return model;
    }

  private:
    Result<YAML::Node> load(const std::string& file, bool required) {
        if (auto cached = docs_.find(file); cached != docs_.end()) return cached->second;
        auto text = source_(file);
        if (!text) return text.error();
        if (!text->has_value()) {
            if (required) return make_error("compose file " + file + " does not exist");
            return YAML::Node(YAML::NodeType::Undefined);
        }
        // Never assign to a YAML::Node that already refers to a document:
        // yaml-cpp's operator= rewrites the shared node, not the handle.
        auto parsed = parse(file, **text);
        if (!parsed) return parsed.error();
        if (!parsed->IsMap() && !parsed->IsNull()) {
            return make_error(file + " is not a compose file: its top level is not a mapping");
        }
        docs_.emplace(file, *parsed);
        return *parsed;
    }

    static Result<YAML::Node> parse(const std::string& file, const std::string& text) {
        try {
            return YAML::Load(text);
        } catch (const YAML::Exception& e) {
            return make_error("cannot parse " + file + ": " + e.msg + " (line " +
                              std::to_string(e.mark.line + 1) + ")");
        }
    }

    Result<void> read_document(const std::string& file, const YAML::Node& doc, int depth) {
        if (depth > kMaxDepth) return make_error(file + ": include nesting is too deep");
        if (!visited_.insert(file).second) return {};
        const std::string base = dir_of(file);
        if (YAML::Node includes = lookup(doc, "include"); includes.IsDefined()) {
            auto done = read_includes(file, base, includes, depth);
            if (!done) return done;
        }
        YAML::Node services = lookup(doc, "services");
        if (!services.IsDefined() || services.IsNull()) return {};
        if (!services.IsMap()) return make_error(file + ": services is not a mapping");
        for (const auto& item : services) {
            if (!item.first.IsScalar()) return make_error(file + ": a service name is not text");
            const std::string name = item.first.Scalar();
            if (!is_valid_arg_shape(name)) {
                warnings_.push_back("service " + name + " in " + file +
                                    " cannot be named in a request (a service arg must match "
                                    "^[a-z][a-z0-9_-]*$), so it is left out");
                continue;
            }
            auto buildable = read_service(file, services, name, item.second, 0);
            if (!buildable) return buildable.error();
            services_[name] = services_[name] || *buildable;
        }
        return {};
    }

    Result<void> read_includes(const std::string& file, const std::string& base,
                               const YAML::Node& includes, int depth) {
        if (!includes.IsSequence()) return make_error(file + ": include is not a list");
        for (const auto& entry : includes) {
            std::vector<std::string> paths;
            if (entry.IsScalar()) {
                paths.push_back(entry.Scalar());
            } else if (entry.IsMap()) {
                YAML::Node path = lookup(entry, "path");
                if (path.IsScalar()) paths.push_back(path.Scalar());
                if (path.IsSequence()) {
                    for (const auto& p : path) {
                        if (p.IsScalar()) paths.push_back(p.Scalar());
                    }
                }
                add_env_files(base, lookup(entry, "env_file"));
            } else {
                return make_error(file + ": an include entry is neither a path nor a mapping");
            }
            for (const auto& rel : paths) {
                std::string included = resolve_relative(base, rel);
                referenced_.insert(included);
                auto doc = load(included, /*required=*/false);
                if (!doc) return doc.error();
                if (!doc->IsDefined()) {
                    warnings_.push_back(file + " includes " + included +
                                        ", which does not exist; it is pinned as absent");
                    continue;
                }
                auto done = read_document(included, *doc, depth + 1);
                if (!done) return done;
            }
        }
        return {};
    }

    void add_env_files(const std::string& base, const YAML::Node& env_file) {
        if (env_file.IsScalar()) {
            referenced_.insert(resolve_relative(base, env_file.Scalar()));
        } else if (env_file.IsSequence()) {
            for (const auto& entry : env_file) {
                if (entry.IsScalar()) {
                    referenced_.insert(resolve_relative(base, entry.Scalar()));
                } else if (entry.IsMap()) {
                    YAML::Node path = lookup(entry, "path");
                    if (path.IsScalar()) referenced_.insert(resolve_relative(base, path.Scalar()));
                }
            }
        }
    }

    // Records what the service pulls in; true when it builds an image
    // (its own `build:` or one it extends).
    Result<bool> read_service(const std::string& file, const YAML::Node& services,
                              const std::string& name, const YAML::Node& service, int depth) {
        if (depth > kMaxDepth) return make_error(file + ": extends nesting is too deep");
        if (service.IsNull()) return false;
        if (!service.IsMap()) {
            return make_error(file + ": service " + name + " is not a mapping");
        }
        const std::string base = dir_of(file);
        add_env_files(base, lookup(service, "env_file"));
        bool buildable = lookup(service, "build").IsDefined();

        YAML::Node extends = lookup(service, "extends");
        if (!extends.IsDefined() || extends.IsNull()) return buildable;
        std::string parent_file = file;
        std::string parent_name;
        if (extends.IsScalar()) {
            parent_name = extends.Scalar();
        } else if (extends.IsMap()) {
            YAML::Node svc = lookup(extends, "service");
            if (svc.IsScalar()) parent_name = svc.Scalar();
            YAML::Node other = lookup(extends, "file");
            if (other.IsScalar()) {
                parent_file = resolve_relative(base, other.Scalar());
                referenced_.insert(parent_file);
            }
        }
        if (parent_name.empty()) {
            return make_error(file + ": service " + name + " extends without naming a service");
        }
        if (parent_file == file) {
            return inherit(name, buildable, file, services, parent_name, depth);
        }
        auto doc = load(parent_file, /*required=*/false);
        if (!doc) return doc.error();
        if (!doc->IsDefined()) {
            warnings_.push_back("service " + name + " extends " + parent_file +
                                ", which does not exist; it is pinned as absent");
            return buildable;
        }
        return inherit(name, buildable, parent_file, lookup(*doc, "services"), parent_name, depth);
    }

    // `name` extends `parent_name` of `parent_file`: buildable if either is.
    Result<bool> inherit(const std::string& name, bool buildable, const std::string& parent_file,
                         const YAML::Node& parent_services, const std::string& parent_name,
                         int depth) {
        const YAML::Node parent = lookup(parent_services, parent_name);
        if (!parent.IsDefined()) {
            warnings_.push_back("service " + name + " extends " + parent_name + ", which " +
                                parent_file + " does not define");
            return buildable;
        }
        auto inherited = read_service(parent_file, parent_services, parent_name, parent, depth + 1);
        if (!inherited) return inherited;
        return buildable || *inherited;
    }

    const FileSource& source_;
    std::map<std::string, YAML::Node> docs_;
    std::set<std::string> visited_;
    std::map<std::string, bool> services_;  // name -> buildable (sorted by name)
    std::set<std::string> referenced_;
    std::vector<std::string> warnings_;
};

}  // namespace

FileSource current_files() {
    return [](const std::string& path) { return read_file_if_exists(path, 16u << 20); };
}

Result<ComposeModel> read_compose(const std::string& compose_file, const FileSource& source) {
    const std::string root = lexically_normal(compose_file);
    Reader reader(source);
    try {
        auto read = reader.read_root(root);
        if (!read) return read.error();
    } catch (const YAML::Exception& e) {
        return make_error("cannot read " + root + ": " + e.msg);
    }
    ComposeModel model = reader.finish(root);
    if (model.services.size() > kMaxServices) {
        return make_error(root + " defines " + std::to_string(model.services.size()) +
                          " services; at most " + std::to_string(kMaxServices) +
                          " can be bridged (pass --services)");
    }
    return model;
}

}  // namespace hb::cli

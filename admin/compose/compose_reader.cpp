#include "admin/compose/compose_reader.hpp"

#include <sys/stat.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "admin/util/fs_util.hpp"
#include "common/config.hpp"
#include "common/sha256.hpp"
#include "ipc/inspect_wire.hpp"
#include "ipc/wire.hpp"

namespace hb::admin {
namespace {

constexpr int kMaxDepth = 16;     // include/extends nesting; also breaks cycles
constexpr int kMaxNesting = 100;  // mappings and lists inside each other

std::string dir_of(const std::string& file) {
    auto slash = file.rfind('/');
    return slash == 0 ? "/" : file.substr(0, slash);
}

std::string resolve_relative(const std::string& base_dir, const std::string& path) {
    if (!path.empty() && path[0] == '/') return lexically_normal(path);
    return lexically_normal(base_dir + "/" + path);
}

// `target` relative to the directory `from` (both absolute and normal).
std::string relative_to(const std::string& from, const std::string& target) {
    auto split = [](const std::string& p) {
        std::vector<std::string> parts;
        std::size_t pos = 1;
        while (pos < p.size()) {
            std::size_t slash = p.find('/', pos);
            if (slash == std::string::npos) slash = p.size();
            parts.push_back(p.substr(pos, slash - pos));
            pos = slash + 1;
        }
        return parts;
    };
    auto a = split(from);
    auto b = split(target);
    std::size_t common = 0;
    while (common < a.size() && common < b.size() && a[common] == b[common]) ++common;
    std::string out;
    for (std::size_t i = common; i < a.size(); ++i) out += out.empty() ? ".." : "/..";
    for (std::size_t i = common; i < b.size(); ++i) out += (out.empty() ? "" : "/") + b[i];
    return out.empty() ? "." : out;
}

// A double-quoted YAML scalar: exact in every YAML reader, and control
// characters (and the line breaks only YAML 1.1 knows) made visible.
std::string quote(const std::string& s) {
    std::string out = "\"";
    for (std::size_t i = 0; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\t') {
            out += "\\t";
        } else if (c < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        } else if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x85) {
            out += "\\N";  // NEL
            ++i;
        } else if (c == 0xe2 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
                   (static_cast<unsigned char>(s[i + 2]) == 0xa8 ||
                    static_cast<unsigned char>(s[i + 2]) == 0xa9)) {
            out += static_cast<unsigned char>(s[i + 2]) == 0xa8 ? "\\L" : "\\P";
            i += 2;
        } else if (c == 0xef && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0xbb &&
                   static_cast<unsigned char>(s[i + 2]) == 0xbf) {
            out += "\\uFEFF";
            i += 2;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out + "\"";
}

// A plain scalar that can be written back unquoted with the same meaning in
// YAML 1.1 and 1.2 block context: numbers, booleans, simple words. Kept
// plain so each engine types it as it would have typed the original.
bool plain_safe(const std::string& s) {
    if (s.empty() || s.back() == ':') return false;
    const char first = s[0];
    if (first == '-' && s.size() < 2) return false;
    if (first == ':') return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '.' || c == '+' || c == '-' || c == ':' || c == '~';
    });
}

struct MapEntry;

// This reader's own tree of a document: merge keys resolved, aliases
// copied, so rendering and every lookup see one meaning.
struct Value {
    enum class Kind { Null, Scalar, Seq, Map };
    Kind kind = Kind::Null;
    std::string text;    // Scalar
    bool plain = false;  // Scalar written without quotes: the engine types it
    int line = 0;        // 1-based
    std::vector<Value> items;
    // Map; keys are scalars. A struct of its own, not std::pair<Value, Value>:
    // clang 14 with libstdc++ refuses a pair of a type still incomplete here.
    std::vector<MapEntry> entries;

    [[nodiscard]] bool is_map() const { return kind == Kind::Map; }
    [[nodiscard]] bool is_seq() const { return kind == Kind::Seq; }
    [[nodiscard]] bool is_scalar() const { return kind == Kind::Scalar; }
    [[nodiscard]] bool is_null() const { return kind == Kind::Null; }
    [[nodiscard]] const Value* get(std::string_view key) const;
    Value* get(std::string_view key);
};

struct MapEntry {
    Value key;
    Value value;
};

const Value* Value::get(std::string_view key) const {
    for (const auto& [k, v] : entries) {
        if (k.text == key) return &v;
    }
    return nullptr;
}

Value* Value::get(std::string_view key) {
    for (auto& [k, v] : entries) {
        if (k.text == key) return &v;
    }
    return nullptr;
}

Value scalar_value(std::string text, int line) {
    Value v;
    v.kind = Value::Kind::Scalar;
    v.text = std::move(text);
    v.line = line;
    return v;
}

void emit_scalar(const Value& v, std::string& out) {
    if (v.is_null()) {
        out += "null";
    } else if (v.plain && plain_safe(v.text)) {
        out += v.text;
    } else {
        out += quote(v.text);
    }
}

void emit_block(const Value& v, int indent, std::string& out);

void emit_child(const Value& v, int indent, std::string& out) {
    if (v.is_map() && v.entries.empty()) {
        out += " {}\n";
    } else if (v.is_seq() && v.items.empty()) {
        out += " []\n";
    } else if (v.is_map() || v.is_seq()) {
        out += "\n";
        emit_block(v, indent + 2, out);
    } else {
        out += " ";
        emit_scalar(v, out);
        out += "\n";
    }
}

void emit_block(const Value& v, int indent, std::string& out) {
    const std::string pad(static_cast<std::size_t>(indent), ' ');
    if (v.is_map()) {
        for (const auto& [k, child] : v.entries) {
            out += pad;
            emit_scalar(k, out);
            out += ":";
            emit_child(child, indent, out);
        }
    } else if (v.is_seq()) {
        for (const auto& item : v.items) {
            out += pad + "-";
            emit_child(item, indent, out);
        }
    } else {
        out += pad;
        emit_scalar(v, out);
        out += "\n";
    }
}

// yaml-cpp's node graph -> Value, refusing what readers disagree on.
class Converter {
  public:
    Converter(std::string file, std::size_t& visited) : file_(std::move(file)), visited_(visited) {}

    Result<Value> convert(const YAML::Node& node, int nesting) {
        const int line = node.Mark().line + 1;
        if (++visited_ > kMaxComposeNodes) {
            return make_error(file_ + " line " + std::to_string(line) +
                              ": anchors and merge keys expand to more than " +
                              std::to_string(kMaxComposeNodes) +
                              " nodes; write the file out with fewer of them");
        }
        if (nesting > kMaxNesting) {
            return make_error(file_ + " line " + std::to_string(line) + ": nested more than " +
                              std::to_string(kMaxNesting) + " levels deep");
        }
        const std::string& tag = node.Tag();
        if (!tag.empty() && tag != "?" && tag != "!") {
            return make_error(file_ + " line " + std::to_string(line) + ": the explicit tag " +
                              quote(tag) +
                              " is read differently by different compose tools; remove it");
        }
        Value v;
        v.line = line;
        if (node.IsNull()) return v;
        if (node.IsScalar()) {
            v.kind = Value::Kind::Scalar;
            v.text = node.Scalar();
            v.plain = tag == "?";
            return v;
        }
        if (node.IsSequence()) {
            v.kind = Value::Kind::Seq;
            for (const auto& item : node) {
                auto child = convert(item, nesting + 1);
                if (!child) return child.error();
                v.items.push_back(std::move(*child));
            }
            return v;
        }
        if (!node.IsMap())
            return make_error(file_ + " line " + std::to_string(line) + ": bad node");
        v.kind = Value::Kind::Map;
        std::map<std::string, int> seen;  // key -> line
        std::vector<Value> merges;
        for (const auto& item : node) {
            const int key_line = item.first.Mark().line + 1;
            if (!item.first.IsScalar() ||
                (!item.first.Tag().empty() && item.first.Tag() != "?" && item.first.Tag() != "!")) {
                return make_error(file_ + " line " + std::to_string(key_line) +
                                  ": a mapping key is not plain text");
            }
            const std::string key = item.first.Scalar();
            if (auto [it, fresh] = seen.emplace(key, key_line); !fresh) {
                return make_error(file_ + " line " + std::to_string(key_line) + ": the key " +
                                  quote(key) + " appears twice in one mapping (first on line " +
                                  std::to_string(it->second) +
                                  "); YAML readers keep different ones: remove one");
            }
            if (key == "<<" && item.first.Tag() == "?") {
                auto merged = convert(item.second, nesting + 1);
                if (!merged) return merged.error();
                if (merged->is_map()) {
                    merges.push_back(std::move(*merged));
                } else if (merged->is_seq() &&
                           std::all_of(merged->items.begin(), merged->items.end(),
                                       [](const Value& m) { return m.is_map(); })) {
                    for (auto& m : merged->items) merges.push_back(std::move(m));
                } else {
                    return make_error(file_ + " line " + std::to_string(key_line) +
                                      ": a merge key (<<) must name a mapping or a list of them");
                }
                continue;
            }
            Value k = scalar_value(key, key_line);
            k.plain = item.first.Tag() == "?";
            auto child = convert(item.second, nesting + 1);
            if (!child) return child.error();
            v.entries.push_back({std::move(k), std::move(*child)});
        }
        // Explicit keys win, then the merged mappings in order (YAML's
        // merge-key rule, as PyYAML and Go's yaml apply it).
        for (auto& m : merges) {
            for (auto& entry : m.entries) {
                if (seen.emplace(entry.key.text, entry.key.line).second) {
                    if (++visited_ > kMaxComposeNodes) {
                        return make_error(file_ + " line " + std::to_string(line) +
                                          ": anchors and merge keys expand to more than " +
                                          std::to_string(kMaxComposeNodes) +
                                          " nodes; write the file out with fewer of them");
                    }
                    v.entries.push_back(std::move(entry));
                }
            }
        }
        return v;
    }

  private:
    std::string file_;
    std::size_t& visited_;
};

// `KEY: VALUE` of a labels mapping, `KEY=VALUE` or a bare `KEY` of a list
// (as compose splits them), named `name`, gone.
void erase_label(Value& labels, std::string_view name) {
    std::erase_if(labels.entries, [&](const MapEntry& e) { return e.key.text == name; });
    std::erase_if(labels.items, [&](const Value& item) {
        return item.is_scalar() &&
               (item.text == name || item.text.starts_with(std::string(name) + "="));
    });
}

void sort_keys(Value& v) {
    std::sort(v.entries.begin(), v.entries.end(),
              [](const MapEntry& a, const MapEntry& b) { return a.key.text < b.key.text; });
    for (auto& [k, child] : v.entries) sort_keys(child);
    for (auto& item : v.items) sort_keys(item);
}

// The sha256 (hex) of a service's definition in a canonical form: as
// rendered (paths made absolute, bind sources their pins, the install's
// label set), every mapping's keys sorted, so reordering keys changes
// nothing while a list's order (a command's words) does; the definition
// label itself left out.
std::string definition_hash(const Value& service) {
    Value copy = service;
    if (Value* labels = copy.get("labels")) erase_label(*labels, kDefinitionLabel);
    sort_keys(copy);
    std::string text;
    emit_block(copy, 0, text);
    return common::sha256_hex(text);
}

enum class Role { Root, Include, Extends, ExtendsOtherDir };
// Mount: a bind source (a volume, a secret's or config's file); Context: a
// build context, which only the bridge's own build reads (from a snapshot).
enum class RefKind { ComposeFile, EnvFile, Mount, Context };

class Reader {
  public:
    Reader(const FileSource& source, std::string project_dir, std::string root,
           std::string pin_run_dir, std::string install_project)
        : source_(source),
          project_(std::move(project_dir)),
          root_(std::move(root)),
          pin_run_dir_(std::move(pin_run_dir)),
          install_project_(std::move(install_project)) {
        struct stat st {};
        if (::stat(project_.c_str(), &st) == 0) {
            project_id_ = {st.st_dev, st.st_ino};
        }
    }

    Result<void> read_root() {
        auto doc = load(root_, /*required=*/true, Role::Root);
        if (!doc) return doc.error();
        return read_document(root_, **doc, 0);
    }

    ComposeModel finish() {
        ComposeModel model;
        for (const auto& [name, buildable] : services_) {
            model.services.push_back(name);
            if (buildable) model.buildable.push_back(name);
        }
        referenced_.erase(root_);
        model.referenced_files.assign(referenced_.begin(), referenced_.end());
        for (const auto& [file, doc] : docs_) {
            if (!inside(file)) continue;
            RenderedCompose r;
            r.file = file;
            r.text = "# Rendered by hostbridge from the approved " +
                     quote(file.substr(project_.size() + 1)) +
                     ": what compose reads in the run tree.\n" +
                     (pin_run_dir_.empty()
                          ? "# Paths into the checkout are absolute; "
                          : "# Bind sources in the checkout are their pins (bound before "
                            "each start); build contexts are absolute; ") +
                     "env_file, extends and include stay relative.\n";
            if (!doc.is_null()) emit_block(doc, 0, r.text);
            if (file == root_) {
                model.rendered.insert(model.rendered.begin(), std::move(r));
            } else {
                model.rendered.push_back(std::move(r));
            }
        }
        model.checkout_paths.assign(checkout_paths_.begin(), checkout_paths_.end());
        model.checkout_binds = std::move(checkout_binds_);
        model.pinned_sources.assign(pinned_.begin(), pinned_.end());
        for (auto& [name, build] : builds_) {
            if (!services_.contains(name)) continue;
            if (!build) {
                warnings_.push_back("rebuild " + name +
                                    " is refused: the bridge builds only a service with its own "
                                    "build: (no extends, named in one file) whose context and "
                                    "dockerfile lie in the project");
                continue;
            }
            model.builds.push_back(std::move(*build));
        }
        for (auto& [name, hash] : definitions_) {
            if (services_.contains(name)) model.definitions.emplace(name, std::move(hash));
        }
        model.warnings = std::move(warnings_);
        return model;
    }

  private:
    [[nodiscard]] bool inside(const std::string& abs) const {
        return abs == project_ || path_is_within(abs, project_);
    }

    // True when `abs`, outside the project by its spelling, reaches the
    // checkout anyway: a prefix that is the project directory (same device
    // and inode: /proc/self/root/..., a bind mount, a symlink), or a
    // canonical location inside it.
    [[nodiscard]] bool names_checkout(const std::string& abs) const {
        if (!project_id_) return false;
        std::string p = abs;
        std::string deepest;
        while (true) {
            struct stat st {};
            if (::stat(p.c_str(), &st) == 0) {
                if (deepest.empty()) deepest = p;
                if (st.st_dev == project_id_->first && st.st_ino == project_id_->second) {
                    return true;
                }
            }
            if (p == "/") break;
            p = dir_of(p);
        }
        if (!deepest.empty()) {
            auto real = canonical_path(deepest);
            if (real && inside(*real)) return true;
        }
        return false;
    }

    static std::string where(const std::string& file, int line) {
        return file + " line " + std::to_string(line);
    }

    Result<const Value*> load(const std::string& file, bool required, Role role) {
        if (auto cached = docs_.find(file); cached != docs_.end()) return &cached->second;
        auto text = source_(file);
        if (!text) return text.error();
        if (!text->has_value()) {
            if (required) return make_error("compose file " + file + " does not exist");
            return static_cast<const Value*>(nullptr);
        }
        if ((*text)->size() > kMaxComposeFileBytes) {
            return make_error(file + " is " + std::to_string((*text)->size()) +
                              " bytes; a compose file the bridge reads may be at most " +
                              std::to_string(kMaxComposeFileBytes) + " bytes");
        }
        std::vector<YAML::Node> docs;
        try {
            docs = YAML::LoadAll(**text);
        } catch (const YAML::Exception& e) {
            return make_error("cannot parse " + file + ": " + e.msg + " (line " +
                              std::to_string(e.mark.line + 1) + ")");
        }
        if (docs.size() > 1) {
            return make_error(file +
                              " holds more than one YAML document (---); compose tools read "
                              "different ones: keep one");
        }
        Value doc;
        if (!docs.empty()) {
            Converter converter(file, visited_);
            auto converted = converter.convert(docs[0], 0);
            if (!converted) return converted.error();
            doc = std::move(*converted);
        }
        if (!doc.is_map() && !doc.is_null()) {
            return make_error(file + " is not a compose file: its top level is not a mapping");
        }
        auto prepared = prepare(file, doc, role);
        if (!prepared) return prepared.error();
        auto [it, fresh] = docs_.emplace(file, std::move(doc));
        (void)fresh;
        return &it->second;
    }

    // Checks every file reference of one document and rewrites it for the
    // run tree (see compose_reader.hpp).
    Result<void> prepare(const std::string& file, Value& doc, Role role) {
        if (!doc.is_map()) return {};
        if (Value* includes = doc.get("include")) {
            if (!includes->is_seq())
                return make_error(where(file, includes->line) + ": include is not a list");
            for (auto& entry : includes->items) {
                if (entry.is_scalar()) {
                    if (auto r = ref(file, role, "include", entry, RefKind::ComposeFile); !r)
                        return r;
                } else if (entry.is_map()) {
                    if (Value* dir = entry.get("project_directory")) {
                        return make_error(where(file, dir->line) +
                                          ": include.project_directory is not supported by the "
                                          "bridge; move the included file instead");
                    }
                    if (Value* path = entry.get("path")) {
                        if (path->is_scalar()) {
                            if (auto r =
                                    ref(file, role, "include.path", *path, RefKind::ComposeFile);
                                !r)
                                return r;
                        } else if (path->is_seq()) {
                            for (auto& p : path->items) {
                                if (auto r =
                                        ref(file, role, "include.path", p, RefKind::ComposeFile);
                                    !r)
                                    return r;
                            }
                        } else {
                            return make_error(where(file, path->line) +
                                              ": include.path is not a path or a list");
                        }
                    }
                    if (Value* env = entry.get("env_file")) {
                        if (auto r = env_files(file, role, "include.env_file", *env); !r) return r;
                    }
                } else {
                    return make_error(where(file, entry.line) +
                                      ": an include entry is neither a path nor a mapping");
                }
            }
        }
        if (Value* services = doc.get("services"); services != nullptr && services->is_map()) {
            for (auto& [name, service] : services->entries) {
                if (!service.is_map()) continue;
                service_ = name.text;
                auto done = prepare_service(file, role, service);
                if (done && !install_project_.empty()) done = label_definition(file, role, service);
                service_.clear();
                if (!done) return done;
            }
        }
        for (const char* top : {"secrets", "configs"}) {
            Value* decls = doc.get(top);
            if (decls == nullptr || !decls->is_map()) continue;
            for (auto& [name, decl] : decls->entries) {
                if (!decl.is_map()) continue;
                if (Value* f = decl.get("file")) {
                    if (auto r = ref(file, role, std::string(top) + "." + name.text + ".file", *f,
                                     RefKind::Mount);
                        !r)
                        return r;
                }
            }
        }
        return {};
    }

    Result<void> prepare_service(const std::string& file, Role role, Value& service) {
        const std::string key = "services." + service_;
        if (!install_project_.empty()) {
            if (auto r = label_service(file, key, service, kInstallLabel, install_project_); !r)
                return r;
        }
        for (const char* name : {"env_file", "label_file"}) {
            if (Value* env = service.get(name)) {
                if (auto r = env_files(file, role, key + "." + name, *env); !r) return r;
            }
        }
        if (Value* extends = service.get("extends"); extends != nullptr && extends->is_map()) {
            if (Value* f = extends->get("file")) {
                if (auto r = ref(file, role, key + ".extends.file", *f, RefKind::ComposeFile); !r)
                    return r;
            }
        }
        if (Value* build = service.get("build")) {
            // Read before the rewrite below makes the context absolute.
            record_build(file, service, *build);
            if (build->is_scalar()) {
                if (auto r = context(file, role, key + ".build", *build); !r) return r;
            } else if (build->is_map()) {
                if (Value* extra = build->get("additional_contexts")) {
                    return make_error(where(file, extra->line) + ": " + key +
                                      ".build.additional_contexts is not supported by the bridge");
                }
                if (Value* ctx = build->get("context")) {
                    if (auto r = context(file, role, key + ".build.context", *ctx); !r) return r;
                } else {
                    // The default context is the file's directory: in the
                    // run tree that would be the tree, so name it.
                    Value k = scalar_value("context", build->line);
                    k.plain = true;
                    Value dot = scalar_value(".", build->line);
                    if (auto r = context(file, role, key + ".build.context", dot); !r) return r;
                    build->entries.insert(build->entries.begin(), {std::move(k), std::move(dot)});
                }
            } else if (!build->is_null()) {
                return make_error(where(file, build->line) + ": " + key +
                                  ".build is not a path or a mapping");
            }
        }
        if (Value* volumes = service.get("volumes"); volumes != nullptr && volumes->is_seq()) {
            for (auto& volume : volumes->items) {
                if (volume.is_scalar()) {
                    if (auto r = short_volume(file, role, key + ".volumes", volume); !r) return r;
                } else if (volume.is_map()) {
                    Value* type = volume.get("type");
                    Value* src = volume.get("source");
                    if (type != nullptr && type->is_scalar() &&
                        type->text.find('$') != std::string::npos) {
                        return interpolation(file, key + ".volumes.type", *type);
                    }
                    if (src == nullptr || !src->is_scalar()) continue;
                    if (src->text.find('$') != std::string::npos) {
                        return interpolation(file, key + ".volumes.source", *src);
                    }
                    const bool bind =
                        (type != nullptr && type->is_scalar() && type->text == "bind") ||
                        (type == nullptr && is_path_like(src->text));
                    if (bind) {
                        if (auto r = ref(file, role, key + ".volumes.source", *src, RefKind::Mount);
                            !r)
                            return r;
                    }
                }
            }
        }
        return {};
    }

    // The install's own label (kInstallLabel, ipc/inspect_wire.hpp) on the
    // service, whatever the file says of it: the bridge reads only the
    // containers that carry it (docs/COMPOSE.md, "The project's name"). Set
    // on every service of every file, so a service that `extends` another
    // has it whichever one compose merges first (podman-compose 1.0.3 turns
    // both spellings into a mapping and merges them key by key). The
    // definition label (kDefinitionLabel) the same way, last.
    Result<void> label_service(const std::string& file, const std::string& key, Value& service,
                               std::string_view name, const std::string& value) {
        Value* labels = service.get("labels");
        if (labels == nullptr) {
            Value k = scalar_value("labels", service.line);
            k.plain = true;
            Value map;
            map.kind = Value::Kind::Map;
            map.line = service.line;
            service.entries.push_back({std::move(k), std::move(map)});
            labels = &service.entries.back().value;
        } else if (labels->is_null()) {
            labels->kind = Value::Kind::Map;
        }
        if (!labels->is_map() && !labels->is_seq()) {
            return make_error(where(file, labels->line) + ": " + key +
                              ".labels is not a list or a mapping");
        }
        erase_label(*labels, name);
        if (labels->is_map()) {
            Value k = scalar_value(std::string(name), labels->line);
            k.plain = true;
            labels->entries.push_back({std::move(k), scalar_value(value, labels->line)});
        } else {
            labels->items.push_back(scalar_value(std::string(name) + "=" + value, labels->line));
        }
        return {};
    }

    // The hash of the service's rendered definition (definition_hash), as
    // a label on it: `up` recreates a container whose label differs
    // (docs/COMPOSE.md, "Applying an approved edit"). The service's own
    // entry decides what a container of it carries, not a base it extends.
    Result<void> label_definition(const std::string& file, Role role, Value& service) {
        const std::string hash = definition_hash(service);
        if (role == Role::Root || role == Role::Include) definitions_[service_] = hash;
        return label_service(file, "services." + service_, service, kDefinitionLabel, hash);
    }

    // What the bridge's own build step needs of `service`'s build (argv_for,
    // engines/podman_compose/rows.cpp); nullopt where it cannot run it from a
    // snapshot of a checkout dir. A service seen twice gets nullopt.
    void record_build(const std::string& file, const Value& service, const Value& build) {
        auto [it, fresh] = builds_.try_emplace(service_);
        if (!fresh) {
            it->second.reset();
            return;
        }
        const auto text = [](const Value* v) { return v && v->is_scalar() ? v->text : ""; };
        const Value* context = build.is_scalar() ? &build : build.get("context");
        if (service.get("extends") != nullptr || (!build.is_scalar() && !build.is_map())) return;
        ComposeBuild b;
        b.service = service_;
        const std::string raw = context ? text(context) : ".";
        if (raw.empty() || raw[0] == '/' || raw[0] == '~' || raw.find("://") != std::string::npos ||
            raw.find('$') != std::string::npos) {
            return;
        }
        const std::string abs = resolve_relative(dir_of(file), raw);
        if (!inside(abs)) return;
        b.context = abs == project_ ? "." : abs.substr(project_.size() + 1);
        if (build.is_map()) {
            b.dockerfile = text(build.get("dockerfile"));
            b.target = text(build.get("target"));
            if (const Value* args = build.get("args")) {
                if (args->is_map()) {
                    for (const auto& [k, v] : args->entries) {
                        b.args.push_back(v.is_null() ? k.text : k.text + "=" + text(&v));
                    }
                } else if (args->is_seq()) {
                    for (const auto& v : args->items) b.args.push_back(text(&v));
                } else {
                    return;
                }
            }
        }
        b.image = text(service.get("image"));
        b.container_name = text(service.get("container_name"));
        it->second = std::move(b);
    }

    static bool is_path_like(const std::string& s) {
        return !s.empty() && (s[0] == '.' || s[0] == '/' || s[0] == '~');
    }

    static Result<void> interpolation(const std::string& file, const std::string& key,
                                      const Value& v) {
        return make_error(where(file, v.line) + ": " + key + " " + quote(v.text) +
                          " uses interpolation ($); compose would read a file the bridge did not "
                          "pin: write the path out");
    }

    // `./src:/app[:ro]`: the source, up to the first colon, is a path when
    // it starts with ., / or ~ (else a named volume).
    Result<void> short_volume(const std::string& file, Role role, const std::string& key,
                              Value& v) {
        const std::size_t colon = v.text.find(':');
        Value src = scalar_value(v.text.substr(0, colon), v.line);
        if (src.text.find('$') != std::string::npos) return interpolation(file, key, v);
        if (!is_path_like(src.text)) return {};
        if (auto r = ref(file, role, key, src, RefKind::Mount); !r) return r;
        v.text = src.text + (colon == std::string::npos ? "" : v.text.substr(colon));
        v.plain = false;
        return {};
    }

    Result<void> context(const std::string& file, Role role, const std::string& key, Value& v) {
        if (!v.is_scalar()) return make_error(where(file, v.line) + ": " + key + " is not a path");
        const std::string& s = v.text;
        // A remote context (git URL) reads nothing local.
        if (s.find("://") != std::string::npos || s.rfind("git@", 0) == 0 ||
            s.rfind("github.com/", 0) == 0) {
            if (s.find('$') != std::string::npos) return interpolation(file, key, v);
            return {};
        }
        return ref(file, role, key, v, RefKind::Context);
    }

    Result<void> env_files(const std::string& file, Role role, const std::string& key, Value& env) {
        if (env.is_scalar()) return ref(file, role, key, env, RefKind::EnvFile);
        if (!env.is_seq()) {
            return make_error(where(file, env.line) + ": " + key + " is not a path or a list");
        }
        for (auto& entry : env.items) {
            if (entry.is_scalar()) {
                if (auto r = ref(file, role, key, entry, RefKind::EnvFile); !r) return r;
            } else if (entry.is_map()) {
                if (Value* path = entry.get("path")) {
                    if (auto r = ref(file, role, key + ".path", *path, RefKind::EnvFile); !r)
                        return r;
                }
            } else {
                return make_error(where(file, entry.line) + ": an entry of " + key +
                                  " is not a path");
            }
        }
        return {};
    }

    // One file reference: checked, recorded, and rewritten for the run tree.
    Result<void> ref(const std::string& file, Role role, const std::string& key, Value& v,
                     RefKind kind) {
        const std::string at = where(file, v.line) + ": " + key + " ";
        if (!v.is_scalar() || v.text.empty()) return make_error(at + "is not a path");
        const std::string raw = v.text;
        if (raw.find('$') != std::string::npos) return interpolation(file, key, v);
        if (std::any_of(raw.begin(), raw.end(),
                        [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; })) {
            return make_error(at + quote(raw) + " contains control characters: rename the file");
        }
        std::string spelled = raw;
        if (raw[0] == '~') {
            // Only mount sources expand ~ (to the host user's home).
            const char* home = std::getenv("HOME");
            if ((kind != RefKind::Mount && kind != RefKind::Context) ||
                (raw != "~" && raw.rfind("~/", 0) != 0) || home == nullptr || home[0] != '/') {
                return make_error(at + quote(raw) +
                                  " starts with ~, which compose tools expand "
                                  "differently here: write the path out");
            }
            spelled = std::string(home) + raw.substr(1);
        }
        const bool relative = spelled[0] != '/';
        const std::string abs = resolve_relative(dir_of(file), spelled);
        const bool file_inside = inside(file);
        if (!file_inside && (relative || inside(abs))) {
            return make_error(at + quote(raw) +
                              ": a compose file outside the project may only name "
                              "absolute paths outside the project");
        }
        if (inside(abs)) {
            const std::string rel = abs == project_ ? "." : abs.substr(project_.size() + 1);
            if (kind == RefKind::Mount || kind == RefKind::Context) {
                v.text = abs;
                v.plain = false;
                checkout_paths_.insert(rel);
                if (kind == RefKind::Mount && !pin_run_dir_.empty()) {
                    // The engine resolves this path at every start: it names
                    // the pin, never the checkout (engines/podman/bind_pin.hpp).
                    v.text = bind_pin_path(pin_run_dir_, rel);
                    pinned_.insert(rel);
                }
                if (key.find(".volumes") != std::string::npos) {
                    checkout_binds_.push_back({file, v.line, service_, rel});
                }
                return {};
            }
            if (!relative) {
                return make_error(at + quote(raw) +
                                  " names a file inside the project by an absolute "
                                  "path; write it relative to " +
                                  file + " (compose reads the approved copy from the run tree)");
            }
            if (role == Role::ExtendsOtherDir) {
                return make_error(at + quote(raw) +
                                  " is relative in a file another service "
                                  "extends from another directory: podman-compose resolves it "
                                  "against the main compose file, docker compose against " +
                                  file + "; move the file next to the main compose file");
            }
            v.text = relative_to(dir_of(file), abs);
            v.plain = false;
            referenced_.insert(abs);
            return {};
        }
        if (names_checkout(abs)) {
            return make_error(at + quote(raw) +
                              " lies outside the project by its spelling, but "
                              "names the project directory " +
                              project_ +
                              " (same device and "
                              "inode): write it relative to the project");
        }
        v.text = abs;  // host-owned: read where it is, not from the run tree
        v.plain = false;
        if (kind != RefKind::Mount && kind != RefKind::Context) referenced_.insert(abs);
        return {};
    }

    Result<void> read_document(const std::string& file, const Value& doc, int depth) {
        if (depth > kMaxDepth) return make_error(file + ": include nesting is too deep");
        if (!visited_files_.insert(file).second) return {};
        const std::string base = dir_of(file);
        if (const Value* includes = doc.get("include")) {
            for (const auto& entry : includes->items) {
                std::vector<const Value*> paths;
                if (entry.is_scalar()) paths.push_back(&entry);
                if (const Value* path = entry.is_map() ? entry.get("path") : nullptr) {
                    if (path->is_scalar()) paths.push_back(path);
                    for (const auto& p : path->items) paths.push_back(&p);
                }
                for (const Value* p : paths) {
                    const std::string included = resolve_relative(base, p->text);
                    auto loaded = load(included, /*required=*/false, Role::Include);
                    if (!loaded) return loaded.error();
                    if (*loaded == nullptr) {
                        warnings_.push_back(file + " includes " + included +
                                            ", which does not exist; it is pinned as absent");
                        continue;
                    }
                    auto done = read_document(included, **loaded, depth + 1);
                    if (!done) return done;
                }
            }
        }
        const Value* services = doc.get("services");
        if (services == nullptr || services->is_null()) return {};
        if (!services->is_map())
            return make_error(where(file, services->line) + ": services is not a mapping");
        for (const auto& [key, service] : services->entries) {
            const std::string& name = key.text;
            if (!is_valid_arg_shape(name)) {
                warnings_.push_back("service " + quote(name) + " in " + file +
                                    " cannot be named in a request (a service arg must match "
                                    "^[a-z][a-z0-9_-]*$), so it is left out");
                continue;
            }
            auto buildable = read_service(file, *services, name, service, 0);
            if (!buildable) return buildable.error();
            services_[name] = services_[name] || *buildable;
        }
        return {};
    }

    // True when the service builds an image (its own `build:` or one it
    // extends).
    Result<bool> read_service(const std::string& file, const Value& services,
                              const std::string& name, const Value& service, int depth) {
        if (depth > kMaxDepth) return make_error(file + ": extends nesting is too deep");
        if (service.is_null()) return false;
        if (!service.is_map()) {
            return make_error(where(file, service.line) + ": service " + quote(name) +
                              " is not a mapping");
        }
        bool buildable = service.get("build") != nullptr;
        const Value* extends = service.get("extends");
        if (extends == nullptr || extends->is_null()) return buildable;
        std::string parent_file = file;
        std::string parent_name;
        if (extends->is_scalar()) {
            parent_name = extends->text;
        } else if (extends->is_map()) {
            if (const Value* svc = extends->get("service"); svc != nullptr && svc->is_scalar()) {
                parent_name = svc->text;
            }
            if (const Value* other = extends->get("file"); other != nullptr && other->is_scalar()) {
                parent_file = resolve_relative(dir_of(file), other->text);
            }
        }
        if (parent_name.empty()) {
            return make_error(where(file, extends->line) + ": service " + quote(name) +
                              " extends without naming a service");
        }
        if (parent_file == file) {
            return inherit(name, buildable, file, services, parent_name, depth);
        }
        const Role role =
            dir_of(parent_file) == dir_of(root_) ? Role::Extends : Role::ExtendsOtherDir;
        auto doc = load(parent_file, /*required=*/false, role);
        if (!doc) return doc.error();
        if (*doc == nullptr) {
            warnings_.push_back("service " + name + " extends " + parent_file +
                                ", which does not exist; it is pinned as absent");
            return buildable;
        }
        const Value* parent_services = (*doc)->get("services");
        if (parent_services == nullptr) {
            warnings_.push_back("service " + name + " extends " + parent_name + ", which " +
                                parent_file + " does not define");
            return buildable;
        }
        return inherit(name, buildable, parent_file, *parent_services, parent_name, depth);
    }

    Result<bool> inherit(const std::string& name, bool buildable, const std::string& parent_file,
                         const Value& parent_services, const std::string& parent_name, int depth) {
        const Value* parent = parent_services.get(parent_name);
        if (parent == nullptr) {
            warnings_.push_back("service " + name + " extends " + quote(parent_name) + ", which " +
                                parent_file + " does not define");
            return buildable;
        }
        auto inherited =
            read_service(parent_file, parent_services, parent_name, *parent, depth + 1);
        if (!inherited) return inherited;
        return buildable || *inherited;
    }

    const FileSource& source_;
    std::string project_;
    std::string root_;
    std::string pin_run_dir_;      // empty: bind sources stay checkout paths
    std::string install_project_;  // empty: no install label
    std::set<std::string> pinned_;
    std::optional<std::pair<dev_t, ino_t>> project_id_;
    std::size_t visited_ = 0;
    std::map<std::string, Value> docs_;
    std::set<std::string> visited_files_;
    std::map<std::string, bool> services_;            // name -> buildable (sorted by name)
    std::map<std::string, std::string> definitions_;  // name -> definition_hash
    std::set<std::string> referenced_;
    std::set<std::string> checkout_paths_;
    std::vector<CheckoutBind> checkout_binds_;
    std::map<std::string, std::optional<ComposeBuild>> builds_;  // by service
    std::string service_;                                        // the service prepare() is in
    std::vector<std::string> warnings_;
};

}  // namespace

FileSource current_files() {
    return
        [](const std::string& path) { return read_file_if_exists(path, kMaxComposeFileBytes + 1); };
}

Result<ComposeModel> read_compose(const std::string& compose_file, const FileSource& source,
                                  const std::string& project_dir, const std::string& pin_run_dir,
                                  const std::string& install_project) {
    const std::string root = lexically_normal(compose_file);
    const std::string project = project_dir.empty() ? dir_of(root) : lexically_normal(project_dir);
    Reader reader(source, project, root, pin_run_dir, install_project);
    try {
        auto read = reader.read_root();
        if (!read) return read.error();
    } catch (const YAML::Exception& e) {
        return make_error("cannot read " + root + ": " + e.msg);
    }
    ComposeModel model = reader.finish();
    if (model.services.size() > kMaxServices) {
        return make_error(root + " defines " + std::to_string(model.services.size()) +
                          " services; at most " + std::to_string(kMaxServices) +
                          " can be bridged (pass --services)");
    }
    return model;
}

}  // namespace hb::admin

#include "admin/compose/compose_render.hpp"

#include <algorithm>

#include "admin/util/fs_util.hpp"
#include "common/sha256.hpp"

namespace hb::admin {

RenderPlan plan_render(const std::string& project_dir, const ComposeModel& model) {
    RenderPlan plan;
    for (const auto& r : model.rendered) {
        if (!path_is_within(r.file, project_dir)) continue;
        plan.files.push_back(
            {r.file.substr(project_dir.size() + 1), r.text, common::sha256_hex(r.text)});
    }
    std::sort(plan.files.begin(), plan.files.end(),
              [](const RenderedFile& a, const RenderedFile& b) { return a.rel < b.rel; });
    plan.checkout_paths = model.checkout_paths;
    plan.pinned_sources = model.pinned_sources;
    plan.definitions = model.definitions;
    return plan;
}

std::map<std::string, std::string> bridged_definitions(const RenderPlan& plan,
                                                       const std::vector<std::string>& services) {
    std::map<std::string, std::string> out;
    for (const auto& [service, hash] : plan.definitions) {
        if (std::find(services.begin(), services.end(), service) != services.end())
            out.emplace(service, hash);
    }
    return out;
}

std::string rendered_dir(const InstallPaths& paths) {
    return paths.state_dir + "/rendered";
}

std::string rendered_copy_path(const InstallPaths& paths, const std::string& rel) {
    return rendered_dir(paths) + "/" + rel;
}

Result<std::optional<std::string>> read_rendered_copy(const InstallPaths& paths,
                                                      const std::string& rel) {
    return read_file_if_exists(rendered_copy_path(paths, rel), kMaxComposeFileBytes * 8);
}

Result<int> store_rendered(const InstallPaths& paths, const RenderPlan& plan,
                           const std::vector<std::string>& stale) {
    int changed = 0;
    if (auto made = make_dirs(rendered_dir(paths), 0700); !made) return made.error();
    for (const auto& file : plan.files) {
        const std::string copy = rendered_copy_path(paths, file.rel);
        if (auto made = make_dirs(copy.substr(0, copy.rfind('/')), 0700); !made) {
            return made.error();
        }
        auto wrote = write_file_if_changed(copy, file.text, 0600);
        if (!wrote) return wrote.error();
        if (*wrote != WriteOutcome::Unchanged) ++changed;
    }
    for (const auto& rel : stale) {
        bool kept = std::any_of(plan.files.begin(), plan.files.end(),
                                [&](const RenderedFile& f) { return f.rel == rel; });
        if (kept) continue;
        auto removed = remove_file(rendered_copy_path(paths, rel));
        if (!removed) return removed.error();
        if (*removed) ++changed;
    }
    return changed;
}

}  // namespace hb::admin

#include "admin/install/agent_files.hpp"

#include "admin/install/agent_doc.hpp"
#include "admin/install/agent_manifest.hpp"
#include "admin/install/spool_setup.hpp"
#include "admin/util/fs_util.hpp"
#include "common/policy.hpp"

namespace hb::admin {

Result<std::vector<std::pair<std::string, std::string>>> refresh_agent_files(const Config& config) {
    const std::string spool_rel = config.spool_dir.substr(config.project_dir.size() + 1);
    auto spool = open_spool(config.project_dir, spool_rel);
    if (!spool) return make_error(spool_refusal(spool.error().message));
    if (!spool->root) return make_error("the spool " + config.spool_dir + " is gone");
    const auto policy = common::load_policy(config.policy_file, config.services);
    std::vector<std::pair<std::string, std::string>> out;
    const std::string doc_shown = config.spool_dir + "/AGENT.md";
    auto doc = write_file_at_if_changed(spool->root.get(), "AGENT.md",
                                        render_agent_doc(config, policy, spool_rel),
                                        config.file_mode, doc_shown);
    if (!doc) return doc.error();
    out.emplace_back(doc_shown, *doc == WriteOutcome::Unchanged ? "no change" : "updated");
    // The binary stays as install left it; only its manifest follows the policy.
    auto dropped = drop_agent(spool->root.get(), config.spool_dir, std::nullopt,
                              render_agent_manifest(config, policy, spool_rel));
    if (!dropped) return make_error(spool_refusal(dropped.error().message));
    out.insert(out.end(), dropped->begin(), dropped->end());
    return out;
}

}  // namespace hb::admin

// `hostbridge`: the admin tool. Dispatches to one subcommand per file; no
// exception leaves main (docs/COMMANDS.md: exit 0 success, 1 failure, 2 usage).
#include <cstring>
#include <exception>
#include <iostream>
#include <string_view>

#include "admin/commands/commands.hpp"
#include "admin/util/args.hpp"
#include "client/request/audit_lookup.hpp"
#include "client/request/request.hpp"
#include "display/visible.hpp"
#include "packaging/version.hpp"

namespace {

const char* const kUsage = R"(usage: hostbridge COMMAND [OPTIONS]

The admin tool of hostbridge, a privilege-separated bridge that lets a
sandboxed agent ask the host for a fixed set of actions on a project.

  install     put the bridge in front of a project checkout (or update it)
  uninstall   remove an install (its state stays unless --purge)
  doctor      check an install end to end; print each problem and its fix
  approve     review and approve changed trusted files
  audit       read the audit log (table, --json, --follow, --verify)
  list        every install of this user, with the version each runs
  upgrade     bring every install up to this hostbridge (binaries, units)
  pending     the requests the policy holds for a person (MODE_<verb>=ask)
  allow       run a held request now, or grant a held verb for a while
  deny        refuse a held request
  revoke      end grants made by `allow --for`
  policy      `policy edit` (policy.conf in your editor) and `policy suggest`
  engine      `engine setup|remove` (root): the engine as its own user
  request     send a request through a spool (the agent client)

`hostbridge COMMAND --help` describes each command;
`hostbridge --version` prints the version.
Exit: 0 success, 1 failure, 2 usage error (`request`: see its --help).
)";

// Parsed, --help, --slug and the install located once, in run_subcommand.
const hb::admin::Subcommand* const kSubcommands[] = {
    &hb::admin::kUninstall, &hb::admin::kDoctor,  &hb::admin::kApprove, &hb::admin::kAudit,
    &hb::admin::kList,      &hb::admin::kUpgrade, &hb::admin::kPolicy,  &hb::admin::kPending,
    &hb::admin::kAllow,     &hb::admin::kDeny,    &hb::admin::kRevoke,
};

int dispatch(int argc, char** argv) {
    if (argc < 2) {
        std::cerr << kUsage;
        return hb::admin::kExitUsage;
    }
    const std::string_view command = argv[1];
    if (command == "--help" || command == "-h" || command == "help") {
        std::cout << kUsage;
        return hb::admin::kExitOk;
    }
    if (command == "--version") {
        std::cout << "hostbridge " << hb::kVersion << "\n";
        return hb::admin::kExitOk;
    }
    // Each subcommand sees argv starting at its own name.
    if (command == "install") return hb::admin::run_install(argc - 1, argv + 1);
    if (command == "engine") return hb::admin::run_engine(argc - 1, argv + 1);
    for (const hb::admin::Subcommand* sub : kSubcommands) {
        if (command == sub->name) return hb::admin::run_subcommand(*sub, argc - 1, argv + 1);
    }
    // The agent client takes the arguments after the word `request`.
    // On the host it reports what the audit log records (client/request/audit_lookup.hpp).
    if (command == "request")
        return hb::client::run_request(argc - 2, argv + 2, "hostbridge request",
                                       hb::client::audit_check);
    std::cerr << "hostbridge: unknown command " << hb::display::visible(command)
              << "; see hostbridge --help\n";
    return hb::admin::kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return dispatch(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "hostbridge: internal error: " << e.what() << "\n";
    } catch (...) {
        std::cerr << "hostbridge: internal error\n";
    }
    return hb::admin::kExitFailure;
}

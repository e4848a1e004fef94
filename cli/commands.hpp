// The subcommands of `hostbridge`, one file each. Each takes the argv that
// starts with its own name and returns the process exit code (0, 1, 2).
#pragma once

#include "cli/subcommand.hpp"

namespace hb::cli {

// Parses its own options (cli/install_options.cpp).
int run_install(int argc, char** argv);
// Root's `engine setup|remove` (cli/engine.cpp): no install of its own user.
int run_engine(int argc, char** argv);
// Rows of the dispatch table: run through run_subcommand.
extern const Subcommand kUninstall;
extern const Subcommand kDoctor;
extern const Subcommand kApprove;
extern const Subcommand kAudit;
extern const Subcommand kList;
extern const Subcommand kUpgrade;
extern const Subcommand kPending;
extern const Subcommand kAllow;
extern const Subcommand kDeny;
extern const Subcommand kPolicy;  // `policy suggest` (cli/policy_suggest.cpp)

}  // namespace hb::cli

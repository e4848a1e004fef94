// The subcommands of `hostbridge`, one file each. Each takes the argv that
// starts with its own name and returns the process exit code (0, 1, 2).
#pragma once

#include "admin/commands/subcommand.hpp"

namespace hb::admin {

// Parses its own options (admin/install/install_options.cpp).
int run_install(int argc, char** argv);
// Root's `engine setup|remove` (admin/commands/engine.cpp): no install of its own user.
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
extern const Subcommand kRevoke;  // admin/commands/grants.cpp
extern const Subcommand kPolicy;  // `policy suggest` (admin/commands/policy_suggest.cpp)

}  // namespace hb::admin

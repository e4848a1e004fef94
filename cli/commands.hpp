// The subcommands of `hostbridge`, one file each. Each takes the argv that
// starts with its own name and returns the process exit code (0, 1, 2).
#pragma once

namespace hb::cli {

int run_install(int argc, char** argv);
int run_uninstall(int argc, char** argv);
int run_doctor(int argc, char** argv);
int run_approve(int argc, char** argv);
int run_audit(int argc, char** argv);
int run_list(int argc, char** argv);
int run_upgrade(int argc, char** argv);

}  // namespace hb::cli

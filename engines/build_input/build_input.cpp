#include "engines/build_input/build_input.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "engines/build_input/build_snapshot.hpp"
#include "engines/build_input/screen_client.hpp"
#include "executor/run_tree.hpp"
#include "ipc/sys.hpp"
#include "ipc/unique_fd.hpp"

namespace hb::exec {
namespace {

constexpr const char* kBuildDir = ".hostbridge-build";  // as snapshot_dir(), argv_table.cpp
constexpr const char* kTmpDir = ".hostbridge-tmp";
constexpr const char* kHeldDir = ".hostbridge-held";  // one dir per held request
constexpr int kDirOpen = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

// A directory of ours directly under run_dir, made 0700 when missing.
Result<UniqueFd> own_subdir(int run_fd, const std::string& run_dir, const char* name) {
    if (::mkdirat(run_fd, name, 0700) != 0 && errno != EEXIST) {
        return make_error(sys::errno_text("cannot create " + run_dir + "/" + name));
    }
    UniqueFd dir(::openat(run_fd, name, kDirOpen));
    if (!dir) return make_error(sys::errno_text("cannot open " + run_dir + "/" + name));
    struct stat st {};
    if (::fstat(dir.get(), &st) != 0 || st.st_uid != ::geteuid() || (st.st_mode & 077) != 0) {
        return make_error(run_dir + "/" + name + " is not a private directory of ours");
    }
    return dir;
}

// The build's TMPDIR, made anew: whatever an earlier build left there
// (buildah's cache of a mount, a link a build step planted in it) is gone
// before the builder runs. Refused when it cannot be emptied: rootless
// buildah can leave files of a subordinate uid that only `podman unshare`
// removes.
Result<void> fresh_tmp_dir(int run_fd, const std::string& run_dir) {
    if (auto removed = remove_tree(run_fd, kTmpDir); !removed) {
        return make_error("cannot empty the build's TMPDIR " + run_dir + "/" + kTmpDir + ": " +
                          removed.error().message +
                          " (remove it by hand, with `podman unshare rm -rf` if need be)");
    }
    if (auto made = own_subdir(run_fd, run_dir, kTmpDir); !made) return made.error();
    return {};
}

// The Containerfile inside the snapshot, never through a symlink: the
// builder reads it by path, and the screen must read the same bytes.
Result<UniqueFd> open_containerfile(const std::string& snapshot, const std::string& rel) {
    UniqueFd root(::open(snapshot.c_str(), kDirOpen));
    if (!root) return make_error(sys::errno_text("cannot open the snapshot " + snapshot));
    open_how how{};
    how.flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    const long fd = ::syscall(SYS_openat2, root.get(), rel.c_str(), &how, sizeof how);
    if (fd < 0) {
        if (errno == ENOENT) return make_error("the build context has no " + rel);
        if (errno == ELOOP || errno == EXDEV) {
            return make_error(rel +
                              " is a symlink or lies under one; the bridge builds only "
                              "from a regular file");
        }
        return make_error(sys::errno_text("cannot open " + rel + " in the snapshot"));
    }
    UniqueFd file(static_cast<int>(fd));
    struct stat st {};
    if (::fstat(file.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
        return make_error(rel + " is not a regular file");
    }
    return file;
}

// The Containerfile of the snapshot at `dir` through the screen in the
// sandbox: empty when accepted, else the refusal's sentence.
Result<void> screen_snapshot(const Config& config, const ServiceBuild& build,
                             const std::string& dir,
                             const std::vector<std::string>* allowed = nullptr) {
    auto containerfile = open_containerfile(dir, build.containerfile);
    if (!containerfile) return containerfile.error();
    auto verdict =
        screen_in_sandbox(config.parser, allowed ? *allowed : build_allowed_images(*config.build),
                          containerfile->get(), docker_compose(config.backend));
    if (!verdict) return make_error(build.containerfile + ": " + verdict.error().message);
    if (verdict->reason != ScreenReason::None) {
        std::string where = build.containerfile;
        if (verdict->line != 0) where += " line " + std::to_string(verdict->line);
        if (verdict->flag != ScreenFlag::None) {
            where += ": " + std::string(screen_flag_name(verdict->flag));
        }
        return make_error(where + ": " + std::string(screen_reason_text(verdict->reason)));
    }
    return {};
}

// services[index]'s build as bridge.json records it, or why there is none.
Result<const ServiceBuild*> recorded_build(const Config& config, std::size_t index) {
    if (index >= config.services.size()) return make_error("no such service");
    const ServiceBuild* build = find_build(config.build, config.services[index]);
    if (build == nullptr)
        return make_error("bridge.json records no build for " + config.services[index]);
    return build;
}

std::string held_root(const Config& config, const std::string& request) {
    return config.run_dir + "/" + kHeldDir + "/" + request;
}

}  // namespace

Result<std::string> hold_build(const Config& config, const std::string& request,
                               std::size_t index) {
    auto recorded = recorded_build(config, index);
    if (!recorded) return recorded.error();
    const ServiceBuild* build = *recorded;
    const std::string& service = config.services[index];
    auto run = open_run_dir(config.run_dir);
    if (!run) return run.error();
    auto held = own_subdir(run->get(), config.run_dir, kHeldDir);
    if (!held) return held.error();
    if (::mkdirat(held->get(), request.c_str(), 0700) != 0 && errno != EEXIST) {
        return make_error(sys::errno_text("cannot create " + held_root(config, request)));
    }
    const std::string dest = held_root(config, request) + "/" + service;
    const SnapshotBudget budget{config.build->max_files, config.build->max_bytes};
    auto snapshot = take_snapshot(config.snapshot, config.project_dir, build->context, dest, budget,
                                  config.spool_dir);
    Result<void> screened =
        snapshot ? screen_snapshot(config, *build, dest) : Result<void>(snapshot.error());
    if (!screened) {
        (void)remove_tree(held->get(), request);  // nothing is held: nothing kept
        return screened.error();
    }
    return snapshot->sha256;
}

void sweep_held_builds(const Config& config, const std::function<bool(const std::string&)>& live) {
    auto run = open_run_dir(config.run_dir);
    if (!run) return;
    UniqueFd held(::openat(run->get(), kHeldDir, kDirOpen));
    if (!held) return;
    std::vector<std::string> names;
    if (!sys::list_dir(held.get(), names)) return;
    for (const std::string& name : names) {
        if (!live(name)) (void)remove_tree(held.get(), name);
    }
}

Result<nlohmann::ordered_json> prepare_build(const Config& config, std::size_t index,
                                             const HeldBuild* held, const BaseCheck& base_check,
                                             const std::vector<std::string>* allowed) {
    auto recorded = recorded_build(config, index);
    if (!recorded) return recorded.error();
    const ServiceBuild* build = *recorded;
    const std::string& service = config.services[index];

    auto run = open_run_dir(config.run_dir);
    if (!run) return run.error();
    auto builds = own_subdir(run->get(), config.run_dir, kBuildDir);
    if (!builds) return builds.error();
    if (auto tmp = fresh_tmp_dir(run->get(), config.run_dir); !tmp) return tmp.error();
    // A stale id must never be reported as this build's.
    const std::string iid = service + ".iid";
    if (::unlinkat(builds->get(), iid.c_str(), 0) != 0 && errno != ENOENT) {
        return make_error(sys::errno_text("cannot remove the old image id file"));
    }

    const SnapshotBudget budget{config.build->max_files, config.build->max_bytes};
    // A held build copies what the person was shown (host-owned, in
    // run_dir) and checks it is still that; any other takes the checkout.
    auto snapshot = held ? take_snapshot(config.snapshot, held_root(config, held->request), service,
                                         snapshot_dir(config, service), budget)
                         : take_snapshot(config.snapshot, config.project_dir, build->context,
                                         snapshot_dir(config, service), budget, config.spool_dir);
    if (!snapshot && held) {
        return make_error("the snapshot held for a person could not be read: " +
                          snapshot.error().message);
    }
    if (!snapshot) return snapshot.error();
    if (held && snapshot->sha256 != held->sha256) {
        return make_error("the snapshot held for a person is not the one shown (" +
                          snapshot->sha256.substr(0, 16) + " where " + held->sha256.substr(0, 16) +
                          " was shown)");
    }
    if (auto screened = screen_snapshot(config, *build, snapshot->dir, allowed); !screened) {
        return screened.error();
    }

    if (base_check) {
        if (auto checked = base_check(builds->get(), snapshot->sha256); !checked) {
            return checked.error();
        }
    }

    nlohmann::ordered_json detail;
    detail["snapshot_sha256"] = snapshot->sha256;
    detail["snapshot_files"] = snapshot->files;
    detail["snapshot_bytes"] = snapshot->bytes;
    return detail;
}

Result<void> discard_build_tmp(const Config& config) {
    auto run = open_run_dir(config.run_dir);
    if (!run) return run.error();
    return remove_tree(run->get(), kTmpDir);
}

namespace {

// <service>.built in the builds dir: "SNAPSHOT STEP" while its build runs,
// then "SNAPSHOT STEP IMAGE" once it went live; replaced whole (a rename).
Result<void> write_record(const Config& config, std::string_view service, const std::string& text) {
    const std::string path = snapshot_dir(config, service) + ".built";
    const std::string tmp = path + ".tmp";
    (void)::unlink(tmp.c_str());
    UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd || !sys::write_all(fd.get(), text) || ::rename(tmp.c_str(), path.c_str()) != 0) {
        return make_error(sys::errno_text("cannot write " + path));
    }
    return {};
}

std::vector<std::string> read_record(const Config& config, std::string_view service) {
    UniqueFd fd(::open((snapshot_dir(config, service) + ".built").c_str(),
                       O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    std::string text;
    std::vector<std::string> words;
    if (!fd || !sys::read_all(fd.get(), text, 256)) return words;
    for (std::size_t at = 0, end = 0; at < text.size(); at = end + 1) {
        end = std::min(text.find_first_of(" \n", at), text.size());
        if (end > at) words.push_back(text.substr(at, end - at));
    }
    return words;
}

}  // namespace

Result<void> note_build_input(const Config& config, std::string_view service,
                              const std::string& snapshot_sha256, const std::string& step_sha256) {
    return write_record(config, service, snapshot_sha256 + " " + step_sha256 + "\n");
}

Result<void> record_build_live(const Config& config, std::string_view service,
                               const std::string& image_id) {
    const std::vector<std::string> input = read_record(config, service);
    if (input.size() != 2) return {};
    return write_record(config, service, input[0] + " " + input[1] + " " + image_id + "\n");
}

std::optional<BuildRecord> read_build_record(const Config& config, std::string_view service) {
    const std::vector<std::string> words = read_record(config, service);
    if (words.size() != 3 || !sys::is_lower_hex(words[0], 64) || !sys::is_lower_hex(words[1], 64) ||
        !words[2].starts_with("sha256:") ||
        !sys::is_lower_hex(std::string_view(words[2]).substr(7), 64)) {
        return std::nullopt;
    }
    return BuildRecord{words[0], words[1], words[2]};
}

std::string read_image_id(const Config& config, std::string_view service) {
    UniqueFd fd(::open(image_id_file(config, service).c_str(),
                       O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!fd) return {};
    std::string text;
    if (!sys::read_all(fd.get(), text, 128)) return {};
    while (!text.empty() && text.back() == '\n') text.pop_back();
    const bool shaped =
        text.starts_with("sha256:") && sys::is_lower_hex(std::string_view(text).substr(7), 64);
    return shaped ? text : std::string();
}

std::vector<std::string> build_environment(const Config& config, std::size_t index, bool told) {
    std::vector<std::string> env = {"TMPDIR=" + config.run_dir + "/" + kTmpDir};
    if (told) {
        const std::string& service = config.services.at(index);
        const ServiceBuild* build = find_build(config.build, service);
        const std::string snapshot = snapshot_dir(config, service);
        env.push_back("HOSTBRIDGE_SERVICE=" + service);
        env.push_back("HOSTBRIDGE_BUILD_CONTEXT=" + snapshot);
        // Where a stack that builds with podman writes the new image's id
        // (--iidfile): the audit records it, the settle step expects it.
        env.push_back("HOSTBRIDGE_IIDFILE=" + image_id_file(config, service));
        if (build != nullptr)
            env.push_back("HOSTBRIDGE_CONTAINERFILE=" + snapshot + "/" + build->containerfile);
    }
    return env;
}

// Dot-named, so no project's basename (the run tree's name) can collide.
std::string snapshot_dir(const Config& config, std::string_view service) {
    return config.run_dir + "/" + kBuildDir + "/" + std::string(service);
}

std::string image_id_file(const Config& config, std::string_view service) {
    return config.run_dir + "/" + kBuildDir + "/" + std::string(service) + ".iid";
}

}  // namespace hb::exec

// `hostbridge engine setup|remove`: the engine as its own identity
// (docs/ENGINE-USER.md). Run as root once: creates (or removes) the engine
// user, its podman service and the person's access to its socket, and
// re-runs the person's install against it. Everything done inside the
// engine user's home is done as that user (a forked child that dropped to
// it): the home is the escape's reach in this mode, and a link planted there
// must not steer a write of root's.
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <sstream>

#include "admin/commands/commands.hpp"
#include "admin/install/engine_user.hpp"
#include "admin/install/install_record.hpp"
#include "admin/install/versions.hpp"
#include "admin/util/args.hpp"
#include "admin/util/fs_util.hpp"
#include "admin/util/paths.hpp"
#include "admin/util/process.hpp"
#include "admin/util/resolve_binary.hpp"
#include "admin/util/uid_processes.hpp"
#include "common/config.hpp"
#include "display/visible.hpp"
#include "ipc/sys.hpp"
#include "ipc/wire.hpp"

namespace hb::admin {

using display::visible;

namespace {

constexpr const char* kCmd = "engine";
// Root's own record of the users it created: a user without a file here is
// never touched (the engine user cannot write this directory).
constexpr const char* kMarkerDir = "/var/lib/hostbridge/engine-users";
constexpr const char* kSafePath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

const char* const kEngineHelp =
    R"(usage: hostbridge engine setup --slug SLUG --user PERSON [--name NAME]
                                [--containers-conf FILE]
       hostbridge engine setup --engine docker --slug SLUG --user PERSON
                                [--name NAME] [--docker-root DIR]
       hostbridge engine remove --slug SLUG --user PERSON [--name NAME]

Runs the project's containers and builds as a dedicated unprivileged user
(default NAME: hb-SLUG) with its own rootless podman service, so that an
engine escape lands as a user who owns nothing of PERSON's: no keys, no
credentials, no bridge.json, policy or audit log (docs/ENGINE-USER.md).
Run as root; without root it prints the commands to run.

setup   creates NAME (with subordinate ids) or reuses one it created, writes
        its ~/.config/systemd/user/hostbridge-engine.{socket,service}, lets
        PERSON alone open NAME's ~/engine/podman.sock, starts the service
        (a lingering user manager where systemd runs), and re-runs PERSON's
        install of SLUG with --engine-user NAME (with no install yet, it
        says to install with that option). Idempotent.
remove  re-runs PERSON's install without the engine user, then deletes NAME
        with its home: its images, containers and volumes go with it.

  --containers-conf FILE  copy FILE to NAME's ~/.config/containers/containers.conf
  --engine podman|docker  the engine NAME runs (default podman). docker: a
                          rootless dockerd under NAME's user manager, its
                          socket ~/engine/docker.sock for PERSON alone;
                          PERSON's install is not re-run: PERSON installs
                          with --engine-user NAME (docs/DOCKER.md)
  --docker-root DIR       where Debian 13's docker packages are unpacked
                          (DIR/usr/sbin/dockerd; default /, the system's)

Exit: 0 set up or removed, 1 failed (or not root: the commands to run printed),
2 usage error.
)";

const OptionSpec kOptions[] = {
    {"slug", true, false},   {"user", true, false},
    {"name", true, false},   {"containers-conf", true, false},
    {"engine", true, false}, {"docker-root", true, false},
};

// A group's name for a command line to print, or its number.
std::string group_name(gid_t gid) {
    const group* g = ::getgrgid(gid);
    return g != nullptr && g->gr_name != nullptr ? g->gr_name : std::to_string(gid);
}

void step(const std::string& what) {
    std::cout << "engine: " << what << "\n" << std::flush;
}

int fail(const std::string& sentence) {
    print_error(kCmd, sentence);
    return kExitFailure;
}

std::string marker_path(const std::string& name) {
    return std::string(kMarkerDir) + "/" + name;
}

std::string marker_text(const std::string& person, const std::string& slug, bool docker) {
    return "person=" + person + "\nslug=" + slug + "\n" + (docker ? "engine=docker\n" : "");
}

// The marker says who NAME was made for, and which engine it runs (true:
// docker); anything else is not ours to touch.
Result<bool> check_marker(const std::string& name, const std::string& person,
                          const std::string& slug) {
    struct stat st {};
    const std::string path = marker_path(name);
    if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != 0)
        return make_error("user " + name +
                          " exists and was not created by `hostbridge engine setup` (no " + path +
                          "): refusing to touch it; pass another --name");
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    if (text.str() == marker_text(person, slug, true)) return true;
    if (text.str() != marker_text(person, slug, false))
        return make_error("user " + name + " was created for another bridge (" + path + " says:\n" +
                          visible(text.str()) + "): refusing to touch it");
    return false;
}

// Runs `body` in a child that became `who` (groups, gid, uid), and waits.
Result<void> as_user(const Account& who, const std::function<Result<void>()>& body) {
    std::cout.flush();
    const pid_t pid = ::fork();
    if (pid < 0) return make_error(sys::errno_text("fork"));
    if (pid == 0) {
        if (::setgroups(0, nullptr) != 0 || ::setresgid(who.gid, who.gid, who.gid) != 0 ||
            ::setresuid(who.uid, who.uid, who.uid) != 0 || ::geteuid() != who.uid) {
            std::cerr << "hostbridge engine: cannot become " << who.name << "\n";
            ::_exit(1);
        }
        ::setenv("HOME", who.home.c_str(), 1);
        auto r = body();
        if (!r) std::cerr << "hostbridge engine: " << r.error().message << "\n";
        std::cout.flush();
        ::_exit(r ? 0 : 1);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return make_error("the step run as " + who.name + " failed (above)");
    return {};
}

Result<void> run_checked(const std::vector<std::string>& argv, bool show = true) {
    if (show) step("run: " + command_line(argv));
    RunOptions options;
    options.timeout = std::chrono::minutes(5);
    options.out = Stream::Inherit;
    options.err = Stream::Inherit;
    auto r = run_process(argv, options);
    if (!r) return r.error();
    if (!r->ok())
        return make_error(command_line(argv) + " failed (exit " + std::to_string(r->exit_code) +
                          ")");
    return {};
}

Result<void> make_dir(const std::string& path) {
    if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST)
        return make_error(sys::errno_text("mkdir " + path));
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        return make_error(path + " is not a directory");
    if (::chmod(path.c_str(), 0700) != 0) return make_error(sys::errno_text("chmod " + path));
    return {};
}

struct Tools {
    std::string podman, setfacl, setpriv, env, useradd, userdel, loginctl, systemctl;
    // --engine docker: where its packages are, and the relay its socket starts.
    std::optional<std::string> docker_root;
    std::string relay;
};

// What the docker engine user's units run (docs/DOCKER.md): the package's
// dockerd-rootless.sh and dockerd under `root`, the host's rootlesskit,
// slirp4netns and newuidmap, and this hostbridge's engine relay.
Result<void> find_docker_tools(Tools& t, const std::string& root) {
    // Both paths are written into unit files, where a space splits words,
    // `%` is a specifier and a newline starts a directive.
    const auto unit_safe = [](const std::string& path) {
        return !path.empty() && path[0] == '/' && path.find("/.") == std::string::npos &&
               path.find_first_not_of(
                   "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                   "0123456789/._+-") == std::string::npos;
    };
    if (!unit_safe(root))
        return make_error(
            "--docker-root must be an absolute path of letters, digits and "
            "/._+-, not " +
            visible(root));
    const std::string base = root == "/" ? "" : root;
    for (const std::string& file :
         {base + "/usr/sbin/dockerd", base + "/usr/share/docker.io/contrib/dockerd-rootless.sh"}) {
        if (::access(file.c_str(), X_OK) != 0)
            return make_error("no " + visible(file) +
                              ": docker's rootless daemon needs Debian 13's docker.io (or "
                              "--docker-root naming where it is unpacked; docs/DOCKER.md)");
    }
    for (const char* name : {"rootlesskit", "slirp4netns", "newuidmap"}) {
        if (!find_on_path(name, kSafePath))
            return make_error(std::string(name) +
                              " is not installed (apt-get install rootlesskit slirp4netns uidmap)");
    }
    auto relay = bundled_binary("hostbridge-engine-relay");
    if (!relay) return make_error("cannot find hostbridge-engine-relay beside hostbridge");
    if (!unit_safe(*relay))
        return make_error("the engine relay's path " + visible(*relay) +
                          " cannot be written into a unit (letters, digits and /._+- only)");
    t.docker_root = root;
    t.relay = *relay;
    return {};
}

Result<Tools> find_tools(bool docker) {
    Tools t;
    const std::pair<const char*, std::string*> wanted[] = {
        {"podman", &t.podman},       {"setfacl", &t.setfacl},
        {"setpriv", &t.setpriv},     {"env", &t.env},
        {"useradd", &t.useradd},     {"userdel", &t.userdel},
        {"systemctl", &t.systemctl},
    };
    for (const auto& [name, slot] : wanted) {
        if (docker && slot == &t.podman) continue;
        auto found = find_on_path(name, kSafePath);
        if (!found)
            return make_error(std::string(name) + " is not installed (" +
                              (std::string(name) == "setfacl" ? "apt-get install acl"
                               : std::string(name) == "podman"
                                   ? "apt-get install podman"
                                   : "apt-get install passwd util-linux") +
                              ")");
        *slot = *found;
    }
    if (auto found = find_on_path("loginctl", kSafePath)) t.loginctl = *found;
    return t;
}

// The person's install of `slug`, read where install writes it by default;
// nullopt where there is none yet (setup then leaves `install
// --engine-user` to the person).
Result<std::optional<InstallRecord>> person_record(const Account& person, const std::string& slug) {
    HostDirs dirs{person.home, person.home + "/.config", person.home + "/.local/state",
                  person.home + "/.local/lib", person.home + "/.cache"};
    const InstallPaths paths = install_paths(dirs, slug);
    auto record = load_install_record(paths.record_file);
    if (!record) return record.error();
    if (!*record) return std::optional<InstallRecord>();
    if ((*record)->reinstall_argv.empty())
        return make_error(paths.record_file + " records no install command to run again");
    return std::optional<InstallRecord>(**record);
}

// The person's install again, as the person, with or without the engine user.
// Without the engine user, an --agent-gid naming its group goes too: that
// group is deleted with it, and its gid may be given to another later.
Result<void> reinstall(const Tools& tools, const Account& person, const InstallRecord& record,
                       const std::optional<std::string>& engine_user,
                       std::optional<gid_t> engine_gid = std::nullopt) {
    std::vector<std::string> args;
    const auto& old = record.reinstall_argv;
    for (std::size_t i = 0; i < old.size(); ++i) {
        if (old[i] == "--engine-user" && i + 1 < old.size()) {
            ++i;
            continue;
        }
        if (!engine_user && engine_gid && old[i] == "--agent-gid" && i + 1 < old.size() &&
            old[i + 1] == std::to_string(*engine_gid)) {
            ++i;
            continue;
        }
        args.push_back(old[i]);
    }
    if (engine_user) args.insert(args.end(), {"--engine-user", *engine_user});
    const std::string runtime = "/run/user/" + std::to_string(person.uid);
    std::vector<std::string> argv = {tools.setpriv,
                                     "--reuid=" + std::to_string(person.uid),
                                     "--regid=" + std::to_string(person.gid),
                                     "--init-groups",
                                     "--",
                                     tools.env,
                                     "-i",
                                     "HOME=" + person.home,
                                     "USER=" + person.name,
                                     "LOGNAME=" + person.name,
                                     std::string("PATH=") + kSafePath};
    struct stat st {};
    if (::stat(runtime.c_str(), &st) == 0 && st.st_uid == person.uid)
        argv.push_back("XDG_RUNTIME_DIR=" + runtime);
    argv.push_back(self_dir() + "/hostbridge");
    argv.insert(argv.end(), args.begin(), args.end());
    return run_checked(argv);
}

bool systemd_booted() {
    struct stat st {};
    return ::lstat("/run/systemd/system", &st) == 0 && S_ISDIR(st.st_mode);
}

int print_as_root(const std::vector<std::string>& argv) {
    print_error(kCmd, "needs root (it creates a user); run:");
    std::vector<std::string> again = {"sudo", self_command(), "engine"};
    again.insert(again.end(), argv.begin() + 1, argv.end());
    print_fix(command_line(again), true);
    return kExitFailure;
}

// Where systemd is PID 1, NAME's lingering manager starts `socket_unit`;
// elsewhere it says who must start it.
Result<void> start_socket(const Tools& tools, const std::string& name, const char* socket_unit) {
    if (!systemd_booted() || tools.loginctl.empty()) {
        step("systemd is not running as PID 1 here, so no lingering manager starts " + name +
             "'s units: start its user manager yourself (the tests do it with "
             "tools/e2e/usermgr.sh), and " +
             socket_unit + " with it");
        return {};
    }
    if (auto r = run_checked({tools.loginctl, "enable-linger", name}); !r) return r;
    const std::string machine = "--machine=" + name + "@";
    (void)run_checked({tools.systemctl, machine, "--user", "daemon-reload"});
    return run_checked({tools.systemctl, machine, "--user", "restart", socket_unit});
}

// As the docker engine user: its home 0700 that the person may only pass,
// ~/engine, and its three units (docs/DOCKER.md), the socket enabled.
Result<void> write_docker_units(const Tools& t, const Account& p, const Account& e,
                                const std::string& slug) {
    const std::string& home = e.home;
    if (::chmod(home.c_str(), 0700) != 0) return make_error(sys::errno_text("chmod " + home));
    for (const std::string& dir :
         {home + "/engine", home + "/.config", home + "/.config/systemd",
          home + "/.config/systemd/user", home + "/.config/systemd/user/sockets.target.wants"}) {
        if (auto made = make_dir(dir); !made) return made;
    }
    for (const std::string& dir : {home, home + "/engine"}) {
        if (auto r = run_checked({t.setfacl, "-m", "u:" + p.name + ":x", dir}, false); !r) return r;
    }
    const std::string units = home + "/.config/systemd/user/";
    const std::pair<const char*, std::string> texts[] = {
        {kDockerSocketUnit, docker_socket_unit_text(p.name, slug, t.setfacl)},
        {kDockerRelayUnit, docker_relay_unit_text(p.name, p.uid, slug, t.relay)},
        {kDockerDaemonUnit, docker_daemon_unit_text(p.name, slug, *t.docker_root)},
    };
    for (const auto& [unit, text] : texts) {
        if (auto w = write_file_if_changed(units + unit, text, 0644); !w) return w.error();
    }
    const std::string link = units + "sockets.target.wants/" + kDockerSocketUnit;
    (void)::unlink(link.c_str());
    if (::symlink((units + kDockerSocketUnit).c_str(), link.c_str()) != 0)
        return make_error(sys::errno_text("symlink " + link));
    return {};
}

// The rest of setup for --engine docker: units, the manager where systemd
// runs, and no install re-run (the bridge does not use docker yet).
int setup_docker(const Tools& tools, const Account& person, const Account& engine,
                 const std::string& slug) {
    step("as " + engine.name + ": home 0700, " + person.name +
         " may pass it, ~/engine, the rootless dockerd's units");
    if (auto r = as_user(engine, [&]() { return write_docker_units(tools, person, engine, slug); });
        !r)
        return fail(r.error().message);
    if (auto r = start_socket(tools, engine.name, kDockerSocketUnit); !r)
        return fail(r.error().message);
    const std::string socket = docker_socket_in(engine.home);
    std::cout << "\nThe rootless dockerd of " << engine.name << " answers " << person.name << " at "
              << socket << " (its first call starts it).\n"
              << person.name << "'s install is not changed: as " << person.name
              << ", install a docker compose project with --engine-user " << engine.name
              << " (image-only services; docs/DOCKER.md).\n"
              << "As " << person.name << ", with the docker client of the same packages:\n"
              << "  DOCKER_HOST=unix://" << socket << " docker version\n"
              << "Undo: hostbridge engine remove --slug " << slug << " --user " << person.name
              << (engine.name == "hb-" + slug ? "" : " --name " + engine.name) << "\n";
    return kExitOk;
}

int setup(const Tools& tools, const Account& person, const std::string& slug,
          const std::string& name, const std::optional<std::string>& containers_conf) {
    const bool docker = tools.docker_root.has_value();
    auto record = person_record(person, slug);
    if (!record) return fail(record.error().message);
    std::string conf_text;
    if (containers_conf) {
        std::ifstream in(*containers_conf);
        if (!in) return fail("cannot read --containers-conf " + visible(*containers_conf));
        std::stringstream text;
        text << in.rdbuf();
        conf_text = text.str();
    }

    std::optional<Account> engine = account(name);
    if (engine) {
        auto ok = check_marker(name, person.name, slug);
        if (!ok) return fail(ok.error().message);
        if (*ok != docker)
            return fail("user " + name + " runs " + (*ok ? "docker" : "podman") + ", not " +
                        (docker ? "docker" : "podman") + ": `hostbridge engine remove` it first");
        step("user " + name + " exists (created for " + person.name + "'s " + slug + ")");
    } else {
        if (auto made = make_dir("/var/lib/hostbridge"); !made) return fail(made.error().message);
        if (::chmod("/var/lib/hostbridge", 0755) != 0)
            return fail("cannot chmod /var/lib/hostbridge");
        if (::mkdir(kMarkerDir, 0755) != 0 && errno != EEXIST)
            return fail(sys::errno_text(std::string("mkdir ") + kMarkerDir));
        // The marker first: a setup cut short leaves a user this command may finish.
        if (auto w =
                write_file_atomic(marker_path(name), marker_text(person.name, slug, docker), 0644);
            !w)
            return fail(w.error().message);
        // --user-group: a group of its own, whatever login.defs says, since
        // the person may share the checkout with it (docs/ENGINE-USER.md).
        if (auto r = run_checked({tools.useradd, "--create-home", "--user-group", "--shell",
                                  "/usr/sbin/nologin", "--comment",
                                  "hostbridge engine of " + person.name + " (" + slug + ")", name});
            !r)
            return fail(r.error().message);
        engine = account(name);
        if (!engine) return fail("useradd made no user " + name);
    }
    for (const char* file : {"/etc/subuid", "/etc/subgid"}) {
        std::ifstream in(file);
        std::string line;
        bool found = false;
        while (std::getline(in, line)) found = found || line.rfind(name + ":", 0) == 0;
        if (!found)
            return fail(name + " has no range in " + file +
                        " (a rootless engine needs one): usermod --add-subuids/--add-subgids it, "
                        "then run this again");
    }
    if (docker) return setup_docker(tools, person, *engine, slug);

    step("as " + name + ": home 0700, " + person.name + " may pass it, ~/engine, units");
    const std::string socket_unit = engine_socket_unit_text(person.name, slug, tools.setfacl);
    const std::string service_unit = engine_service_unit_text(person.name, slug, tools.podman);
    const Tools t = tools;
    const Account p = person;
    const Account e = *engine;
    auto prepared = as_user(e, [&]() -> Result<void> {
        const std::string& home = e.home;
        if (::chmod(home.c_str(), 0700) != 0) return make_error(sys::errno_text("chmod " + home));
        for (const std::string& dir :
             {home + "/engine", home + "/.config", home + "/.config/containers",
              home + "/.config/systemd", home + "/.config/systemd/user",
              home + "/.config/systemd/user/sockets.target.wants"}) {
            if (auto made = make_dir(dir); !made) return made;
        }
        // x only: the person opens the socket by name, and lists nothing.
        for (const std::string& dir : {home, home + "/engine"}) {
            if (auto r = run_checked({t.setfacl, "-m", "u:" + p.name + ":x", dir}, false); !r)
                return r;
        }
        const std::string storage = home + "/.config/containers/storage.conf";
        struct stat st {};
        if (::lstat(storage.c_str(), &st) != 0) {
            // Native overlay in a user namespace: much faster than vfs.
            if (auto w = write_file_atomic(storage, "[storage]\ndriver = \"overlay\"\n", 0600); !w)
                return w.error();
        }
        if (!conf_text.empty()) {
            if (auto w = write_file_if_changed(home + "/.config/containers/containers.conf",
                                               conf_text, 0600);
                !w)
                return w.error();
        }
        const std::string units = home + "/.config/systemd/user/";
        if (auto w = write_file_if_changed(units + kEngineSocketUnit, socket_unit, 0644); !w)
            return w.error();
        if (auto w = write_file_if_changed(units + kEngineServiceUnit, service_unit, 0644); !w)
            return w.error();
        const std::string link = units + "sockets.target.wants/" + kEngineSocketUnit;
        (void)::unlink(link.c_str());
        if (::symlink((units + kEngineSocketUnit).c_str(), link.c_str()) != 0)
            return make_error(sys::errno_text("symlink " + link));
        return {};
    });
    if (!prepared) return fail(prepared.error().message);

    const std::string socket = engine_socket_in(engine->home);
    if (auto r = start_socket(tools, name, kEngineSocketUnit); !r) return fail(r.error().message);

    if (*record) {
        step("re-running " + person.name + "'s install of " + slug + " with --engine-user " + name);
        if (auto r = reinstall(tools, person, **record, name); !r) return fail(r.error().message);
    } else {
        // An install under another XDG_CONFIG_HOME is not found here either.
        step("no install of " + slug + " for " + person.name + " yet: install it as " +
             person.name + " with --slug " + slug + " --engine-user " + name);
    }

    const std::string engine_group = group_name(engine->gid);
    std::cout << "\nThe engine of " << slug << " is now " << name << "'s rootless podman, at "
              << socket << ".\n"
              << "Images, containers and volumes you made before stay in your own storage: "
                 "the engine user starts with none (build or pull them again through it).\n"
              << "See and manage the project's containers as " << person.name << ":\n"
              << "  CONTAINER_HOST=unix://" << socket << " podman ps -a\n"
              << "The agent's container may run there too (join-network needs both on one "
                 "engine): the same podman run, with that CONTAINER_HOST. Its root is "
              << name << " on this host, so share the checkout through " << name
              << "'s group (docs/ENGINE-USER.md, \"The agent's container\"):\n"
              << "  usermod -a -G " << engine_group << " " << person.name
              << "   (as root; then log in again)\n"
              << "  chgrp -R " << engine_group
              << " CHECKOUT && chmod -R g+w CHECKOUT && "
                 "find CHECKOUT -type d -exec chmod g+s {} +\n"
              << "  hostbridge install ... --engine-user " << name << " --agent-gid " << engine->gid
              << "\n"
              << "Undo: hostbridge engine remove --slug " << slug << " --user " << person.name
              << (name == "hb-" + slug ? "" : " --name " + name) << "\n";
    return kExitOk;
}

int remove(const Tools& tools, const Account& person, const std::string& slug,
           const std::string& name) {
    const std::optional<Account> engine = account(name);
    if (!engine) {
        (void)::unlink(marker_path(name).c_str());
        step("no user " + name + ": nothing to remove");
        return kExitOk;
    }
    const auto docker = check_marker(name, person.name, slug);
    if (!docker) return fail(docker.error().message);
    if (*docker) {
        step("its docker engine was never in " + person.name + "'s install: nothing to re-run");
    } else if (auto record = person_record(person, slug); record && *record) {
        step("re-running " + person.name + "'s install of " + slug + " without the engine user");
        if (auto r = reinstall(tools, person, **record, std::nullopt, engine->gid); !r)
            return fail(r.error().message);
        step("a checkout you shared with " + name + "'s group stays in it: chgrp -R " +
             group_name(person.gid) + " it (docs/ENGINE-USER.md, \"The agent's container\")");
    } else {
        step((record ? "no install of " + slug + " for " + person.name : record.error().message) +
             "; going on");
    }
    if (systemd_booted() && !tools.loginctl.empty())
        (void)run_checked({tools.loginctl, "disable-linger", name});
    step("stopping what " + name + " runs, as itself and as its subordinate ids");
    // Its containers run as its subordinate ids too (a service with a
    // `user:`), which no `pkill -u` reaches; userdel frees the range for
    // the next user. dockerd stops its containers on SIGTERM: it gets 10 s.
    std::vector<UidRange> ids{{engine->uid, 1}};
    std::ifstream subuid("/etc/subuid");
    const std::string text((std::istreambuf_iterator<char>(subuid)), {});
    for (const UidRange& r : subordinate_ranges(text, name, engine->uid)) ids.push_back(r);
    if (!end_processes_with_uid_in(ids, *docker ? 10000 : 300))
        return fail("processes of " + name + " or of its subordinate ids are still running");
    step("deleting " + name + " and its home (its images, containers and volumes go with it)");
    if (auto r = run_checked({tools.userdel, "--remove", name}); !r) {
        // Rootless storage holds files of subordinate ids that userdel may
        // leave behind; the user is gone either way.
        if (account(name)) return fail(r.error().message);
    }
    if (!engine->home.empty() && engine->home != "/" && ::access(engine->home.c_str(), F_OK) == 0)
        (void)run_checked({"/usr/bin/rm", "-rf", "--one-file-system", engine->home});
    (void)::unlink(marker_path(name).c_str());
    std::cout << "The engine of " << slug << " is " << person.name << "'s own again.\n";
    return kExitOk;
}

}  // namespace

int run_engine(int argc, char** argv) {
    auto parsed =
        parse_args(std::span<char* const>(argv, static_cast<std::size_t>(argc)), kOptions, 1);
    if (!parsed) {
        print_error(kCmd, parsed.error().message);
        return kExitUsage;
    }
    if (parsed->help) {
        std::cout << kEngineHelp;
        return kExitOk;
    }
    const std::string action = parsed->positional.empty() ? "" : parsed->positional[0];
    const auto slug = parsed->get("slug");
    const auto user = parsed->get("user");
    if ((action != "setup" && action != "remove") || !slug || !user) {
        std::cerr << kEngineHelp;
        return kExitUsage;
    }
    if (!is_valid_slug(*slug)) return print_error(kCmd, "bad --slug " + visible(*slug)), kExitUsage;
    const std::string name = parsed->get("name").value_or("hb-" + *slug);
    if (!is_user_name(name))
        return print_error(kCmd,
                           "the engine user's name " + visible(name) +
                               " is not a login name (^[a-z_][a-z0-9_-]{0,31}$): pass --name"),
               kExitUsage;
    if (action == "remove" && parsed->has("containers-conf"))
        return print_error(kCmd, "--containers-conf is for setup"), kExitUsage;
    const std::string engine_kind = parsed->get("engine").value_or("podman");
    if (engine_kind != "podman" && engine_kind != "docker")
        return print_error(kCmd, "--engine must be podman or docker, not " + visible(engine_kind)),
               kExitUsage;
    const bool docker = engine_kind == "docker";
    if (action == "remove" && (parsed->has("engine") || parsed->has("docker-root")))
        return print_error(kCmd,
                           "--engine and --docker-root are for setup (remove reads which "
                           "engine the user runs from its marker)"),
               kExitUsage;
    if (docker && parsed->has("containers-conf"))
        return print_error(kCmd, "--containers-conf is podman's"), kExitUsage;
    if (!docker && parsed->has("docker-root"))
        return print_error(kCmd, "--docker-root is for --engine docker"), kExitUsage;
    if (::geteuid() != 0) {
        std::vector<std::string> words(argv, argv + argc);
        return print_as_root(words);
    }
    const std::optional<Account> person = account(*user);
    if (!person) return fail("no user " + visible(*user) + " on this host");
    if (person->uid == 0)
        return fail("the person must not be root: the engine user protects a person's files");
    if (name == *user) return fail("the engine user must not be the person");
    auto tools = find_tools(docker);
    if (!tools) return fail(tools.error().message);
    if (docker) {
        if (auto found = find_docker_tools(*tools, parsed->get("docker-root").value_or("/"));
            !found)
            return fail(found.error().message);
    }
    if (action == "setup")
        return setup(*tools, *person, *slug, name, parsed->get("containers-conf"));
    return remove(*tools, *person, *slug, name);
}

}  // namespace hb::admin

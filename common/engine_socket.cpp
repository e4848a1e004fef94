#include "common/engine_socket.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vector>

#include "ipc/sys.hpp"

namespace hb::common {

Result<PinnedEngineSocket> pin_engine_socket(const EngineIdentity& engine) {
    passwd pw{};
    passwd* found = nullptr;
    std::vector<char> buf(16384);
    if (::getpwnam_r(engine.user.c_str(), &pw, buf.data(), buf.size(), &found) != 0 || !found)
        return make_error("no user " + engine.user + " on this host, yet bridge.json names it");
    const auto slash = engine.socket.rfind('/');
    if (engine.socket.empty() || engine.socket[0] != '/' || slash + 1 >= engine.socket.size())
        return make_error("the engine socket " + engine.socket + " is not an absolute file path");
    // The directories above are the engine user's to arrange: whatever they
    // lead to, only the last name is opened, without following it.
    const std::string dir = slash == 0 ? "/" : engine.socket.substr(0, slash);
    UniqueFd parent(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!parent) return make_error(sys::errno_text("the engine socket's directory " + dir));
    UniqueFd fd(
        ::openat(parent.get(), engine.socket.c_str() + slash + 1, O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) return make_error(sys::errno_text("the engine socket " + engine.socket));
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0)
        return make_error(sys::errno_text("the engine socket " + engine.socket));
    if (S_ISLNK(st.st_mode))
        return make_error("the engine socket " + engine.socket +
                          " is a link, which the bridge never follows: the engine user (or an "
                          "escape as it) may have pointed it at another engine");
    if (!S_ISSOCK(st.st_mode))
        return make_error("the engine socket " + engine.socket + " is not a socket");
    if (st.st_uid != found->pw_uid)
        return make_error("the engine socket " + engine.socket + " belongs to uid " +
                          std::to_string(st.st_uid) + ", not to " + engine.user);
    PinnedEngineSocket out;
    out.fd = std::move(fd);
    out.uid = found->pw_uid;
    return out;
}

}  // namespace hb::common

#include "common/sha256.hpp"

#include <openssl/evp.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "ipc/sys.hpp"

namespace hb::common {
namespace {

struct CtxDeleter {
    void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};
using Ctx = std::unique_ptr<EVP_MD_CTX, CtxDeleter>;

Ctx new_ctx() {
    Ctx ctx(EVP_MD_CTX_new());
    if (ctx && EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) ctx.reset();
    return ctx;
}

std::string finish_hex(EVP_MD_CTX* ctx) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (EVP_DigestFinal_ex(ctx, md, &len) != 1) return {};
    return sys::lower_hex(md, len);
}

}  // namespace

std::string sha256_hex(std::string_view bytes) {
    Ctx ctx = new_ctx();
    // OpenSSL failing to hash in memory is not a state we can run on.
    if (!ctx || EVP_DigestUpdate(ctx.get(), bytes.data(), bytes.size()) != 1) std::abort();
    std::string hex = finish_hex(ctx.get());
    if (hex.empty()) std::abort();
    return hex;
}

Result<std::string> sha256_fd(int fd, std::uint64_t max_bytes) {
    Ctx ctx = new_ctx();
    if (!ctx) return make_error("sha256: OpenSSL could not initialise a digest");
    char buf[64 * 1024];
    std::uint64_t total = 0;
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return make_error(sys::errno_text("read failed"));
        if (n == 0) break;
        total += static_cast<std::uint64_t>(n);
        if (total > max_bytes)
            return make_error("more than " + std::to_string(max_bytes) + " bytes");
        if (EVP_DigestUpdate(ctx.get(), buf, static_cast<std::size_t>(n)) != 1) {
            return make_error("sha256: OpenSSL digest update failed");
        }
    }
    std::string hex = finish_hex(ctx.get());
    if (hex.empty()) return make_error("sha256: OpenSSL digest final failed");
    return hex;
}

}  // namespace hb::common

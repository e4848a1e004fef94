// The grammar is docker/distribution's reference grammar, narrowed: no upper
// case in a domain or path (the builder refuses those in a repository; a
// domain is refused rather than folded), digests sha256 only.
#include "ipc/image_ref.hpp"

#include <algorithm>
#include <string>

namespace hb {
namespace {

constexpr std::size_t npos = std::string_view::npos;
constexpr std::size_t kDigestHex = 64;

bool is_lower_alnum(char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

bool is_hex(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
    });
}

// A path component: lower-case letters and digits, separated by one '.',
// one or two '_', or any run of '-'.
bool is_path_component(std::string_view s) {
    if (s.empty() || !is_lower_alnum(s.front()) || !is_lower_alnum(s.back())) return false;
    for (std::size_t i = 0; i < s.size();) {
        if (is_lower_alnum(s[i])) {
            ++i;
            continue;
        }
        std::size_t end = i;
        while (end < s.size() && !is_lower_alnum(s[end])) ++end;
        const std::string_view sep = s.substr(i, end - i);
        const bool dashes = sep.find_first_not_of('-') == npos;
        if (sep != "." && sep != "_" && sep != "__" && !dashes) return false;
        i = end;
    }
    return true;
}

// host[:port]: dot-separated labels of [a-z0-9-] not starting or ending in '-'.
bool is_domain(std::string_view s) {
    const std::size_t colon = s.find(':');
    if (colon != npos) {
        const std::string_view port = s.substr(colon + 1);
        if (port.empty() || port.size() > 5 ||
            !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
            std::stoul(std::string(port)) > 65535)
            return false;
        s = s.substr(0, colon);
    }
    for (;;) {
        const std::size_t dot = s.find('.');
        const std::string_view label = s.substr(0, dot);
        if (label.empty() || label.front() == '-' || label.back() == '-') return false;
        if (!std::all_of(label.begin(), label.end(),
                         [](char c) { return is_lower_alnum(c) || c == '-'; }))
            return false;
        if (dot == npos) return true;
        s.remove_prefix(dot + 1);
    }
}

bool is_tag(std::string_view s) {
    const auto word = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_';
    };
    if (s.empty() || s.size() > 128 || !word(s.front())) return false;
    return std::all_of(s.begin(), s.end(), [&](char c) { return word(c) || c == '.' || c == '-'; });
}

bool is_digest(std::string_view s) {
    return s.starts_with("sha256:") && s.size() == 7 + kDigestHex && is_hex(s.substr(7));
}

// The first component is a domain when there is a '/' after it and it has
// a '.' or a ':' or is localhost (docker/distribution's splitDomain).
bool first_is_domain(std::string_view name) {
    const std::size_t slash = name.find('/');
    if (slash == npos) return false;
    const std::string_view first = name.substr(0, slash);
    return first == "localhost" || first.find_first_of(".:") != npos;
}

// `docker.io/PATH` with library/ added to a one-component path.
std::string docker_io(std::string_view path) {
    return path.find('/') == npos ? "docker.io/library/" + std::string(path)
                                  : "docker.io/" + std::string(path);
}

}  // namespace

std::optional<std::string> canonical_image_ref(std::string_view ref) {
    if (ref.empty() || ref.size() > kMaxImageRefBytes) return std::nullopt;
    if (ref.find("://") != npos) return std::nullopt;
    // An image id, whole.
    if (ref.size() == kDigestHex && is_hex(ref)) return "sha256:" + std::string(ref);
    if (is_digest(ref)) return std::string(ref);
    // Hex alone could be the prefix of some image's id.
    if (is_hex(ref)) return std::nullopt;

    std::string_view name = ref, tag, digest;
    if (const std::size_t at = name.find('@'); at != npos) {
        digest = name.substr(at + 1);
        name = name.substr(0, at);
        if (!is_digest(digest)) return std::nullopt;
    }
    if (const std::size_t colon = name.rfind(':'); colon != npos && name.find('/', colon) == npos) {
        tag = name.substr(colon + 1);
        name = name.substr(0, colon);
        if (!is_tag(tag)) return std::nullopt;
    }
    std::string domain;
    std::string_view path = name;
    if (first_is_domain(name)) {
        const std::size_t slash = name.find('/');
        domain = std::string(name.substr(0, slash));
        path = name.substr(slash + 1);
        if (!is_domain(domain)) return std::nullopt;
        if (domain == "index.docker.io") domain = "docker.io";
    }
    for (std::string_view rest = path;;) {
        const std::size_t slash = rest.find('/');
        if (!is_path_component(rest.substr(0, slash))) return std::nullopt;
        if (slash == npos) break;
        rest.remove_prefix(slash + 1);
    }
    std::string out = domain == "docker.io" ? docker_io(path)
                      : domain.empty()      ? std::string(path)
                                            : domain + "/" + std::string(path);
    if (!digest.empty()) {
        out += "@" + std::string(digest);
    } else {
        out += ":" + std::string(tag.empty() ? "latest" : tag);
    }
    if (out.size() > kMaxImageRefBytes) return std::nullopt;
    return out;
}

bool image_refs_match(std::string_view a, std::string_view b) {
    if (a == b) return true;
    // Ids match only themselves.
    if (is_digest(a) || is_digest(b)) return false;
    const bool a_short = !first_is_domain(a), b_short = !first_is_domain(b);
    if (a_short == b_short) return false;
    const std::string_view short_ref = a_short ? a : b;
    const std::string_view full = a_short ? b : a;
    return full == "localhost/" + std::string(short_ref) || full == docker_io(short_ref);
}

}  // namespace hb

#include "parser/image_config.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ipc/json_depth.hpp"

namespace hb::parser {
namespace {

using nlohmann::json;

// An image config is a few levels deep; a deeper one is not an engine's,
// and nlohmann's parser recurses per level.
constexpr std::size_t kMaxDepth = 16;

ImageConfigAnswer failed(std::uint32_t seq, ImageConfigStatus status) {
    return ImageConfigAnswer{seq, status, 0};
}

constexpr std::size_t kBlock = 512;
// A PAX record set or a GNU long name: a path, rarely more.
constexpr std::uint64_t kMaxMetaBytes = 64 * 1024;

std::uint64_t padded(std::uint64_t n) {
    return (n + kBlock - 1) / kBlock * kBlock;
}

bool read_exact(const ReadFn& read, std::uint8_t* buf, std::size_t n) {
    while (n > 0) {
        const ssize_t got = read(buf, n);
        if (got <= 0) return false;
        buf += got;
        n -= static_cast<std::size_t>(got);
    }
    return true;
}

bool skip(const ReadFn& read, std::uint64_t n) {
    std::vector<std::uint8_t> buf(64 * 1024);
    while (n > 0) {
        const ssize_t got =
            read(buf.data(), static_cast<std::size_t>(std::min<std::uint64_t>(n, buf.size())));
        if (got <= 0) return false;
        n -= static_cast<std::uint64_t>(got);
    }
    return true;
}

// A header's number: octal digits padded with spaces and NULs, or base-256
// (first byte 0x80) as Go's writer uses for large sizes.
std::optional<std::uint64_t> number(const std::uint8_t* f, std::size_t len) {
    std::uint64_t v = 0;
    if ((f[0] & 0x80) != 0) {
        if (f[0] != 0x80) return std::nullopt;  // negative, or too large
        for (std::size_t i = 1; i < len; ++i) {
            if ((v >> 56) != 0) return std::nullopt;
            v = (v << 8) | f[i];
        }
        return v;
    }
    std::size_t i = 0;
    while (i < len && f[i] == ' ') ++i;
    bool any = false;
    for (; i < len && f[i] >= '0' && f[i] <= '7'; ++i) {
        if ((v >> 60) != 0) return std::nullopt;
        v = v * 8 + static_cast<std::uint64_t>(f[i] - '0');
        any = true;
    }
    for (; i < len; ++i) {
        if (f[i] != ' ' && f[i] != 0) return std::nullopt;
    }
    return any ? std::optional<std::uint64_t>(v) : std::nullopt;
}

bool checksum_ok(const std::uint8_t* h) {
    const auto stored = number(h + 148, 8);
    if (!stored) return false;
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < kBlock; ++i) sum += (i >= 148 && i < 156) ? ' ' : h[i];
    return sum == *stored;
}

std::string field(const std::uint8_t* f, std::size_t len) {
    std::size_t n = 0;
    while (n < len && f[n] != 0) ++n;
    return {reinterpret_cast<const char*>(f), n};
}

// The config's name at the archive's top: <64 lowercase hex>.json.
bool is_config_name(std::string_view name) {
    if (name.starts_with("./")) name.remove_prefix(2);
    if (name.size() != 69 || !name.ends_with(".json")) return false;
    return std::all_of(name.begin(), name.begin() + 64,
                       [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::optional<std::uint64_t> decimal(std::string_view text) {
    if (text.empty() || text.size() > 19) return std::nullopt;
    std::uint64_t v = 0;
    for (const char c : text) {
        if (c < '0' || c > '9') return std::nullopt;
        v = v * 10 + static_cast<std::uint64_t>(c - '0');
    }
    return v;
}

// What a PAX header or a GNU long name says of the next entry.
struct NextEntry {
    std::optional<std::string> path;
    bool sized = false;
    std::uint64_t size = 0;
};

// PAX records, "LEN key=value\n" each: `path` and `size` for the next entry.
bool apply_pax(std::string_view data, NextEntry& next) {
    while (!data.empty()) {
        const std::size_t space = data.find(' ');
        const auto len =
            space == std::string_view::npos ? std::nullopt : decimal(data.substr(0, space));
        if (!len || *len > data.size() || *len < space + 3 || data[*len - 1] != '\n') return false;
        const std::string_view kv = data.substr(space + 1, *len - space - 2);
        const std::size_t eq = kv.find('=');
        if (eq == std::string_view::npos) return false;
        const std::string_view key = kv.substr(0, eq);
        const std::string_view value = kv.substr(eq + 1);
        if (key == "path") next.path = std::string(value);
        if (key == "size") {
            const auto size = decimal(value);
            if (!size) return false;
            next.sized = true;
            next.size = *size;
        }
        data.remove_prefix(*len);
    }
    return true;
}

}  // namespace

ImageConfigAnswer read_image_archive(const ReadFn& read, std::uint32_t seq) {
    std::vector<std::uint8_t> config;
    std::size_t configs = 0;
    NextEntry next;
    std::uint8_t h[kBlock];
    for (;;) {
        // A tar ends with a zero block; one cut short is not podman's.
        if (!read_exact(read, h, kBlock)) return failed(seq, ImageConfigStatus::BadArchive);
        if (std::all_of(h, h + kBlock, [](std::uint8_t b) { return b == 0; })) break;
        if (!checksum_ok(h)) return failed(seq, ImageConfigStatus::BadArchive);
        auto size = number(h + 124, 12);
        if (!size) return failed(seq, ImageConfigStatus::BadArchive);
        const char type = static_cast<char>(h[156]);
        if (type == 'x' || type == 'L') {  // for the next entry: PAX records, a GNU long name
            if (*size > kMaxMetaBytes) return failed(seq, ImageConfigStatus::BadArchive);
            std::vector<std::uint8_t> meta(*size);
            if (!read_exact(read, meta.data(), meta.size()) || !skip(read, padded(*size) - *size))
                return failed(seq, ImageConfigStatus::BadArchive);
            if (type == 'L') {
                next.path = field(meta.data(), meta.size());
            } else if (!apply_pax({reinterpret_cast<const char*>(meta.data()), meta.size()},
                                  next)) {
                return failed(seq, ImageConfigStatus::BadArchive);
            }
            continue;
        }
        std::string name = field(h, 100);
        if (std::equal(h + 257, h + 263, reinterpret_cast<const std::uint8_t*>("ustar\0"))) {
            const std::string prefix = field(h + 345, 155);
            if (!prefix.empty()) name = prefix + "/" + name;
        }
        if (next.path) name = *next.path;
        if (next.sized) size = next.size;
        next = NextEntry{};
        const bool regular = type == '0' || type == '\0';
        // Links, directories and devices carry no data in a tar.
        if (!regular && type != 'g' && *size != 0)
            return failed(seq, ImageConfigStatus::BadArchive);
        if (regular && is_config_name(name)) {
            if (++configs > 1) return failed(seq, ImageConfigStatus::NotOneConfig);
            if (*size > kMaxImageConfigBytes) return failed(seq, ImageConfigStatus::TooLarge);
            config.resize(*size);
            if (!read_exact(read, config.data(), config.size()) ||
                !skip(read, padded(*size) - *size))
                return failed(seq, ImageConfigStatus::BadArchive);
            continue;
        }
        if (!skip(read, padded(*size))) return failed(seq, ImageConfigStatus::BadArchive);
    }
    if (configs != 1) return failed(seq, ImageConfigStatus::NotOneConfig);
    return read_image_config(config, seq);
}

ImageConfigAnswer read_image_config(std::span<const std::uint8_t> bytes, std::uint32_t seq) {
    if (bytes.size() > kMaxImageConfigBytes) return failed(seq, ImageConfigStatus::TooLarge);
    const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    if (!json_depth_within(text, kMaxDepth)) return failed(seq, ImageConfigStatus::NotJson);
    const json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) return failed(seq, ImageConfigStatus::NotJson);
    if (!doc.is_object()) return failed(seq, ImageConfigStatus::BadShape);
    const auto config = doc.find("config");
    if (config == doc.end() || config->is_null()) return ImageConfigAnswer{seq, {}, 0};
    if (!config->is_object()) return failed(seq, ImageConfigStatus::BadShape);
    const auto onbuild = config->find("OnBuild");
    if (onbuild == config->end() || onbuild->is_null()) return ImageConfigAnswer{seq, {}, 0};
    if (!onbuild->is_array() || onbuild->size() > kMaxImageTriggers)
        return failed(seq, ImageConfigStatus::BadShape);
    for (const json& trigger : *onbuild) {
        if (!trigger.is_string()) return failed(seq, ImageConfigStatus::BadShape);
    }
    return ImageConfigAnswer{seq, ImageConfigStatus::Ok,
                             static_cast<std::uint32_t>(onbuild->size())};
}

}  // namespace hb::parser

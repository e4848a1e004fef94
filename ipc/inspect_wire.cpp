#include "ipc/inspect_wire.hpp"

#include <algorithm>

#include "ipc/enum_names.hpp"
#include "ipc/le_bytes.hpp"

namespace hb {
namespace {

using le::get_u16, le::get_u32, le::get_u64, le::put_u16, le::put_u32, le::put_u64;

constexpr auto kStateNames = dense_names<kLastContainerState>(
    {"unknown", "created", "configured", "running", "paused", "restarting", "removing", "stopping",
     "stopped", "exited", "dead"},
    "unknown");
constexpr auto kHealthNames = dense_names<kLastContainerHealth>(
    {"none", "starting", "healthy", "unhealthy", "unknown"}, "unknown");
constexpr auto kStatusTexts = dense_names<kLastInspectStatus>(
    {"ok", "the engine's answer is too large", "the engine's answer is not JSON",
     "the engine's answer does not have the shape of `container inspect`"},
    "unknown status");

bool all_zero(const std::uint8_t* p, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
        if (p[i] != 0) return false;
    }
    return true;
}

bool name_ok(std::string_view name) {
    return !name.empty() && name.size() <= kMaxInspectName;
}

}  // namespace

std::string_view container_state_name(ContainerState state) {
    return name_of(kStateNames, state);
}
std::string_view container_health_name(ContainerHealth health) {
    return name_of(kHealthNames, health);
}
std::string_view inspect_status_text(InspectStatus status) {
    return name_of(kStatusTexts, status);
}

Result<std::vector<std::uint8_t>> encode_inspect_request(const InspectRequest& request) {
    if (!name_ok(request.project)) return make_error("inspect request: bad project name");
    if (request.services.size() > kMaxInspectServices) {
        return make_error("inspect request: too many services");
    }
    std::vector<std::uint8_t> out(11);
    put_u32(out.data(), kInspectMagic);
    put_u32(out.data() + 4, request.seq);
    out[8] = static_cast<std::uint8_t>(request.project.size());
    out[9] = static_cast<std::uint8_t>(request.services.size());
    out[10] = request.install_label ? 1 : 0;
    out.insert(out.end(), request.project.begin(), request.project.end());
    for (const std::string& service : request.services) {
        if (!name_ok(service)) return make_error("inspect request: bad service name");
        out.push_back(static_cast<std::uint8_t>(service.size()));
        out.insert(out.end(), service.begin(), service.end());
    }
    return out;
}

Result<InspectRequest> decode_inspect_request(std::span<const std::uint8_t> bytes) {
    if (bytes.size() < 11 || bytes.size() > kInspectRequestMax) {
        return make_error("inspect request: wrong size");
    }
    if (get_u32(bytes.data()) != kInspectMagic) return make_error("inspect request: bad magic");
    InspectRequest r;
    r.seq = get_u32(bytes.data() + 4);
    const std::size_t project = bytes[8];
    const std::size_t count = bytes[9];
    if (count > kMaxInspectServices) return make_error("inspect request: too many services");
    if (bytes[10] > 1) return make_error("inspect request: bad install label flag");
    r.install_label = bytes[10] == 1;
    std::size_t at = 11;
    const auto take = [&](std::size_t n, std::string& into) {
        if (n == 0 || n > kMaxInspectName || at + n > bytes.size()) return false;
        into.assign(reinterpret_cast<const char*>(bytes.data() + at), n);
        at += n;
        return true;
    };
    if (!take(project, r.project)) return make_error("inspect request: bad project name");
    for (std::size_t i = 0; i < count; ++i) {
        if (at >= bytes.size()) return make_error("inspect request: truncated");
        const std::size_t n = bytes[at++];
        std::string name;
        if (!take(n, name)) return make_error("inspect request: bad service name");
        r.services.push_back(std::move(name));
    }
    if (at != bytes.size()) return make_error("inspect request: trailing bytes");
    return r;
}

std::array<std::uint8_t, kInspectAnswerSize> encode_inspect_answer(const InspectAnswer& answer) {
    std::array<std::uint8_t, kInspectAnswerSize> out{};
    put_u32(out.data(), kInspectMagic);
    put_u32(out.data() + 4, answer.seq);
    out[8] = static_cast<std::uint8_t>(answer.status);
    const std::size_t count = std::min(answer.containers.size(), kMaxInspectContainers);
    out[9] = static_cast<std::uint8_t>(count);
    put_u32(out.data() + 12, answer.total);
    for (std::size_t i = 0; i < count; ++i) {
        const ContainerFacts& c = answer.containers[i];
        std::uint8_t* p = out.data() + 16 + i * kInspectRecordSize;
        std::copy(c.id.begin(), c.id.end(), p);
        std::copy(c.image.begin(), c.image.end(), p + 32);
        put_u64(p + 64, static_cast<std::uint64_t>(c.started_ns));
        put_u32(p + 72, c.restarts);
        put_u32(p + 76, static_cast<std::uint32_t>(c.exit_code));
        put_u32(p + 80, c.pid);
        put_u16(p + 84, c.service);
        p[86] = static_cast<std::uint8_t>(c.state);
        p[87] = static_cast<std::uint8_t>(c.health);
        p[88] = c.labelled ? 1 : 0;
    }
    return out;
}

Result<InspectAnswer> decode_inspect_answer(std::span<const std::uint8_t> bytes,
                                            std::size_t services) {
    if (bytes.size() != kInspectAnswerSize) return make_error("inspect answer: wrong size");
    const std::uint8_t* p = bytes.data();
    if (get_u32(p) != kInspectMagic) return make_error("inspect answer: bad magic");
    if (p[8] > static_cast<std::uint8_t>(kLastInspectStatus)) {
        return make_error("inspect answer: status out of range");
    }
    if (p[10] != 0 || p[11] != 0) return make_error("inspect answer: padding not zero");
    InspectAnswer a;
    a.seq = get_u32(p + 4);
    a.status = static_cast<InspectStatus>(p[8]);
    a.total = get_u32(p + 12);
    const std::size_t count = p[9];
    if (count > kMaxInspectContainers) return make_error("inspect answer: too many records");
    if (count > a.total) return make_error("inspect answer: more records than containers");
    if (a.status != InspectStatus::Ok && (count != 0 || a.total != 0)) {
        return make_error("inspect answer: records with a refusal");
    }
    for (std::size_t i = 0; i < kMaxInspectContainers; ++i) {
        const std::uint8_t* r = p + 16 + i * kInspectRecordSize;
        if (i >= count) {
            if (!all_zero(r, kInspectRecordSize))
                return make_error("inspect answer: unused record not zero");
            continue;
        }
        if (!all_zero(r + 89, kInspectRecordSize - 89) || r[88] > 1) {
            return make_error("inspect answer: record padding not zero");
        }
        if (r[86] > static_cast<std::uint8_t>(kLastContainerState) ||
            r[87] > static_cast<std::uint8_t>(kLastContainerHealth)) {
            return make_error("inspect answer: state or health out of range");
        }
        ContainerFacts c;
        std::copy(r, r + 32, c.id.begin());
        std::copy(r + 32, r + 64, c.image.begin());
        c.started_ns = static_cast<std::int64_t>(get_u64(r + 64));
        c.restarts = get_u32(r + 72);
        c.exit_code = static_cast<std::int32_t>(get_u32(r + 76));
        c.pid = get_u32(r + 80);
        c.service = get_u16(r + 84);
        c.state = static_cast<ContainerState>(r[86]);
        c.health = static_cast<ContainerHealth>(r[87]);
        c.labelled = r[88] == 1;
        if (c.service != kNoService && c.service >= services) {
            return make_error("inspect answer: service index out of range");
        }
        if (c.started_ns < 0) return make_error("inspect answer: start time before 1970");
        if (all_zero(c.id.data(), c.id.size()))
            return make_error("inspect answer: no container id");
        a.containers.push_back(c);
    }
    return a;
}

std::string hex_id(const std::array<std::uint8_t, 32>& id) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    out.reserve(64);
    for (const std::uint8_t b : id) {
        out.push_back(kHex[b >> 4]);
        out.push_back(kHex[b & 0xF]);
    }
    return out;
}

bool parse_hex_id(std::string_view text, std::array<std::uint8_t, 32>& out) {
    if (text.size() != 64) return false;
    const auto nibble = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        return -1;
    };
    for (std::size_t i = 0; i < 32; ++i) {
        const int hi = nibble(text[2 * i]);
        const int lo = nibble(text[2 * i + 1]);
        if (hi < 0 || lo < 0) return false;
        out[i] = static_cast<std::uint8_t>((hi << 4) | lo);
    }
    return true;
}

}  // namespace hb

// The parser's half of the container-facts wire (ipc/inspect_wire.hpp): it
// decodes the executor's request and encodes its answer.
#include <algorithm>

#include "ipc/inspect_wire.hpp"
#include "ipc/le_bytes.hpp"

namespace hb {

using le::get_u32, le::put_u16, le::put_u32, le::put_u64;

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
    if (bytes[10] > 3) return make_error("inspect request: bad flags");
    r.install_label = (bytes[10] & 1) != 0;
    const bool definitions = (bytes[10] & 2) != 0;
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
        if (!definitions) continue;
        if (bytes.size() - at < 32) return make_error("inspect request: truncated");
        auto& hash = r.definitions.emplace_back();
        std::copy(bytes.begin() + static_cast<std::ptrdiff_t>(at),
                  bytes.begin() + static_cast<std::ptrdiff_t>(at + 32), hash.begin());
        at += 32;
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
        p[89] = static_cast<std::uint8_t>(c.definition);
    }
    return out;
}

}  // namespace hb

// The executor's half of the container-facts wire (ipc/inspect_wire.hpp): it
// encodes the request and decodes, strictly, the parser's answer.
#include <algorithm>

#include "ipc/inspect_wire.hpp"
#include "ipc/le_bytes.hpp"
#include "ipc/wire_layout.hpp"

namespace hb {
namespace {

using le::get_u16, le::get_u32, le::get_u64, le::put_u32;
using wire_layout::all_zero;

bool name_ok(std::string_view name) {
    return !name.empty() && name.size() <= kMaxInspectName;
}

}  // namespace

Result<std::vector<std::uint8_t>> encode_inspect_request(const InspectRequest& request) {
    if (!name_ok(request.project)) return make_error("inspect request: bad project name");
    if (request.services.size() > kMaxInspectServices) {
        return make_error("inspect request: too many services");
    }
    const bool definitions = !request.definitions.empty();
    if (definitions && request.definitions.size() != request.services.size()) {
        return make_error("inspect request: definitions are not one per service");
    }
    std::vector<std::uint8_t> out(11);
    put_u32(out.data(), kInspectMagic);
    put_u32(out.data() + 4, request.seq);
    out[8] = static_cast<std::uint8_t>(request.project.size());
    out[9] = static_cast<std::uint8_t>(request.services.size());
    out[10] = (request.install_label ? 1 : 0) | (definitions ? 2 : 0);
    out.insert(out.end(), request.project.begin(), request.project.end());
    for (std::size_t i = 0; i < request.services.size(); ++i) {
        const std::string& service = request.services[i];
        if (!name_ok(service)) return make_error("inspect request: bad service name");
        out.push_back(static_cast<std::uint8_t>(service.size()));
        out.insert(out.end(), service.begin(), service.end());
        if (definitions)
            out.insert(out.end(), request.definitions[i].begin(), request.definitions[i].end());
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
        if (!all_zero(r + 90, kInspectRecordSize - 90) || r[88] > 1) {
            return make_error("inspect answer: record padding not zero");
        }
        if (r[86] > static_cast<std::uint8_t>(kLastContainerState) ||
            r[87] > static_cast<std::uint8_t>(kLastContainerHealth) ||
            r[89] > static_cast<std::uint8_t>(kLastDefinitionMatch)) {
            return make_error("inspect answer: state, health or definition out of range");
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
        c.definition = static_cast<DefinitionMatch>(r[89]);
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

}  // namespace hb

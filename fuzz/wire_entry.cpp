// Invariants of the wire decoders on arbitrary bytes: they never crash, and
// whatever they accept re-encodes to exactly the same bytes (no two byte
// strings mean the same message, so nothing can be smuggled in padding).
#include <algorithm>
#include <functional>
#include <vector>

#include "fuzz/check.hpp"
#include "fuzz/entry.hpp"
#include "ipc/image_ref.hpp"
#include "ipc/screen_wire.hpp"
#include "ipc/wire.hpp"

namespace hb::fuzz {

void wire_one(const std::uint8_t* data, std::size_t size) {
    if (size < 1) return;
    const int selector = data[0] % 4;
    if (selector == 0) {
        if (size < 2) return;
        const std::size_t services = data[1] % (kMaxServices + 1);
        const std::span<const std::uint8_t> msg(data + 2, size - 2);
        auto v = decode_verdict(msg, services);
        if (!v) return;
        const auto again = encode_verdict(*v);
        HB_FUZZ_CHECK(std::equal(msg.begin(), msg.end(), again.begin(), again.end()));
        HB_FUZZ_CHECK(v->arg_index == kNoArg || v->arg_index < services);
        HB_FUZZ_CHECK(reason_valid_for_parser(v->reason, v->outcome));
        return;
    }
    const std::span<const std::uint8_t> msg(data + 1, size - 1);
    if (selector == 3) {
        // The screen's request: its images are a set, each in canonical form.
        auto q = decode_screen_request(msg);
        if (!q) return;
        auto again = encode_screen_request(*q);
        HB_FUZZ_CHECK(again.ok());
        HB_FUZZ_CHECK(std::equal(msg.begin(), msg.end(), again->begin(), again->end()));
        HB_FUZZ_CHECK(q->images.size() <= kMaxScreenImages);
        HB_FUZZ_CHECK(std::adjacent_find(q->images.begin(), q->images.end(),
                                         std::greater_equal<>()) == q->images.end());
        for (const auto& image : q->images) HB_FUZZ_CHECK(canonical_image_ref(image) == image);
        return;
    }
    if (selector == 1) {
        auto s = decode_startup(msg);
        if (!s) return;
        const std::vector<std::uint8_t> again = encode_startup(*s);
        HB_FUZZ_CHECK(std::equal(msg.begin(), msg.end(), again.begin(), again.end()));
        HB_FUZZ_CHECK(std::is_sorted(s->services.begin(), s->services.end()));
        HB_FUZZ_CHECK(std::includes(s->services.begin(), s->services.end(), s->buildable.begin(),
                                    s->buildable.end()));
        for (const auto& name : s->services) HB_FUZZ_CHECK(is_valid_arg_shape(name));
        return;
    }
    auto r = decode_request(msg);
    if (!r) return;
    const std::vector<std::uint8_t> again = encode_request(*r);
    HB_FUZZ_CHECK(std::equal(msg.begin(), msg.end(), again.begin(), again.end()));
    HB_FUZZ_CHECK(!r->basename.empty() && r->basename.size() <= kMaxBasename);
}

}  // namespace hb::fuzz

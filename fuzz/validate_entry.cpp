// Invariants of the pure validator on arbitrary input: it never crashes, is
// deterministic, and every verdict it makes is one the executor's strict
// decoder accepts (a verdict the executor calls garbage would turn a
// well-formed request into a "parser failure").
#include <algorithm>
#include <string>
#include <string_view>

#include "fuzz/check.hpp"
#include "fuzz/entry.hpp"
#include "ipc/wire.hpp"
#include "parser/validate.hpp"

namespace hb::fuzz {

void validate_one(const std::uint8_t* data, std::size_t size) {
    static const Startup enums{{"api", "db", "web", "worker"}, {"api", "web"}};
    const std::uint8_t* nl = std::find(data, data + size, static_cast<std::uint8_t>('\n'));
    const std::string_view name(reinterpret_cast<const char*>(data),
                                static_cast<std::size_t>(nl - data));
    const std::span<const std::uint8_t> body =
        nl == data + size ? std::span<const std::uint8_t>()
                          : std::span<const std::uint8_t>(nl + 1, data + size);

    const Verdict v = parser::validate(name, body, enums);
    HB_FUZZ_CHECK(v.seq == 0);

    const auto bytes = encode_verdict(v);
    auto decoded = decode_verdict(bytes, enums.services.size());
    HB_FUZZ_CHECK(decoded.ok());
    HB_FUZZ_CHECK(encode_verdict(*decoded) == bytes);
    HB_FUZZ_CHECK(encode_verdict(parser::validate(name, body, enums)) == bytes);

    if (v.outcome == Outcome::Accept) {
        // An accepted request names its verb in its file name, fits the size
        // limit, and a rebuild's arg is buildable.
        HB_FUZZ_CHECK(v.verb.has_value());
        HB_FUZZ_CHECK(body.size() <= kMaxBody);
        const std::string needle = "-" + std::string(verb_name(*v.verb)) + "-";
        HB_FUZZ_CHECK(name.find(needle) == 16);
        if (*v.verb == Verb::Rebuild) {
            const std::string& arg = enums.services.at(v.arg_index);
            HB_FUZZ_CHECK(std::binary_search(enums.buildable.begin(), enums.buildable.end(), arg));
        }
    }
}

}  // namespace hb::fuzz

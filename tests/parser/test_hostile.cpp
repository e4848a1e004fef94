// A table of hostile names and bodies, each with its exact expected outcome
// and reason. Every verdict must also survive the executor's strict decoder:
// the parser must never emit a verdict the executor would call garbage.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fixture.hpp"

namespace hb::parser {
namespace {

using namespace hb::parser::testing;

struct Case {
    std::string what;
    std::string name;
    std::string body;
    Outcome outcome;
    ReasonCode reason;
};

const std::string T = std::string(kTime);
std::string obj(const std::string& members) {
    return "{" + members + "}\n";
}
std::string at() {
    return "\"requested_at\":\"" + T + "\"";
}

std::vector<Case> cases() {
    const std::string restart = name_for("restart");
    const std::string ping = name_for("ping");
    const std::string deep_open(1500, '['), deep_close(1500, ']');
    std::string deep_objects;
    for (int i = 0; i < 400; ++i) deep_objects += "{\"a\":";
    deep_objects += "1" + std::string(400, '}');
    const auto Q = Outcome::Quarantine;
    const auto D = Outcome::Deny;
    const auto A = Outcome::Accept;
    using RC = ReasonCode;
    return {
        // --- nesting and numbers
        {"deep array nesting in a value", ping,
         obj("\"verb\":\"ping\"," + at() + ",\"x\":" + deep_open + deep_close), D, RC::UnknownKey},
        {"deep nesting as verb", ping, obj("\"verb\":" + deep_open + deep_close + "," + at()), D,
         RC::NotAString},
        {"deep object nesting", ping, obj("\"verb\":" + deep_objects + "," + at()), D,
         RC::NotAString},
        {"unclosed deep nesting", ping, "{\"verb\":" + deep_open, Q, RC::JsonSyntax},
        {"deep nesting at top level", ping, deep_open + deep_close, Q, RC::NotAnObject},
        {"huge integer", ping, obj("\"verb\":123456789012345678901234567890," + at()), D,
         RC::NotAString},
        {"number beyond double range", ping, obj("\"verb\":1e999999," + at()), Q, RC::JsonSyntax},
        {"negative zero", ping, obj("\"verb\":-0," + at()), D, RC::NotAString},
        {"leading zero number", ping, obj("\"verb\":01," + at()), Q, RC::JsonSyntax},
        {"NaN literal", ping, obj("\"verb\":NaN," + at()), Q, RC::JsonSyntax},
        // --- look-alikes of verbs
        {"cyrillic i in ping", ping, obj("\"verb\":\"p\xd1\x96ng\"," + at()), D, RC::UnknownVerb},
        {"fullwidth p in ping", ping, obj("\"verb\":\"\xef\xbd\x90ing\"," + at()), D,
         RC::UnknownVerb},
        {"zero width space in ping", ping, obj("\"verb\":\"pi\xe2\x80\x8bng\"," + at()), D,
         RC::UnknownVerb},
        {"uppercase verb", ping, obj("\"verb\":\"PING\"," + at()), D, RC::UnknownVerb},
        {"verb with trailing space", ping, obj("\"verb\":\"ping \"," + at()), D, RC::UnknownVerb},
        {"cyrillic e in exec", ping, obj("\"verb\":\"\xd0\xb5xec\"," + at()), D, RC::UnknownVerb},
        {"escaped ascii verb is the verb", ping, obj("\"verb\":\"p\\u0069ng\"," + at()), A,
         RC::None},
        {"escaped exec is exec", ping, obj("\"verb\":\"\\u0065xec\"," + at()), D,
         RC::HardcodedDeny},
        {"join_network with underscore", name_for("join-network"),
         obj("\"verb\":\"join_network\"," + at()), D, RC::UnknownVerb},
        // --- NUL, escapes, encodings
        {"\\u0000 escape in verb", ping, obj("\"verb\":\"ping\\u0000\"," + at()), D,
         RC::UnknownVerb},
        {"\\u0000 escape in arg", restart,
         obj("\"verb\":\"restart\",\"arg\":\"api\\u0000\"," + at()), D, RC::ArgShape},
        {"\\u0000 escape in key", ping, obj("\"verb\\u0000\":\"ping\"," + at()), D, RC::UnknownKey},
        {"raw NUL in a string", ping, std::string("{\"verb\":\"pi\0ng\",", 16) + at() + "}", Q,
         RC::NulByte},
        {"raw NUL after the object", ping, obj("\"verb\":\"ping\"," + at()) + std::string(1, '\0'),
         Q, RC::NulByte},
        {"overlong slash C0 AF", ping, obj("\"verb\":\"ping\"," + at() + ",\"x\":\"\xc0\xaf\""), Q,
         RC::InvalidUtf8},
        {"overlong 3-byte E0 80 AF", ping,
         obj("\"verb\":\"ping\"," + at() + ",\"x\":\"\xe0\x80\xaf\""), Q, RC::InvalidUtf8},
        {"overlong 4-byte F0 80 80 AF", ping,
         obj("\"verb\":\"ping\"," + at() + ",\"x\":\"\xf0\x80\x80\xaf\""), Q, RC::InvalidUtf8},
        {"raw UTF-8 surrogate ED A0 80", ping,
         obj("\"verb\":\"ping\"," + at() + ",\"x\":\"\xed\xa0\x80\""), Q, RC::InvalidUtf8},
        {"above U+10FFFF F4 90 80 80", ping,
         obj("\"verb\":\"ping\"," + at() + ",\"x\":\"\xf4\x90\x80\x80\""), Q, RC::InvalidUtf8},
        {"truncated multibyte at end", ping, obj("\"verb\":\"ping\"," + at()) + "\xe2\x82", Q,
         RC::InvalidUtf8},
        {"lone continuation byte", ping, obj("\"verb\":\"ping\"," + at() + ",\"x\":\"\x80\""), Q,
         RC::InvalidUtf8},
        {"latin-1 byte", ping, obj("\"verb\":\"ping\"," + at() + ",\"x\":\"caf\xe9\""), Q,
         RC::InvalidUtf8},
        {"lone surrogate escape", ping, obj("\"verb\":\"ping\"," + at() + ",\"x\":\"\\ud800\""), Q,
         RC::JsonSyntax},
        {"reversed surrogate pair escape", ping,
         obj("\"verb\":\"ping\"," + at() + ",\"x\":\"\\udc00\\ud800\""), Q, RC::JsonSyntax},
        {"valid surrogate pair escape", ping,
         obj("\"verb\":\"ping\"," + at() + ",\"x\":\"\\ud83d\\ude00\""), D, RC::UnknownKey},
        {"UTF-8 BOM", ping, "\xEF\xBB\xBF" + obj("\"verb\":\"ping\"," + at()), Q,
         RC::ByteOrderMark},
        {"BOM after whitespace", ping, " \xEF\xBB\xBF" + obj("\"verb\":\"ping\"," + at()), Q,
         RC::JsonSyntax},
        {"UTF-16LE BOM", ping, "\xFF\xFE{}", Q, RC::InvalidUtf8},
        {"raw control char in string", ping, obj("\"verb\":\"pi\tng\"," + at()), Q, RC::JsonSyntax},
        {"invalid escape", ping, obj("\"verb\":\"p\\ing\"," + at()), Q, RC::JsonSyntax},
        // --- JSON syntax
        {"trailing comma", ping, obj("\"verb\":\"ping\"," + at() + ","), Q, RC::JsonSyntax},
        {"single quotes", ping, "{'verb':'ping'}", Q, RC::JsonSyntax},
        {"comment", ping, "{/*x*/\"verb\":\"ping\"," + at() + "}", Q, RC::JsonSyntax},
        {"unquoted key", ping, "{verb:\"ping\"," + at() + "}", Q, RC::JsonSyntax},
        {"two objects", ping, obj("\"verb\":\"ping\"," + at()) + obj("\"verb\":\"ping\"," + at()),
         Q, RC::TrailingBytes},
        {"CRLF ending", ping, "{\"verb\":\"ping\"," + at() + "}\r\n", Q, RC::TrailingBytes},
        {"garbage after newline", ping, obj("\"verb\":\"ping\"," + at()) + "#", Q,
         RC::TrailingBytes},
        {"only a brace", ping, "{", Q, RC::JsonSyntax},
        {"closing brace only", ping, "}", Q, RC::JsonSyntax},
        {"array at top level", ping, "[" + obj("\"verb\":\"ping\"," + at()) + "]", Q,
         RC::NotAnObject},
        {"string at top level", ping, "\"ping\"\n", Q, RC::NotAnObject},
        {"empty object", ping, "{}\n", D, RC::MissingVerb},
        // --- duplicate keys
        {"duplicate verb", ping, obj("\"verb\":\"ping\",\"verb\":\"exec\"," + at()), Q,
         RC::DuplicateKey},
        {"duplicate via escape", ping, obj("\"verb\":\"ping\",\"v\\u0065rb\":\"ping\"," + at()), Q,
         RC::DuplicateKey},
        {"duplicate unknown key", ping, obj("\"verb\":\"ping\"," + at() + ",\"x\":1,\"x\":2"), Q,
         RC::DuplicateKey},
        {"duplicate in a nested object", ping,
         obj("\"verb\":\"ping\"," + at() + ",\"x\":{\"a\":1,\"a\":2}"), Q, RC::DuplicateKey},
        {"same key in sibling objects is fine", ping,
         obj("\"verb\":\"ping\"," + at() + ",\"x\":{\"a\":1},\"y\":{\"a\":2}"), D, RC::UnknownKey},
        // --- keys and types
        {"arrays as values", restart, obj("\"verb\":\"restart\",\"arg\":[\"api\"]," + at()), D,
         RC::NotAString},
        {"verb as array of the verb", ping, obj("\"verb\":[\"ping\"]," + at()), D, RC::NotAString},
        {"key with different case", ping, obj("\"Verb\":\"ping\"," + at()), D, RC::UnknownKey},
        {"requested_at as number", ping, obj("\"verb\":\"ping\",\"requested_at\":1795939200"), D,
         RC::NotAString},
        {"null arg", restart, obj("\"verb\":\"restart\",\"arg\":null," + at()), D, RC::NotAString},
        // --- args
        {"arg with ;", restart, obj("\"verb\":\"restart\",\"arg\":\"api;rm -rf /\"," + at()), D,
         RC::ArgShape},
        {"arg with $()", restart, obj("\"verb\":\"restart\",\"arg\":\"$(id)\"," + at()), D,
         RC::ArgShape},
        {"arg with backticks", restart, obj("\"verb\":\"restart\",\"arg\":\"`id`\"," + at()), D,
         RC::ArgShape},
        {"arg ..", restart, obj("\"verb\":\"restart\",\"arg\":\"..\"," + at()), D, RC::ArgShape},
        {"arg ../api", restart, obj("\"verb\":\"restart\",\"arg\":\"../api\"," + at()), D,
         RC::ArgShape},
        {"arg uppercase", restart, obj("\"verb\":\"restart\",\"arg\":\"API\"," + at()), D,
         RC::ArgShape},
        {"arg 65 bytes", restart,
         obj("\"verb\":\"restart\",\"arg\":\"" + std::string(65, 'a') + "\"," + at()), D,
         RC::ArgShape},
        {"arg 64 bytes but unknown", restart,
         obj("\"verb\":\"restart\",\"arg\":\"" + std::string(64, 'a') + "\"," + at()), D,
         RC::ArgNotAService},
        {"arg option injection", restart, obj("\"verb\":\"restart\",\"arg\":\"--all\"," + at()), D,
         RC::ArgShape},
        {"arg with newline", restart, obj("\"verb\":\"restart\",\"arg\":\"api\\n\"," + at()), D,
         RC::ArgShape},
        {"arg prefix of a service", restart, obj("\"verb\":\"restart\",\"arg\":\"ap\"," + at()), D,
         RC::ArgNotAService},
        {"arg cyrillic a", restart, obj("\"verb\":\"restart\",\"arg\":\"\xd0\xb0pi\"," + at()), D,
         RC::ArgShape},
        {"rebuild a non-buildable service", name_for("rebuild"),
         obj("\"verb\":\"rebuild\",\"arg\":\"worker\"," + at()), D, RC::ArgNotBuildable},
        {"arg on ping", ping, obj("\"verb\":\"ping\",\"arg\":\"api\"," + at()), D,
         RC::ArgForbidden},
        // --- dates
        {"2026-02-30", ping, body_for("ping", "", "2026-02-30T00:00:00Z"), D, RC::BadRequestedAt},
        {"2025-02-29", ping, body_for("ping", "", "2025-02-29T00:00:00Z"), D, RC::BadRequestedAt},
        {"24:00:00", ping, body_for("ping", "", "2026-11-29T24:00:00Z"), D, RC::BadRequestedAt},
        {"fraction", ping, body_for("ping", "", "2026-11-29T08:00:00.123Z"), D, RC::BadRequestedAt},
        {"offset", ping, body_for("ping", "", "2026-11-29T08:00:00+01:00"), D, RC::BadRequestedAt},
        {"offset zero", ping, body_for("ping", "", "2026-11-29T08:00:00+00:00"), D,
         RC::BadRequestedAt},
        {"leap second", ping, body_for("ping", "", "2016-12-31T23:59:60Z"), D, RC::BadRequestedAt},
        {"date only", ping, body_for("ping", "", "2026-11-29"), D, RC::BadRequestedAt},
        {"2024-02-29 is real", ping, body_for("ping", "", "2024-02-29T00:00:00Z"), A, RC::None},
        // --- names
        {"name with verb shell:web", "20261129T080000Z-shell:web-0123456789abcdef.json",
         obj("\"verb\":\"shell:web\"," + at()), Q, RC::NameSchema},
        {"name with path", "../20261129T080000Z-ping-0123456789abcdef.json",
         obj("\"verb\":\"ping\"," + at()), Q, RC::NameSchema},
        {"name with NUL", std::string("20261129T080000Z-ping-0123456789abcdef.json\0", 44),
         obj("\"verb\":\"ping\"," + at()), Q, RC::NameSchema},
        {"name with unicode verb", "20261129T080000Z-p\xd1\x96ng-0123456789abcdef.json",
         obj("\"verb\":\"ping\"," + at()), Q, RC::NameSchema},
        {"name 255 bytes", "20261129T080000Z-" + std::string(216, 'a') + "-0123456789abcdef.json",
         obj("\"verb\":\"ping\"," + at()), D, RC::VerbMismatch},
        {"name verb exec, body exec", name_for("exec"), obj("\"verb\":\"exec\"," + at()), D,
         RC::HardcodedDeny},
        {"name verb reset-db, body ping", name_for("reset-db"), obj("\"verb\":\"ping\"," + at()), D,
         RC::HardcodedDeny},
        {"name verb shellx, body status", name_for("shellx"), obj("\"verb\":\"status\"," + at()), D,
         RC::HardcodedDeny},
        // --- size
        {"4097 bytes", ping, std::string(4097, '{'), Q, RC::BodyTooLarge},
        {"4096 bytes of brackets", ping, std::string(4096, '['), Q, RC::NotAnObject},
    };
}

TEST(Hostile, TableHasAtLeastFiftyCases) {
    EXPECT_GE(cases().size(), 50U);
}

TEST(Hostile, EachCaseGetsItsExactOutcomeAndReason) {
    for (const Case& c : cases()) {
        SCOPED_TRACE(c.what);
        const Verdict v = check(c.name, c.body);
        EXPECT_EQ(v.outcome, c.outcome);
        EXPECT_EQ(v.reason, c.reason) << "got: " << reason_text(v.reason);
        // The executor's decoder must accept every verdict the parser makes.
        const auto bytes = encode_verdict(v);
        auto decoded = decode_verdict(bytes, enums().services.size());
        EXPECT_TRUE(decoded) << (decoded ? "" : decoded.error().message);
    }
}

TEST(Hostile, DeterministicVerdicts) {
    for (const Case& c : cases()) {
        EXPECT_EQ(encode_verdict(check(c.name, c.body)), encode_verdict(check(c.name, c.body)))
            << c.what;
    }
}

}  // namespace
}  // namespace hb::parser

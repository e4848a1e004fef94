// One test per rule of docs/PROTOCOL.md "Request files" and "Verbs". Each test
// pairs a request that breaks exactly that rule with the closest request
// that keeps it, so removing the rule (or breaking the check) fails it.
#include <gtest/gtest.h>

#include "fixture.hpp"

namespace hb::parser {
namespace {

using namespace hb::parser::testing;

void expect_accept(const Verdict& v) {
    EXPECT_EQ(v.outcome, Outcome::Accept) << "reason " << reason_text(v.reason);
    EXPECT_EQ(v.reason, ReasonCode::None);
}
void expect(const Verdict& v, Outcome o, ReasonCode r) {
    EXPECT_EQ(v.outcome, o);
    EXPECT_EQ(v.reason, r) << "got: " << reason_text(v.reason);
}

// ------------------------------------------------------------ the name

TEST(NameRule, SchemaMatches) {
    expect_accept(check(name_for("ping"), body_for("ping")));
    expect_accept(check(name_for("join-network"), body_for("join-network")));
}

TEST(NameRule, OffSchemaIsQuarantined) {
    const std::string good = name_for("ping");
    const char* bad[] = {
        "20261129T080000Z-ping-0123456789abcdef.JSON",       // suffix case
        "20261129T080000Z-ping-0123456789abcdef.json ",      // trailing space
        "20261129T080000Z-ping-0123456789abcdef",            // no suffix
        "20261129T080000Z-ping-0123456789ABCDEF.json",       // uppercase nonce
        "20261129T080000Z-ping-0123456789abcde.json",        // 15-char nonce
        "20261129T080000Z-ping-0123456789abcdef0.json",      // 17-char nonce
        "20261129T080000Z-ping-0123456789abcdeg.json",       // non-hex nonce
        "20261129T080000Z-PING-0123456789abcdef.json",       // uppercase verb
        "20261129T080000Z-shell:web-0123456789abcdef.json",  // `shell:SERVICE` names
        "20261129T080000Z-re_start-0123456789abcdef.json",   // '_' not in [a-z-]
        "20261129T080000Z--0123456789abcdef.json",           // empty verb
        "20261129T080000Z-ping0123456789abcdef.json",        // no dash before nonce
        "20261129T080000-ping-0123456789abcdef.json",        // no Z
        "20261129t080000Z-ping-0123456789abcdef.json",       // lowercase t
        "2026112T0800000Z-ping-0123456789abcdef.json",       // T misplaced
        "2026112XT080000Z-ping-0123456789abcdef.json",       // non-digit
        "20261129T080000Z_ping-0123456789abcdef.json",       // '_' after ts
        "x20261129T080000Z-ping-0123456789abcdef.json",      // prefix
        ".20261129T080000Z-ping-0123456789abcdef.json",      // hidden
        "../20261129T080000Z-ping-0123456789abcdef.json",   "",
    };
    for (const char* n : bad) {
        SCOPED_TRACE(n);
        expect(check(n, body_for("ping")), Outcome::Quarantine, ReasonCode::NameSchema);
    }
    expect_accept(check(good, body_for("ping")));
}

TEST(NameRule, CheckedBeforeTheBody) {
    // An off-schema name is quarantined whatever the body: even an empty one
    // (which would otherwise be a plain denial).
    expect(check("x.json", ""), Outcome::Quarantine, ReasonCode::NameSchema);
    expect(check("x.json", std::string(5000, 'x')), Outcome::Quarantine, ReasonCode::NameSchema);
}

TEST(NameRule, VerbMustEqualBodyVerb) {
    const Verdict v = check(name_for("status"), body_for("health"));
    expect(v, Outcome::Deny, ReasonCode::VerbMismatch);
    EXPECT_EQ(v.verb, Verb::Health);  // the body's verb, a verb of the table
    expect_accept(check(name_for("health"), body_for("health")));
    // A verb of the name may itself be a prefix of another one.
    expect(check(name_for("join"), body_for("join-network")), Outcome::Deny,
           ReasonCode::VerbMismatch);
}

TEST(NameRule, NameTimestampIsNotComparedWithRequestedAt) {
    expect_accept(check("19990101T000000Z-ping-0123456789abcdef.json", body_for("ping")));
    // Schema only: not even a real date is required in the name.
    expect_accept(check("99999999T999999Z-ping-0123456789abcdef.json", body_for("ping")));
}

// ------------------------------------------------------------ size

TEST(SizeRule, At4096Accepted4097Quarantined) {
    std::string body = body_for("ping");
    body.insert(1, kMaxBody - body.size(), ' ');  // whitespace inside the object
    ASSERT_EQ(body.size(), kMaxBody);
    expect_accept(check_body("ping", body));
    body.insert(1, " ");
    expect(check_body("ping", body), Outcome::Quarantine, ReasonCode::BodyTooLarge);
}

TEST(SizeRule, CheckedBeforeEmptiness) {
    expect(check_body("ping", std::string(kMaxBody + 1, ' ')), Outcome::Quarantine,
           ReasonCode::BodyTooLarge);
}

// ------------------------------------------------------------ empty body

TEST(EmptyRule, EmptyBodyIsDenied) {
    const Verdict v = check_body("restart", "");
    expect(v, Outcome::Deny, ReasonCode::EmptyBody);
    EXPECT_EQ(reason_text(v.reason), "empty request body");
    EXPECT_FALSE(v.verb);
    EXPECT_EQ(v.arg_index, kNoArg);
    EXPECT_EQ(v.requested_at, kNoTime);
}

TEST(EmptyRule, WhitespaceOnlyCountsAsEmpty) {
    // Documented choice: `echo "$(jq ...)" > f` gives "\n" for the same bug.
    for (const char* b : {"\n", " ", "\r\n", "\t \n\n"}) {
        expect(check_body("restart", b), Outcome::Deny, ReasonCode::EmptyBody);
    }
}

// ------------------------------------------------------------ malformed

TEST(MalformedRule, InvalidUtf8) {
    expect(check_body("ping", "{\"verb\":\"ping\",\"requested_at\":\"" + std::string(kTime) +
                                  "\",\"x\":\"\xff\"}"),
           Outcome::Quarantine, ReasonCode::InvalidUtf8);
    // Valid multi-byte UTF-8 in the same place is merely an unknown key.
    expect(check_body("ping", "{\"verb\":\"ping\",\"requested_at\":\"" + std::string(kTime) +
                                  "\",\"x\":\"\xc3\xa9\"}"),
           Outcome::Deny, ReasonCode::UnknownKey);
}

TEST(MalformedRule, NulByte) {
    std::string b = body_for("ping");
    b.insert(b.size() - 1, 1, '\0');  // before the final newline
    expect(check_body("ping", b), Outcome::Quarantine, ReasonCode::NulByte);
}

TEST(MalformedRule, ByteOrderMark) {
    expect(check_body("ping", "\xEF\xBB\xBF" + body_for("ping")), Outcome::Quarantine,
           ReasonCode::ByteOrderMark);
}

TEST(MalformedRule, SyntaxError) {
    expect(check_body("ping", "{\"verb\":\"ping\",\"requested_at\":\"x\","), Outcome::Quarantine,
           ReasonCode::JsonSyntax);
    expect(check_body("ping", "{'verb':'ping'}"), Outcome::Quarantine, ReasonCode::JsonSyntax);
}

TEST(MalformedRule, TrailingBytesButOneFinalNewline) {
    std::string b = body_for("ping");  // ends with exactly one "\n"
    expect_accept(check_body("ping", b));
    b.pop_back();
    expect_accept(check_body("ping", b));  // no newline at all is fine too
    expect(check_body("ping", b + "\n\n"), Outcome::Quarantine, ReasonCode::TrailingBytes);
    expect(check_body("ping", b + " "), Outcome::Quarantine, ReasonCode::TrailingBytes);
    expect(check_body("ping", b + "\r\n"), Outcome::Quarantine, ReasonCode::TrailingBytes);
    expect(check_body("ping", b + "{}"), Outcome::Quarantine, ReasonCode::TrailingBytes);
    expect(check_body("ping", b + "x"), Outcome::Quarantine, ReasonCode::TrailingBytes);
    expect(check_body("ping", b + "\n{}\n"), Outcome::Quarantine, ReasonCode::TrailingBytes);
}

TEST(MalformedRule, TopLevelMustBeAnObject) {
    for (const char* b : {"[]", "\"ping\"", "1", "null", "true", "[{\"verb\":\"ping\"}]"}) {
        SCOPED_TRACE(b);
        expect(check_body("ping", b), Outcome::Quarantine, ReasonCode::NotAnObject);
    }
}

TEST(MalformedRule, DuplicateKey) {
    expect(check_body("ping", "{\"verb\":\"ping\",\"verb\":\"ping\",\"requested_at\":\"" +
                                  std::string(kTime) + "\"}"),
           Outcome::Quarantine, ReasonCode::DuplicateKey);
}

TEST(MalformedRule, MalformedWinsOverRefusal) {
    // An unknown key and a syntax error: the body cannot be classified.
    expect(check_body("ping", "{\"x\":1,"), Outcome::Quarantine, ReasonCode::JsonSyntax);
}

TEST(MalformedRule, LeadingWhitespaceIsPartOfJson) {
    // Documented choice: JSON text may start with whitespace; only what
    // follows the object is restricted.
    expect_accept(check_body("ping", "\n  " + body_for("ping")));
}

// ------------------------------------------------------------ keys and values

TEST(KeyRule, UnknownKey) {
    expect(check_body("ping", "{\"verb\":\"ping\",\"requested_at\":\"" + std::string(kTime) +
                                  "\",\"extra\":\"x\"}"),
           Outcome::Deny, ReasonCode::UnknownKey);
}

TEST(KeyRule, MissingVerb) {
    expect(check_body("ping", "{\"requested_at\":\"" + std::string(kTime) + "\"}"), Outcome::Deny,
           ReasonCode::MissingVerb);
}

TEST(KeyRule, MissingRequestedAt) {
    const Verdict v = check_body("ping", "{\"verb\":\"ping\"}");
    expect(v, Outcome::Deny, ReasonCode::MissingRequestedAt);
    EXPECT_EQ(v.verb, Verb::Ping);
}

TEST(KeyRule, ValuesMustBeStrings) {
    for (const char* val : {"1", "null", "true", "[\"ping\"]", "{\"a\":\"b\"}", "1.5"}) {
        SCOPED_TRACE(val);
        expect(check_body("ping", std::string("{\"verb\":") + val + ",\"requested_at\":\"" +
                                      std::string(kTime) + "\"}"),
               Outcome::Deny, ReasonCode::NotAString);
    }
    expect(check_body("ping", "{\"verb\":\"ping\",\"requested_at\":1795939200}"), Outcome::Deny,
           ReasonCode::NotAString);
}

// ------------------------------------------------------------ verbs

TEST(VerbRule, EveryVerbOfTheTableIsAccepted) {
    for (Verb verb : kAllVerbs) {
        const std::string_view n = verb_name(verb);
        const char* arg = verb_arg_kind(verb) == ArgKind::None ? "" : "api";
        SCOPED_TRACE(std::string(n));
        const Verdict v = check(name_for(n), body_for(n, arg));
        expect_accept(v);
        EXPECT_EQ(v.verb, verb);
        EXPECT_EQ(v.requested_at, kEpoch);
        EXPECT_EQ(v.arg_index, *arg ? 0 : kNoArg);
    }
}

TEST(VerbRule, HardcodedDeny) {
    for (const char* verb : {"reset-db", "exec", "shell", "shell-web", "shellx"}) {
        SCOPED_TRACE(verb);
        const Verdict v = check(name_for(verb), body_for(verb));
        expect(v, Outcome::Deny, ReasonCode::HardcodedDeny);
        EXPECT_FALSE(v.verb);
    }
}

TEST(VerbRule, HardcodedDenyComesBeforeUnknownVerbAndMismatch) {
    // Body says exec, name says ping: reported as the exec attempt it is.
    expect(check(name_for("ping"), body_for("exec")), Outcome::Deny, ReasonCode::HardcodedDeny);
    // Name says exec, body ping: the forbidden verb is still the headline.
    const Verdict v = check(name_for("exec"), body_for("ping"));
    expect(v, Outcome::Deny, ReasonCode::HardcodedDeny);
    EXPECT_EQ(v.verb, Verb::Ping);
}

TEST(VerbRule, UnknownVerb) {
    for (const char* verb : {"reboot", "pingx", "pin", "sh", "reset", "execute", "-", "Ping"}) {
        SCOPED_TRACE(verb);
        expect(check_body("reboot", body_for(verb)), Outcome::Deny, ReasonCode::UnknownVerb);
    }
}

TEST(VerbRule, UnknownVerbComesBeforeMismatch) {
    expect(check(name_for("ping"), body_for("reboot")), Outcome::Deny, ReasonCode::UnknownVerb);
}

// ------------------------------------------------------------ args

TEST(ArgRule, RequiredForServiceVerbs) {
    for (const char* verb : {"logs", "restart", "rebuild"}) {
        SCOPED_TRACE(verb);
        const Verdict v = check(name_for(verb), body_for(verb));
        expect(v, Outcome::Deny, ReasonCode::ArgRequired);
        EXPECT_EQ(v.verb, verb_from_name(verb));
    }
}

TEST(ArgRule, ForbiddenForOtherVerbs) {
    for (const char* verb : {"ping", "status", "health", "up", "down", "init", "join-network"}) {
        SCOPED_TRACE(verb);
        expect(check(name_for(verb), body_for(verb, "api")), Outcome::Deny,
               ReasonCode::ArgForbidden);
    }
    // Present is present, even empty.
    expect(check_body("ping", "{\"verb\":\"ping\",\"arg\":\"\",\"requested_at\":\"" +
                                  std::string(kTime) + "\"}"),
           Outcome::Deny, ReasonCode::ArgForbidden);
}

TEST(ArgRule, Shape) {
    const std::string too_long(65, 'a');
    for (const std::string& arg :
         {std::string("API"), std::string("1api"), std::string("api;ls"), std::string("$(id)"),
          std::string(".."), std::string("a/b"), std::string("a b"), too_long}) {
        SCOPED_TRACE(arg);
        const Verdict v = check(name_for("restart"), body_for("restart", arg));
        expect(v, Outcome::Deny, ReasonCode::ArgShape);
        EXPECT_EQ(v.verb, Verb::Restart);
        EXPECT_EQ(v.arg_index, kNoArg);
    }
    expect(check_body("restart", "{\"verb\":\"restart\",\"arg\":\"\",\"requested_at\":\"" +
                                     std::string(kTime) + "\"}"),
           Outcome::Deny, ReasonCode::ArgShape);
}

TEST(ArgRule, MustBeAService) {
    // `restart nosuch` answers with verb restart, arg null.
    const Verdict v = check(name_for("restart"), body_for("restart", "nosuch"));
    expect(v, Outcome::Deny, ReasonCode::ArgNotAService);
    EXPECT_EQ(v.verb, Verb::Restart);
    EXPECT_EQ(v.arg_index, kNoArg);
    EXPECT_EQ(v.requested_at, kEpoch);

    const Verdict ok = check(name_for("logs"), body_for("logs", "worker"));
    expect_accept(ok);
    EXPECT_EQ(ok.arg_index, 3);
}

TEST(ArgRule, RebuildNeedsABuildableService) {
    const Verdict db = check(name_for("rebuild"), body_for("rebuild", "db"));
    expect(db, Outcome::Deny, ReasonCode::ArgNotBuildable);
    EXPECT_EQ(db.arg_index, kNoArg);
    expect(check(name_for("rebuild"), body_for("rebuild", "nosuch")), Outcome::Deny,
           ReasonCode::ArgNotAService);
    const Verdict web = check(name_for("rebuild"), body_for("rebuild", "web"));
    expect_accept(web);
    EXPECT_EQ(web.arg_index, 2);
    // restart is not limited to buildable services.
    expect_accept(check(name_for("restart"), body_for("restart", "db")));
}

TEST(ArgRule, ArgOfMaximumLengthIsJudgedByEnumeration) {
    const std::string longest(64, 'a');
    Startup s{{longest}, {}};
    const std::string body = body_for("restart", longest);
    const auto* p = reinterpret_cast<const std::uint8_t*>(body.data());
    const Verdict v = validate(name_for("restart"), {p, body.size()}, s);
    expect_accept(v);
    EXPECT_EQ(v.arg_index, 0);
}

// ------------------------------------------------------------ requested_at

TEST(TimeRule, ExactFormatAndRealDate) {
    expect_accept(check_body("ping", body_for("ping", "", "2024-02-29T23:59:59Z")));
    for (const char* t : {"2026-02-30T00:00:00Z", "2025-02-29T00:00:00Z", "2026-11-29T24:00:00Z",
                          "2026-11-29T08:00:00.5Z", "2026-11-29T08:00:00+00:00",
                          "2026-11-29 08:00:00Z", "2026-11-29T08:00:00z", "1795939200"}) {
        SCOPED_TRACE(t);
        const Verdict v = check_body("ping", body_for("ping", "", t));
        expect(v, Outcome::Deny, ReasonCode::BadRequestedAt);
        EXPECT_EQ(v.requested_at, kNoTime);
        EXPECT_EQ(v.verb, Verb::Ping);
    }
}

TEST(TimeRule, ReportedNotJudged) {
    // Expiry and future skew are the executor's: a far past or far future
    // time is accepted here and its epoch reported.
    Verdict v = check_body("ping", body_for("ping", "", "1970-01-01T00:00:00Z"));
    expect_accept(v);
    EXPECT_EQ(v.requested_at, 0);
    v = check_body("ping", body_for("ping", "", "9999-12-31T23:59:59Z"));
    expect_accept(v);
    EXPECT_EQ(v.requested_at, 253402300799);
}

// ------------------------------------------------------------ the verdict

TEST(VerdictFields, SeqIsLeftZero) {
    EXPECT_EQ(check(name_for("ping"), body_for("ping")).seq, 0U);
}

TEST(VerdictFields, RecognisedFieldsReportedWhateverTheRefusal) {
    const Verdict v =
        check_body("restart", "{\"verb\":\"restart\",\"arg\":\"web\",\"requested_at\":\"" +
                                  std::string(kTime) + "\",\"x\":\"y\"}");
    expect(v, Outcome::Deny, ReasonCode::UnknownKey);
    EXPECT_EQ(v.verb, Verb::Restart);
    EXPECT_EQ(v.arg_index, 2);
    EXPECT_EQ(v.requested_at, kEpoch);
}

TEST(VerdictFields, MalformedLeavesEverythingUnset) {
    const Verdict v = check_body("restart", body_for("restart", "api") + "x");
    expect(v, Outcome::Quarantine, ReasonCode::TrailingBytes);
    EXPECT_FALSE(v.verb);
    EXPECT_EQ(v.arg_index, kNoArg);
    EXPECT_EQ(v.requested_at, kNoTime);
}

// ------------------------------------------------------------ the window

std::string logs_body(std::string_view extra) {
    return "{\"verb\":\"logs\",\"arg\":\"web\"," + std::string(extra) + ",\"requested_at\":\"" +
           std::string(kTime) + "\"}\n";
}

TEST(WindowRule, LinesAndSinceOnLogsAreAcceptedAndCarried) {
    const Verdict v =
        check_body("logs", logs_body(R"("lines":"50","since":"1796245045602731173:2")"));
    expect_accept(v);
    EXPECT_EQ(v.window, (LogWindow{50, 1796245045602731173, 2}));
    const Verdict only_since = check_body("logs", logs_body(R"("since":"0:0")"));
    expect_accept(only_since);
    EXPECT_EQ(only_since.window, (LogWindow{0, 0, 0}));
    const Verdict none = check_body("logs", body_for("logs", "web"));
    expect_accept(none);
    EXPECT_FALSE(none.window.given());
}

TEST(WindowRule, OnAnotherVerbIsRefused) {
    const std::string body =
        "{\"verb\":\"restart\",\"arg\":\"web\",\"lines\":\"5\","
        "\"requested_at\":\"" +
        std::string(kTime) + "\"}\n";
    const Verdict v = check_body("restart", body);
    expect(v, Outcome::Deny, ReasonCode::OptionForbidden);
    EXPECT_FALSE(v.window.given());
    expect(check_body("status", "{\"verb\":\"status\",\"since\":\"0:0\",\"requested_at\":\"" +
                                    std::string(kTime) + "\"}"),
           Outcome::Deny, ReasonCode::OptionForbidden);
}

TEST(WindowRule, BadValuesAreRefusedAndNeverCarried) {
    for (const char* bad : {R"("lines":"0")", R"("lines":"1001")", R"("lines":"01")",
                            R"("lines":"-1")", R"("lines":"")"}) {
        const Verdict v = check_body("logs", logs_body(bad));
        expect(v, Outcome::Deny, ReasonCode::BadLines);
        EXPECT_FALSE(v.window.given()) << bad;
    }
    for (const char* bad : {R"("since":"")", R"("since":"1")", R"("since":"01:0")",
                            R"("since":"2026-12-03T11:49:25Z")", R"("since":"1:1000001")"}) {
        expect(check_body("logs", logs_body(bad)), Outcome::Deny, ReasonCode::BadSince);
    }
    expect(check_body("logs", logs_body(R"("lines":50)")), Outcome::Deny, ReasonCode::NotAString);
    expect(check_body("logs", logs_body(R"("tail":"50")")), Outcome::Deny, ReasonCode::UnknownKey);
    // A bad arg is reported before a bad window, a bad window before a bad time.
    expect(check_body("logs",
                      "{\"verb\":\"logs\",\"arg\":\"nosuch\",\"lines\":\"0\","
                      "\"requested_at\":\"" +
                          std::string(kTime) + "\"}"),
           Outcome::Deny, ReasonCode::ArgNotAService);
    expect(check_body("logs",
                      "{\"verb\":\"logs\",\"arg\":\"web\",\"lines\":\"0\","
                      "\"requested_at\":\"yesterday\"}"),
           Outcome::Deny, ReasonCode::BadLines);
}

}  // namespace
}  // namespace hb::parser

// Encode/decode of the three messages: exact layout, round trips, and a
// rejection test for every field of every decoder.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "ipc/log_cursor.hpp"
#include "ipc/screen_wire.hpp"
#include "ipc/wire.hpp"

namespace hb {
namespace {

using Bytes = std::vector<std::uint8_t>;

Startup sample_startup() {
    return Startup{{"api", "db", "web", "worker"}, {"api", "web"}};
}

void put16(Bytes& b, std::size_t at, std::uint16_t v) {
    b[at] = static_cast<std::uint8_t>(v);
    b[at + 1] = static_cast<std::uint8_t>(v >> 8);
}
void put64(Bytes& b, std::size_t at, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) b[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
}

// ------------------------------------------------------------ Startup

TEST(Startup, RoundTrip) {
    const Startup s = sample_startup();
    const Bytes b = encode_startup(s);
    ASSERT_EQ(b.size(), kStartupSize);
    auto d = decode_startup(b);
    ASSERT_TRUE(d) << d.error().message;
    EXPECT_EQ(d->services, s.services);
    EXPECT_EQ(d->buildable, s.buildable);
    EXPECT_EQ(encode_startup(*d), b);
}

TEST(Startup, RoundTripEmptyAndFull) {
    Startup empty;
    auto d = decode_startup(encode_startup(empty));
    ASSERT_TRUE(d);
    EXPECT_TRUE(d->services.empty());

    Startup full;
    for (int i = 0; i < 64; ++i) {
        char name[8];
        std::snprintf(name, sizeof name, "s%02d", i);
        full.services.emplace_back(name);
    }
    full.services[63] = "s63" + std::string(61, 'x');  // 64 bytes, still sorted last
    full.buildable = full.services;
    auto f = decode_startup(encode_startup(full));
    ASSERT_TRUE(f) << f.error().message;
    EXPECT_EQ(f->services, full.services);
    EXPECT_EQ(f->buildable, full.buildable);
}

TEST(Startup, ExplicitLittleEndianLayout) {
    const Bytes b = encode_startup(sample_startup());
    EXPECT_EQ((Bytes{b.begin(), b.begin() + 16}),
              (Bytes{0x31, 0x52, 0x42, 0x48, 2, 0, 4, 0, 0b0101, 0, 0, 0, 0, 0, 0, 0}));
    EXPECT_EQ(b[16], 3);
    EXPECT_EQ(std::memcmp(&b[17], "api", 3), 0);
    EXPECT_EQ(b[16 + 65], 2);
    EXPECT_EQ(std::memcmp(&b[16 + 66], "db", 2), 0);
}

TEST(Startup, EncoderRefusesInvalid) {
    EXPECT_TRUE(encode_startup(Startup{{"db", "api"}, {}}).empty());               // not sorted
    EXPECT_TRUE(encode_startup(Startup{{"api", "api"}, {}}).empty());              // duplicate
    EXPECT_TRUE(encode_startup(Startup{{"Api"}, {}}).empty());                     // shape
    EXPECT_TRUE(encode_startup(Startup{{std::string(65, 'a')}, {}}).empty());      // too long
    EXPECT_TRUE(encode_startup(Startup{{"api"}, {"web"}}).empty());                // not a subset
    EXPECT_TRUE(encode_startup(Startup{{"api", "web"}, {"web", "api"}}).empty());  // unsorted
    EXPECT_TRUE(encode_startup(Startup{{"api", "web"}, {"api", "api"}}).empty());  // duplicate
    Startup many;
    for (int i = 0; i < 65; ++i) many.services.push_back("s" + std::to_string(100 + i));
    EXPECT_TRUE(encode_startup(many).empty());
}

TEST(Startup, DecoderRejectsEveryField) {
    const Bytes good = encode_startup(sample_startup());
    ASSERT_TRUE(decode_startup(good));
    auto rejects = [](Bytes b, const char* what) { EXPECT_FALSE(decode_startup(b)) << what; };
    rejects({}, "empty");
    rejects(Bytes(good.begin(), good.end() - 1), "short");
    {
        Bytes b = good;
        b.push_back(0);
        rejects(b, "long");
    }
    {
        Bytes b = good;
        b[0] ^= 1;
        rejects(b, "magic");
    }
    {
        Bytes b = good;
        put16(b, 4, 1);  // the version before the logs window
        rejects(b, "version");
    }
    {
        Bytes b = good;
        put16(b, 6, 65);
        rejects(b, "count > 64");
    }
    {
        Bytes b = good;
        put16(b, 6, 5);  // slot 4 is empty: length 0
        rejects(b, "count beyond filled slots");
    }
    {
        Bytes b = good;
        put16(b, 6, 3);  // slot 3 ("worker") now counts as unused but is not zero
        rejects(b, "unused slot not zero");
    }
    {
        Bytes b = good;
        put64(b, 8, 1ULL << 4);
        rejects(b, "buildable bit beyond count");
    }
    {
        Bytes b = good;
        b[16] = 65;
        rejects(b, "name length 65");
    }
    {
        Bytes b = good;
        b[16] = 0;
        rejects(b, "name length 0");
    }
    {
        Bytes b = good;
        b[16 + 1 + 3] = 'x';  // after "api"
        rejects(b, "name padding");
    }
    {
        Bytes b = good;
        b[16 + 1] = 'A';
        rejects(b, "name shape");
    }
    {
        Bytes b = good;
        b[16 + 2] = '\0';  // "a\0i" with length 3
        rejects(b, "NUL in name");
    }
    {
        Bytes b = good;  // swap slots 0 and 1: not sorted
        std::swap_ranges(b.begin() + 16, b.begin() + 16 + 65, b.begin() + 16 + 65);
        rejects(b, "not sorted");
    }
    {
        Bytes b = good;  // slot 1 := copy of slot 0: duplicate
        std::copy(b.begin() + 16, b.begin() + 16 + 65, b.begin() + 16 + 65);
        rejects(b, "duplicate");
    }
}

// ------------------------------------------------------------ Request

TEST(Request, RoundTrip) {
    Request r{0xA1B2C3D4, "20261129T080000Z-restart-0123456789abcdef.json"};
    const Bytes b = encode_request(r);
    ASSERT_EQ(b.size(), kRequestSize);
    EXPECT_EQ(b[8], 0xD4);  // seq, little-endian
    EXPECT_EQ(b[11], 0xA1);
    EXPECT_EQ(b[6], r.basename.size());
    auto d = decode_request(b);
    ASSERT_TRUE(d) << d.error().message;
    EXPECT_EQ(d->seq, r.seq);
    EXPECT_EQ(d->basename, r.basename);
    EXPECT_EQ(encode_request(*d), b);

    // Any byte but NUL and '/' survives: the name is judged by the parser.
    Request odd{1, std::string("\xff\x01 ;$(x)..\n", 11)};
    auto o = decode_request(encode_request(odd));
    ASSERT_TRUE(o);
    EXPECT_EQ(o->basename, odd.basename);
    Request longest{2, std::string(255, 'n')};
    ASSERT_TRUE(decode_request(encode_request(longest)));
}

TEST(Request, EncoderRefusesInvalid) {
    EXPECT_TRUE(encode_request(Request{1, ""}).empty());
    EXPECT_TRUE(encode_request(Request{1, std::string(256, 'a')}).empty());
}

TEST(Request, DecoderRejectsEveryField) {
    const Bytes good = encode_request(Request{7, "abc"});
    ASSERT_TRUE(decode_request(good));
    auto rejects = [](Bytes b, const char* what) { EXPECT_FALSE(decode_request(b)) << what; };
    rejects({}, "empty");
    rejects(Bytes(good.begin(), good.end() - 1), "short");
    {
        Bytes b = good;
        b.push_back(0);
        rejects(b, "long");
    }
    {
        Bytes b = good;
        b[3] ^= 0x80;
        rejects(b, "magic");
    }
    {
        Bytes b = good;
        put16(b, 4, 0);
        rejects(b, "version");
    }
    {
        Bytes b = good;
        put16(b, 6, 0);
        rejects(b, "length 0");
    }
    {
        Bytes b = good;
        put16(b, 6, 256);
        rejects(b, "length 256");
    }
    {
        Bytes b = good;
        b[12 + 3] = 'x';
        rejects(b, "padding");
    }
    {
        Bytes b = good;
        b.back() = 1;
        rejects(b, "last padding byte");
    }
    {
        Bytes b = good;
        b[12 + 1] = '/';
        rejects(b, "slash");
    }
    {
        Bytes b = good;
        b[12 + 1] = '\0';
        rejects(b, "NUL");
    }
}

// ------------------------------------------------------------ Verdict

Verdict accept_restart() {
    Verdict v;
    v.seq = 0x01020304;
    v.outcome = Outcome::Accept;
    v.verb = Verb::Restart;
    v.arg_index = 2;
    v.reason = ReasonCode::None;
    v.requested_at = 1795939200;
    return v;
}

Bytes enc(const Verdict& v) {
    auto a = encode_verdict(v);
    return Bytes(a.begin(), a.end());
}

bool decodes(const Verdict& v, std::size_t services = 4) {
    return decode_verdict(enc(v), services).ok();
}

TEST(Verdict, RoundTripAndLayout) {
    const Verdict v = accept_restart();
    const Bytes b = enc(v);
    ASSERT_EQ(b.size(), kVerdictSize);
    EXPECT_EQ(b, (Bytes{0x31, 0x52, 0x42, 0x48, 2, 0, 1, 7, 4, 3, 2, 1, 2, 0, 0, 0, 0x80, 0xDB,
                        0x0B, 0x6B, 0, 0, 0, 0,
                        // no window: lines 0, padding, seen 0, since INT64_MIN
                        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80}));
    auto d = decode_verdict(b, 4);
    ASSERT_TRUE(d) << d.error().message;
    EXPECT_EQ(d->seq, v.seq);
    EXPECT_EQ(d->outcome, v.outcome);
    EXPECT_EQ(d->verb, v.verb);
    EXPECT_EQ(d->arg_index, v.arg_index);
    EXPECT_EQ(d->reason, v.reason);
    EXPECT_EQ(d->requested_at, v.requested_at);
    EXPECT_EQ(enc(*d), b);
}

TEST(Verdict, ValidShapesDecode) {
    Verdict ping;
    ping.outcome = Outcome::Accept;
    ping.verb = Verb::Ping;
    ping.requested_at = 0;
    EXPECT_TRUE(decodes(ping));

    Verdict q;  // default: quarantine, nothing recognised
    q.reason = ReasonCode::JsonSyntax;
    EXPECT_TRUE(decodes(q));

    Verdict empty;
    empty.outcome = Outcome::Deny;
    empty.reason = ReasonCode::EmptyBody;
    EXPECT_TRUE(decodes(empty));

    Verdict nosuch;  // restart nosuch: verb known, arg not
    nosuch.outcome = Outcome::Deny;
    nosuch.verb = Verb::Restart;
    nosuch.reason = ReasonCode::ArgNotAService;
    nosuch.requested_at = 5;
    EXPECT_TRUE(decodes(nosuch));

    Verdict unknown_key = accept_restart();  // everything recognised, still refused
    unknown_key.outcome = Outcome::Deny;
    unknown_key.reason = ReasonCode::UnknownKey;
    EXPECT_TRUE(decodes(unknown_key));

    Verdict extremes = accept_restart();
    extremes.requested_at = -62167219200;  // 0000-01-01T00:00:00Z
    EXPECT_TRUE(decodes(extremes));
    extremes.requested_at = 253402300799;  // 9999-12-31T23:59:59Z
    EXPECT_TRUE(decodes(extremes));
}

// The decoder's range is ipc/verbs.hpp's list: a verb added at its end
// decodes with no other change.
TEST(Verdict, EveryVerbDecodes) {
    for (const Verb verb : kAllVerbs) {
        Verdict v;
        v.outcome = Outcome::Deny;
        v.verb = verb;
        v.reason = ReasonCode::UnknownKey;
        v.requested_at = 5;
        EXPECT_TRUE(decodes(v)) << verb_name(verb);
    }
}

TEST(Verdict, DecoderRejectsWireFields) {
    const Bytes good = enc(accept_restart());
    ASSERT_TRUE(decode_verdict(good, 4));
    auto rejects = [](Bytes b, const char* what) { EXPECT_FALSE(decode_verdict(b, 4)) << what; };
    rejects({}, "empty");
    rejects(Bytes(good.begin(), good.end() - 1), "short");
    {
        Bytes b = good;
        b.push_back(0);
        rejects(b, "long");
    }
    {
        Bytes b = good;
        b[1] = 0;
        rejects(b, "magic");
    }
    {
        Bytes b = good;
        put16(b, 4, 0xFFFF);
        rejects(b, "version");
    }
    for (std::uint8_t o : {0, 4, 255}) {
        Bytes b = good;
        b[6] = o;
        rejects(b, "outcome out of range");
    }
    for (std::size_t verb : {kVerbCount + 1, kVerbCount + 2, std::size_t{255}}) {
        Bytes b = good;
        b[7] = static_cast<std::uint8_t>(verb);
        rejects(b, "verb out of range");
    }
    for (std::uint16_t r : {10, 19, 37, 39, 57, 1000, 65535}) {
        Bytes b = good;
        b[6] = static_cast<std::uint8_t>(Outcome::Deny);
        put16(b, 14, r);
        rejects(b, "reason outside the enum");
    }
    {
        Bytes b = good;
        put64(b, 16, static_cast<std::uint64_t>(253402300800));
        rejects(b, "requested_at after 9999");
    }
    {
        Bytes b = good;
        put64(b, 16, static_cast<std::uint64_t>(std::int64_t{-62167219201}));
        rejects(b, "requested_at before 0000");
    }
}

TEST(Verdict, DecoderRejectsArgIndex) {
    Verdict v = accept_restart();
    v.arg_index = 4;
    EXPECT_FALSE(decodes(v, 4)) << "arg index == service count";
    EXPECT_TRUE(decodes(v, 5));
    v.arg_index = 0;
    EXPECT_FALSE(decodes(v, 0)) << "arg with no services at all";
    v.arg_index = 0xFFFE;
    EXPECT_FALSE(decodes(v, 64));
}

TEST(Verdict, DecoderRejectsInconsistentAccept) {
    Verdict v = accept_restart();
    v.reason = ReasonCode::UnknownKey;
    EXPECT_FALSE(decodes(v)) << "accept with a reason";
    v = accept_restart();
    v.verb.reset();
    v.arg_index = kNoArg;
    EXPECT_FALSE(decodes(v)) << "accept without a verb";
    v = accept_restart();
    v.arg_index = kNoArg;
    EXPECT_FALSE(decodes(v)) << "accept restart without an arg";
    v = accept_restart();
    v.requested_at = kNoTime;
    EXPECT_FALSE(decodes(v)) << "accept without requested_at";
    v = accept_restart();
    v.verb = Verb::Ping;
    EXPECT_FALSE(decodes(v)) << "accept ping with an arg";
}

TEST(Verdict, DecoderRejectsInconsistentQuarantine) {
    Verdict q;
    q.reason = ReasonCode::NameSchema;
    ASSERT_TRUE(decodes(q));
    Verdict v = q;
    v.reason = ReasonCode::None;
    EXPECT_FALSE(decodes(v)) << "quarantine without a reason";
    v = q;
    v.reason = ReasonCode::EmptyBody;
    EXPECT_FALSE(decodes(v)) << "quarantine with a deny reason";
    v = q;
    v.verb = Verb::Ping;
    EXPECT_FALSE(decodes(v)) << "quarantine with a verb";
    v = q;
    v.requested_at = 0;
    EXPECT_FALSE(decodes(v)) << "quarantine with a time";
    v = q;
    v.verb = Verb::Restart;
    v.arg_index = 0;
    EXPECT_FALSE(decodes(v)) << "quarantine with an arg";
}

TEST(Verdict, DecoderRejectsInconsistentDeny) {
    auto deny = [](ReasonCode r, std::optional<Verb> verb, std::uint16_t arg, std::int64_t t) {
        Verdict v;
        v.outcome = Outcome::Deny;
        v.reason = r;
        v.verb = verb;
        v.arg_index = arg;
        v.requested_at = t;
        return v;
    };
    EXPECT_FALSE(decodes(deny(ReasonCode::JsonSyntax, {}, kNoArg, kNoTime))) << "quarantine code";
    EXPECT_FALSE(decodes(deny(ReasonCode::ParserFailure, {}, kNoArg, kNoTime))) << "executor code";
    EXPECT_FALSE(decodes(deny(ReasonCode::None, {}, kNoArg, kNoTime))) << "deny without reason";
    EXPECT_FALSE(decodes(deny(ReasonCode::UnknownKey, {}, 1, kNoTime))) << "arg without verb";
    EXPECT_FALSE(decodes(deny(ReasonCode::UnknownKey, Verb::Ping, 1, 0))) << "arg on ping";
    EXPECT_FALSE(decodes(deny(ReasonCode::EmptyBody, Verb::Ping, kNoArg, kNoTime)));
    EXPECT_FALSE(decodes(deny(ReasonCode::EmptyBody, {}, kNoArg, 0)));
    EXPECT_FALSE(decodes(deny(ReasonCode::UnknownVerb, Verb::Ping, kNoArg, 0)));
    EXPECT_FALSE(decodes(deny(ReasonCode::MissingVerb, Verb::Ping, kNoArg, 0)));
    EXPECT_FALSE(decodes(deny(ReasonCode::VerbMismatch, {}, kNoArg, 0)));
    EXPECT_FALSE(decodes(deny(ReasonCode::ArgRequired, Verb::Ping, kNoArg, 0)));
    EXPECT_FALSE(decodes(deny(ReasonCode::ArgRequired, {}, kNoArg, 0)));
    EXPECT_FALSE(decodes(deny(ReasonCode::ArgShape, Verb::Restart, 1, 0)));
    EXPECT_FALSE(decodes(deny(ReasonCode::ArgNotAService, Verb::Logs, 0, 0)));
    EXPECT_FALSE(decodes(deny(ReasonCode::ArgNotBuildable, Verb::Restart, kNoArg, 0)));
    EXPECT_FALSE(decodes(deny(ReasonCode::ArgForbidden, Verb::Restart, kNoArg, 0)));
    EXPECT_FALSE(decodes(deny(ReasonCode::BadRequestedAt, Verb::Ping, kNoArg, 0)));
    EXPECT_FALSE(decodes(deny(ReasonCode::MissingRequestedAt, Verb::Ping, kNoArg, 0)));
    // ...and the consistent versions of the same are accepted.
    EXPECT_TRUE(decodes(deny(ReasonCode::VerbMismatch, Verb::Ping, kNoArg, 0)));
    EXPECT_TRUE(decodes(deny(ReasonCode::ArgRequired, Verb::Restart, kNoArg, 0)));
    EXPECT_TRUE(decodes(deny(ReasonCode::ArgNotBuildable, Verb::Rebuild, kNoArg, 0)));
    EXPECT_TRUE(decodes(deny(ReasonCode::ArgForbidden, Verb::Ping, kNoArg, 0)));
    EXPECT_TRUE(decodes(deny(ReasonCode::BadRequestedAt, Verb::Ping, kNoArg, kNoTime)));
    EXPECT_TRUE(decodes(deny(ReasonCode::HardcodedDeny, {}, kNoArg, kNoTime)));
}

}  // namespace
}  // namespace hb

// --- the screen's answer (ipc/screen_wire.hpp) ---------------------------

namespace hb {
namespace {

std::array<std::uint8_t, kScreenAnswerSize> answer_bytes(std::uint8_t reason, std::uint8_t flag,
                                                         std::uint32_t line) {
    ScreenAnswer a;
    a.seq = 7;
    a.verdict = ScreenVerdict{ScreenReason::None, line, ScreenFlag::None};
    auto bytes = encode_screen_answer(a);
    bytes[12] = reason;
    bytes[13] = flag;
    return bytes;
}

// --- the logs window (docs/PROTOCOL.md, "Following logs") ---------------

Verdict accept_logs(LogWindow window) {
    Verdict v;
    v.outcome = Outcome::Accept;
    v.verb = Verb::Logs;
    v.arg_index = 1;
    v.requested_at = 5;
    v.window = window;
    return v;
}

TEST(Verdict, AWindowRoundTripsOnAnAcceptedLogs) {
    const Verdict v = accept_logs(LogWindow{50, 1796245045602731173, 3});
    const Bytes b = enc(v);
    EXPECT_EQ(Bytes(b.begin() + 24, b.end()),
              (Bytes{50, 0, 0, 0, 3, 0, 0, 0, 0xA5, 0xC4, 0xB4, 0x20, 0x5A, 0x8B, 0xED, 0x18}));
    auto d = decode_verdict(b, 4);
    ASSERT_TRUE(d) << d.error().message;
    EXPECT_EQ(d->window, v.window);
    EXPECT_EQ(enc(*d), b);
    EXPECT_TRUE(decodes(accept_logs(LogWindow{1000, kNoTime, 0})));
    EXPECT_TRUE(decodes(accept_logs(LogWindow{0, 0, 0})));
    EXPECT_TRUE(decodes(accept_logs(LogWindow{0, 7, kMaxCursorSeen})));
}

TEST(Verdict, DecoderRejectsAWindowOutOfRangeOrOffLogs) {
    EXPECT_FALSE(decodes(accept_logs(LogWindow{1001, kNoTime, 0})));
    EXPECT_FALSE(decodes(accept_logs(LogWindow{0, -1, 0})));
    EXPECT_FALSE(decodes(accept_logs(LogWindow{0, 7, kMaxCursorSeen + 1})));
    EXPECT_FALSE(decodes(accept_logs(LogWindow{5, kNoTime, 1})));  // seen without since
    Verdict restart = accept_restart();
    restart.window.lines = 5;
    EXPECT_FALSE(decodes(restart));
    Verdict denied = accept_logs(LogWindow{5, kNoTime, 0});
    denied.outcome = Outcome::Deny;
    denied.reason = ReasonCode::UnknownKey;
    EXPECT_FALSE(decodes(denied));
    Bytes padded = enc(accept_logs(LogWindow{5, kNoTime, 0}));
    padded[26] = 1;
    EXPECT_FALSE(decode_verdict(padded, 4));
}

TEST(LogCursor, FormatAndParseAreExactInverses) {
    for (const LogCursor c : {LogCursor{0, 0}, LogCursor{1796245045602731173, 2},
                              LogCursor{INT64_MAX, kMaxCursorSeen}}) {
        EXPECT_EQ(parse_cursor(format_cursor(c)), c) << format_cursor(c);
    }
    EXPECT_EQ(format_cursor(LogCursor{1796245045602731173, 2}), "1796245045602731173:2");
    for (const char* bad : {"", ":", "1", "1:", ":1", "01:1", "1:01", "-1:0", "+1:0", "1:0 ",
                            " 1:0", "1:2:3", "1.5:0", "9223372036854775808:0", "1:1000001",
                            "99999999999999999999:0", "1:0\n", "1e3:0"}) {
        EXPECT_FALSE(parse_cursor(bad)) << bad;
    }
}

TEST(LogCursor, LinesAreOneToAThousand) {
    EXPECT_EQ(parse_lines("1"), 1);
    EXPECT_EQ(parse_lines("1000"), 1000);
    for (const char* bad : {"", "0", "1001", "01", "-1", "+1", "1.0", " 1", "1 ", "10000", "x"}) {
        EXPECT_FALSE(parse_lines(bad)) << bad;
    }
}

TEST(ScreenWire, AnAnswerRoundTrips) {
    ScreenAnswer a;
    a.seq = 42;
    a.verdict = ScreenVerdict{ScreenReason::MountKeyNotAllowed, 3, ScreenFlag::MountId};
    auto back = decode_screen_answer(encode_screen_answer(a));
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(back->seq, 42u);
    EXPECT_EQ(back->verdict, a.verdict);
}

TEST(ScreenWire, ARequestCarriesItsImages) {
    const ScreenRequest none{9, {}};
    auto bytes = encode_screen_request(none);
    ASSERT_TRUE(bytes) << bytes.error().message;
    EXPECT_EQ(bytes->size(), 9u);
    auto back = decode_screen_request(*bytes);
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(*back, none);

    const ScreenRequest some{7,
                             {"alpine:latest", "docker.io/library/debian:12",
                              "localhost/app_web:latest", "sha256:" + std::string(64, 'a')}};
    bytes = encode_screen_request(some);
    ASSERT_TRUE(bytes) << bytes.error().message;
    back = decode_screen_request(*bytes);
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(*back, some);

    // The most the wire carries: kMaxScreenImages of the longest.
    ScreenRequest full{1, {}};
    for (std::size_t i = 0; i < kMaxScreenImages; ++i) {
        std::string name = "localhost/" + std::string(3, static_cast<char>('a' + i / 26 % 26)) +
                           std::string(1, static_cast<char>('a' + i % 26));
        name += "/" + std::string(kMaxImageRefBytes - name.size() - 8, 'x') + ":latest";
        full.images.push_back(name);
    }
    std::sort(full.images.begin(), full.images.end());
    bytes = encode_screen_request(full);
    ASSERT_TRUE(bytes) << bytes.error().message;
    EXPECT_EQ(bytes->size(), kScreenRequestMax);
    back = decode_screen_request(*bytes);
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(*back, full);
    full.images.push_back("zz:latest");
    EXPECT_FALSE(encode_screen_request(full));
}

// The list is a set in one spelling: what the executor cannot send, the
// screen does not take either.
TEST(ScreenWire, RequestsOutOfShapeAreRefused) {
    EXPECT_FALSE(encode_screen_request({1, {"b:latest", "a:latest"}}));  // out of order
    EXPECT_FALSE(encode_screen_request({1, {"a:latest", "a:latest"}}));  // repeated
    EXPECT_FALSE(encode_screen_request({1, {"alpine"}}));                // not canonical
    EXPECT_FALSE(encode_screen_request({1, {""}}));

    const auto request = [](std::vector<std::uint8_t> tail) {
        std::vector<std::uint8_t> out = {0x32, 0x53, 0x42, 0x48, 1, 0, 0, 0};
        out.insert(out.end(), tail.begin(), tail.end());
        return out;
    };
    const auto image = [](std::string_view text) {
        std::vector<std::uint8_t> out = {static_cast<std::uint8_t>(text.size())};
        out.insert(out.end(), text.begin(), text.end());
        return out;
    };
    const auto cat = [](std::vector<std::uint8_t> a, const std::vector<std::uint8_t>& b) {
        a.insert(a.end(), b.begin(), b.end());
        return a;
    };
    ASSERT_TRUE(decode_screen_request(request({0})));
    ASSERT_TRUE(decode_screen_request(request(cat({1}, image("a:latest")))));
    EXPECT_FALSE(decode_screen_request(request({})));                             // no count
    EXPECT_FALSE(decode_screen_request(request({0, 0})));                         // trailing
    EXPECT_FALSE(decode_screen_request(request({1})));                            // cut short
    EXPECT_FALSE(decode_screen_request(request({1, 0})));                         // empty image
    EXPECT_FALSE(decode_screen_request(request(cat({1}, image("a")))));           // not canonical
    EXPECT_FALSE(decode_screen_request(request(cat({1}, image("a:latest\n")))));  // not canonical
    EXPECT_FALSE(decode_screen_request(request({1, 9, 'a', ':'})));               // past the end
    EXPECT_FALSE(decode_screen_request(
        request(cat(cat({2}, image("b:latest")), image("a:latest")))));  // out of order
    EXPECT_FALSE(decode_screen_request(
        request(cat(cat({2}, image("a:latest")), image("a:latest")))));  // repeated
    EXPECT_FALSE(decode_screen_request(request({static_cast<std::uint8_t>(kMaxScreenImages + 1)})));
    auto bytes = request({0});
    bytes[0] ^= 1;  // magic
    EXPECT_FALSE(decode_screen_request(bytes));
    EXPECT_FALSE(decode_screen_request(std::span(bytes).first(8)));
}

// A compromised screen gets nothing past the bounds checks: a value outside
// either enum, an acceptance that carries a line, a refusal without one.
TEST(ScreenWire, AnswersOutsideTheVocabularyAreGarbage) {
    const auto last_reason = static_cast<std::uint8_t>(kLastScreenReason);
    const auto last_flag = static_cast<std::uint8_t>(kLastScreenFlag);
    EXPECT_FALSE(decode_screen_answer(answer_bytes(last_reason + 1, 0, 1)));
    EXPECT_FALSE(decode_screen_answer(answer_bytes(6, last_flag + 1, 1)));
    EXPECT_FALSE(decode_screen_answer(answer_bytes(0, 0, 5)));   // accepted, with a line
    EXPECT_FALSE(decode_screen_answer(answer_bytes(0, 1, 0)));   // accepted, with a flag
    EXPECT_FALSE(decode_screen_answer(answer_bytes(6, 17, 0)));  // refused, no line
    EXPECT_TRUE(decode_screen_answer(answer_bytes(1, 0, 0)));    // too large: no line
    EXPECT_TRUE(decode_screen_answer(answer_bytes(20, 0, 0)));   // no FROM at all: no line
    EXPECT_TRUE(decode_screen_answer(answer_bytes(last_reason, last_flag, 1)));
    auto bytes = answer_bytes(6, 17, 1);
    bytes[14] = 1;  // padding
    EXPECT_FALSE(decode_screen_answer(bytes));
    bytes = answer_bytes(6, 17, 1);
    bytes[0] ^= 1;  // magic
    EXPECT_FALSE(decode_screen_answer(bytes));
    EXPECT_FALSE(decode_screen_answer(std::span(bytes).first(15)));
}

}  // namespace
}  // namespace hb

// The reason table: fixed texts the protocol and the executor rely on, and
// which codes the parser may send with which outcome.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "ipc/wire.hpp"

namespace hb {
namespace {

TEST(ReasonText, TextsTheProtocolNames) {
    EXPECT_EQ(reason_text(ReasonCode::EmptyBody), "empty request body");
    EXPECT_EQ(reason_text(ReasonCode::ParserFailure), "parser failure");
    EXPECT_EQ(reason_text(ReasonCode::NameAlreadyUsed), "request name already used");
    EXPECT_EQ(reason_text(ReasonCode::JoinNetworkNotConfigured), "join-network is not configured");
    EXPECT_EQ(reason_text(ReasonCode::NotSupportedByCompose),
              "not supported by the compose backend");
    EXPECT_EQ(reason_text(ReasonCode::Interrupted), "interrupted");
    EXPECT_EQ(reason_text(ReasonCode::UnknownVerb), "unknown verb");
    EXPECT_EQ(reason_text(ReasonCode::RateLimited), "rate limited");
    EXPECT_EQ(reason_text(ReasonCode::Timeout), "timeout");
    EXPECT_EQ(reason_text(ReasonCode::IntegrityGate), "integrity gate");
}

// Every code in the enum's ranges has its own, non-empty, distinct text.
TEST(ReasonText, EveryCodeHasDistinctText) {
    std::set<std::string> seen;
    int codes = 0;
    for (int c = 1; c < 100; ++c) {
        const auto code = static_cast<ReasonCode>(c);
        const std::string text(reason_text(code));
        if (text == "unknown reason") continue;  // not a code of the enum
        ++codes;
        EXPECT_FALSE(text.empty()) << c;
        EXPECT_TRUE(seen.insert(text).second) << "duplicate text for " << c << ": " << text;
    }
    EXPECT_EQ(codes, 9 + 17 + 26);
    EXPECT_EQ(reason_text(ReasonCode::None), "");
}

TEST(ReasonValidForParser, OutcomeRanges) {
    EXPECT_TRUE(reason_valid_for_parser(ReasonCode::None, Outcome::Accept));
    EXPECT_FALSE(reason_valid_for_parser(ReasonCode::None, Outcome::Deny));
    EXPECT_FALSE(reason_valid_for_parser(ReasonCode::None, Outcome::Quarantine));
    for (int c = 1; c <= 9; ++c) {
        const auto code = static_cast<ReasonCode>(c);
        EXPECT_TRUE(reason_valid_for_parser(code, Outcome::Quarantine)) << c;
        EXPECT_FALSE(reason_valid_for_parser(code, Outcome::Deny)) << c;
        EXPECT_FALSE(reason_valid_for_parser(code, Outcome::Accept)) << c;
    }
    for (int c = 20; c <= 36; ++c) {
        const auto code = static_cast<ReasonCode>(c);
        EXPECT_TRUE(reason_valid_for_parser(code, Outcome::Deny)) << c;
        EXPECT_FALSE(reason_valid_for_parser(code, Outcome::Quarantine)) << c;
        EXPECT_FALSE(reason_valid_for_parser(code, Outcome::Accept)) << c;
    }
    // Executor-only codes and values outside the enum: never from the parser.
    for (int c : {10, 19, 37, 40, 43, 44, 48, 56, 57, 64, 1000, 65535}) {
        for (Outcome o : {Outcome::Accept, Outcome::Deny, Outcome::Quarantine}) {
            EXPECT_FALSE(reason_valid_for_parser(static_cast<ReasonCode>(c), o)) << c;
        }
    }
}

TEST(Verbs, NamesRoundTrip) {
    for (Verb v : kAllVerbs) {
        ASSERT_TRUE(verb_from_name(verb_name(v)).has_value());
        EXPECT_EQ(*verb_from_name(verb_name(v)), v);
    }
    EXPECT_EQ(verb_name(Verb::JoinNetwork), "join-network");
    EXPECT_FALSE(verb_from_name("join_network"));
    EXPECT_FALSE(verb_from_name("PING"));
    EXPECT_FALSE(verb_from_name(""));
    EXPECT_FALSE(verb_from_name("exec"));
    EXPECT_FALSE(verb_from_name(std::string_view("ping\0", 5)));
}

TEST(Verbs, ArgKinds) {
    EXPECT_EQ(verb_arg_kind(Verb::Logs), ArgKind::Service);
    EXPECT_EQ(verb_arg_kind(Verb::Restart), ArgKind::Service);
    EXPECT_EQ(verb_arg_kind(Verb::Rebuild), ArgKind::Buildable);
    for (Verb v : {Verb::Ping, Verb::Status, Verb::Health, Verb::Up, Verb::Down, Verb::Init,
                   Verb::JoinNetwork}) {
        EXPECT_EQ(verb_arg_kind(v), ArgKind::None) << verb_name(v);
    }
}

TEST(ArgShape, Rules) {
    EXPECT_TRUE(is_valid_arg_shape("api"));
    EXPECT_TRUE(is_valid_arg_shape("a"));
    EXPECT_TRUE(is_valid_arg_shape("web-1_x"));
    EXPECT_TRUE(is_valid_arg_shape(std::string(64, 'a')));
    EXPECT_FALSE(is_valid_arg_shape(std::string(65, 'a')));
    EXPECT_FALSE(is_valid_arg_shape(""));
    EXPECT_FALSE(is_valid_arg_shape("1api"));
    EXPECT_FALSE(is_valid_arg_shape("-api"));
    EXPECT_FALSE(is_valid_arg_shape("_api"));
    EXPECT_FALSE(is_valid_arg_shape("Api"));
    EXPECT_FALSE(is_valid_arg_shape("api;rm"));
    EXPECT_FALSE(is_valid_arg_shape("a.b"));
    EXPECT_FALSE(is_valid_arg_shape("a b"));
    EXPECT_FALSE(is_valid_arg_shape("a/b"));
    EXPECT_FALSE(is_valid_arg_shape(std::string_view("a\0", 2)));
}

}  // namespace
}  // namespace hb

// The container-facts messages (ipc/inspect_wire.hpp): what the executor
// believes of the sandboxed reader's answer is bounds-checked field by field.
#include <gtest/gtest.h>

#include "ipc/inspect_wire.hpp"

namespace hb {
namespace {

ContainerFacts sample() {
    ContainerFacts c;
    c.id.fill(0xab);
    c.image.fill(0xcd);
    c.started_ns = 1796245045602731173;
    c.restarts = 3;
    c.exit_code = -1;
    c.pid = 4242;
    c.service = 1;
    c.state = ContainerState::Running;
    c.health = ContainerHealth::Starting;
    c.labelled = true;
    c.definition = DefinitionMatch::Changed;
    return c;
}

TEST(InspectWire, RequestRoundTrip) {
    const InspectRequest r{9, "proj", {"api", "db"}};
    auto bytes = encode_inspect_request(r);
    ASSERT_TRUE(bytes);
    auto back = decode_inspect_request(*bytes);
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(back->seq, 9u);
    EXPECT_EQ(back->project, "proj");
    EXPECT_EQ(back->services, r.services);
    EXPECT_FALSE(back->install_label);
    InspectRequest labelled = r;
    labelled.install_label = true;
    auto labelled_bytes = encode_inspect_request(labelled);
    ASSERT_TRUE(labelled_bytes);
    auto labelled_back = decode_inspect_request(*labelled_bytes);
    ASSERT_TRUE(labelled_back) << labelled_back.error().message;
    EXPECT_TRUE(labelled_back->install_label);
    (*labelled_bytes)[10] = 2;  // a flag is 0 or 1
    EXPECT_FALSE(decode_inspect_request(*labelled_bytes));
    bytes->push_back(0);
    EXPECT_FALSE(decode_inspect_request(*bytes));  // trailing byte
    EXPECT_FALSE(encode_inspect_request({1, "", {}}));
    EXPECT_FALSE(encode_inspect_request({1, "p", {std::string(65, 'x')}}));
    EXPECT_FALSE(encode_inspect_request({1, "p", std::vector<std::string>(65, "s")}));
    // Definitions: one per service, each 32 bytes after its name.
    InspectRequest defined = r;
    defined.install_label = true;
    defined.definitions = {{}, {}};
    defined.definitions[1].fill(0x5a);
    auto defined_bytes = encode_inspect_request(defined);
    ASSERT_TRUE(defined_bytes);
    EXPECT_EQ(defined_bytes->size(), bytes->size() - 1 + 64);
    auto defined_back = decode_inspect_request(*defined_bytes);
    ASSERT_TRUE(defined_back) << defined_back.error().message;
    EXPECT_EQ(defined_back->definitions, defined.definitions);
    EXPECT_TRUE(defined_back->install_label);
    defined_bytes->pop_back();
    EXPECT_FALSE(decode_inspect_request(*defined_bytes));  // cut short
    (*defined_bytes)[10] = 4;
    EXPECT_FALSE(decode_inspect_request(*defined_bytes));  // an unknown flag
    defined.definitions.pop_back();
    EXPECT_FALSE(encode_inspect_request(defined));  // not one per service
}

TEST(InspectWire, AnswerRoundTrip) {
    InspectAnswer a;
    a.seq = 5;
    a.total = 2;
    a.containers = {sample(), sample()};
    a.containers[1].service = kNoService;
    const auto bytes = encode_inspect_answer(a);
    auto back = decode_inspect_answer(bytes, 2);
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(back->seq, 5u);
    EXPECT_EQ(back->total, 2u);
    EXPECT_EQ(back->containers, a.containers);
}

TEST(InspectWire, AnswerRefusesWhatTheReaderCannotMean) {
    InspectAnswer a;
    a.total = 1;
    a.containers = {sample()};
    const auto good = encode_inspect_answer(a);
    ASSERT_TRUE(decode_inspect_answer(good, 2));
    const auto refused = [&](std::size_t at, std::uint8_t value, std::size_t services = 2) {
        auto bad = good;
        bad[at] = value;
        return !decode_inspect_answer(bad, services);
    };
    EXPECT_TRUE(refused(0, 0));                    // magic
    EXPECT_TRUE(refused(8, 4));                    // status out of range
    EXPECT_TRUE(refused(8, 1));                    // a refusal that carries records
    EXPECT_TRUE(refused(9, 2));                    // more records than containers
    EXPECT_TRUE(refused(10, 1));                   // padding
    EXPECT_TRUE(refused(16 + 86, 11));             // state out of range
    EXPECT_TRUE(refused(16 + 87, 5));              // health out of range
    EXPECT_TRUE(refused(16 + 88, 2));              // labelled is a bool
    EXPECT_TRUE(refused(16 + 89, 3));              // definition out of range
    EXPECT_TRUE(refused(16 + 90, 1));              // record padding
    EXPECT_TRUE(refused(16 + 96 + 3, 1));          // an unused record
    EXPECT_TRUE(refused(16 + 71, 0x80));           // a start before 1970
    EXPECT_FALSE(decode_inspect_answer(good, 1));  // service 1 of a list of 1
    auto no_id = a;
    no_id.containers[0].id.fill(0);
    EXPECT_FALSE(decode_inspect_answer(encode_inspect_answer(no_id), 2));
    std::vector<std::uint8_t> short_one(good.begin(), good.end() - 1);
    EXPECT_FALSE(decode_inspect_answer(short_one, 2));
}

TEST(InspectWire, HexIds) {
    std::array<std::uint8_t, 32> id{};
    EXPECT_TRUE(parse_hex_id(std::string(64, 'f'), id));
    EXPECT_EQ(hex_id(id), std::string(64, 'f'));
    EXPECT_FALSE(parse_hex_id(std::string(63, 'f'), id));
    EXPECT_FALSE(parse_hex_id(std::string(64, 'F'), id));
    EXPECT_FALSE(parse_hex_id(std::string(63, 'f') + "g", id));
}

}  // namespace
}  // namespace hb

// requested_at against an independent reference (the known epoch of chosen
// instants) and the calendar's edges.
#include <gtest/gtest.h>

#include "ipc/wire.hpp"
#include "parser/requested_at.hpp"

namespace hb::parser {
namespace {

TEST(RequestedAt, KnownEpochs) {
    EXPECT_EQ(parse_requested_at("1970-01-01T00:00:00Z"), 0);
    EXPECT_EQ(parse_requested_at("1970-01-01T00:00:01Z"), 1);
    EXPECT_EQ(parse_requested_at("1969-12-31T23:59:59Z"), -1);
    EXPECT_EQ(parse_requested_at("2000-01-01T00:00:00Z"), 946684800);
    EXPECT_EQ(parse_requested_at("2000-02-29T12:00:00Z"), 951825600);
    EXPECT_EQ(parse_requested_at("2000-03-01T00:00:00Z"), 951868800);
    EXPECT_EQ(parse_requested_at("2038-01-19T03:14:08Z"), 2147483648);
    EXPECT_EQ(parse_requested_at("2026-11-29T08:00:00Z"), 1795939200);
    EXPECT_EQ(parse_requested_at("2024-12-31T23:59:59Z"), 1735689599);
    EXPECT_EQ(parse_requested_at("0000-01-01T00:00:00Z"), -62167219200);
    EXPECT_EQ(parse_requested_at("9999-12-31T23:59:59Z"), 253402300799);
}

TEST(RequestedAt, ConsecutiveDaysAcrossYearsAreContiguous) {
    // Every day from 1899 to 2101: the epoch advances by exactly 86400,
    // which catches a wrong month length or leap rule anywhere in between.
    static constexpr int kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    std::int64_t prev = parse_requested_at("1898-12-31T00:00:00Z");
    ASSERT_NE(prev, kNoTime);
    int days = 0;
    for (int y = 1899; y <= 2101; ++y) {
        const bool leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
        for (int m = 1; m <= 12; ++m) {
            const int last = m == 2 && leap ? 29 : kDays[m - 1];
            for (int d = 1; d <= last + 1; ++d) {
                char buf[32];
                std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT00:00:00Z", y, m, d);
                const std::int64_t t = parse_requested_at(buf);
                if (d == last + 1) {
                    EXPECT_EQ(t, kNoTime) << buf;
                    continue;
                }
                ASSERT_EQ(t, prev + 86400) << buf;
                prev = t;
                ++days;
            }
        }
    }
    EXPECT_EQ(days, 203 * 365 + 49);  // 49 leap years in 1899..2101
}

TEST(RequestedAt, LeapYears) {
    EXPECT_NE(parse_requested_at("2024-02-29T00:00:00Z"), kNoTime);
    EXPECT_NE(parse_requested_at("2000-02-29T00:00:00Z"), kNoTime);
    EXPECT_EQ(parse_requested_at("1900-02-29T00:00:00Z"), kNoTime);
    EXPECT_EQ(parse_requested_at("2100-02-29T00:00:00Z"), kNoTime);
    EXPECT_EQ(parse_requested_at("2025-02-29T00:00:00Z"), kNoTime);
    EXPECT_EQ(parse_requested_at("2026-02-30T00:00:00Z"), kNoTime);
}

TEST(RequestedAt, FieldRanges) {
    for (const char* t : {"2026-00-01T00:00:00Z", "2026-13-01T00:00:00Z", "2026-01-00T00:00:00Z",
                          "2026-01-32T00:00:00Z", "2026-04-31T00:00:00Z", "2026-01-01T24:00:00Z",
                          "2026-01-01T00:60:00Z", "2026-01-01T00:00:60Z", "2016-12-31T23:59:60Z"}) {
        EXPECT_EQ(parse_requested_at(t), kNoTime) << t;
    }
}

TEST(RequestedAt, ExactForm) {
    for (const char* t :
         {"", "2026-11-29T08:00:00", "2026-11-29T08:00:00ZZ", " 2026-11-29T08:00:00Z",
          "2026-11-29T08:00:00Z ", "2026-11-29t08:00:00Z", "2026-11-29T08:00:00z",
          "2026-11-29T08:00:00.000Z", "2026-11-29T08:00:00+00:00", "2026-11-29T08:00Z",
          "26-11-29T08:00:00Z", "+2026-11-29T08:00:00Z", "2026/11/29T08:00:00Z",
          "2026-11-29T08-00-00Z", "2026-1-29T08:00:00Z0", "2026-11-29T8:00:00Z0",
          "２026-11-29T08:00:00Z", "2026-11-29T08:00:0-Z", "-026-11-29T08:00:00Z"}) {
        EXPECT_EQ(parse_requested_at(t), kNoTime) << t;
    }
}

}  // namespace
}  // namespace hb::parser

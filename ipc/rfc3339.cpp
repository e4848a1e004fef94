#include "ipc/rfc3339.hpp"

#include <cstdint>

namespace hb {
namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
// days_from_civil).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
    y -= m <= 2;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const auto yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

}  // namespace

std::int64_t rfc3339_ns(std::string_view t) {
    std::size_t at = 0;
    const auto digits = [&](std::size_t n, std::int64_t& out) {
        if (at + n > t.size()) return false;
        out = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const char c = t[at + i];
            if (c < '0' || c > '9') return false;
            out = out * 10 + (c - '0');
        }
        at += n;
        return true;
    };
    const auto sep = [&](char c) { return at < t.size() && t[at++] == c; };
    std::int64_t y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
    if (!digits(4, y) || !sep('-') || !digits(2, mo) || !sep('-') || !digits(2, d) || !(sep('T')) ||
        !digits(2, h) || !sep(':') || !digits(2, mi) || !sep(':') || !digits(2, s)) {
        return 0;
    }
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return 0;
    std::int64_t frac = 0;
    if (at < t.size() && t[at] == '.') {
        ++at;
        std::size_t n = 0;
        while (at < t.size() && t[at] >= '0' && t[at] <= '9') {
            if (n < 9) frac = frac * 10 + (t[at] - '0');
            ++n;
            ++at;
        }
        if (n == 0) return 0;
        for (; n < 9; ++n) frac *= 10;
    }
    std::int64_t offset = 0;
    if (at < t.size() && t[at] == 'Z') {
        ++at;
    } else if (at < t.size() && (t[at] == '+' || t[at] == '-')) {
        const int sign = t[at++] == '+' ? 1 : -1;
        std::int64_t oh = 0, om = 0;
        if (!digits(2, oh) || !sep(':') || !digits(2, om) || oh > 23 || om > 59) return 0;
        offset = sign * (oh * 3600 + om * 60);
    } else {
        return 0;
    }
    if (at != t.size()) return 0;
    const std::int64_t days =
        days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
    const std::int64_t secs = days * 86400 + h * 3600 + mi * 60 + s - offset;
    if (secs < 0 || secs > INT64_MAX / 1000000000 - 1) return 0;
    return secs * 1000000000 + frac;
}

}  // namespace hb

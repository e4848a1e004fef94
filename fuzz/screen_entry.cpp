// Invariants of the Containerfile screen on arbitrary bytes: it never
// crashes or reads past the end, is deterministic, and every verdict is one
// the executor can print: known reason and flag, a line inside the file, a
// flag exactly when the reason is about one.
#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "fuzz/check.hpp"
#include "fuzz/entry.hpp"
#include "ipc/image_ref.hpp"
#include "parser/containerfile_screen.hpp"

namespace hb::fuzz {

namespace {

// Whether a refusal for this reason names a flag: always, never, or either
// (ImageTransport names --from for COPY, nothing for FROM).
enum class Names { Always, Never, Either };

Names names_flag(hb::ScreenReason reason) {
    using R = hb::ScreenReason;
    switch (reason) {
        case R::RunFlagNotMount:
        case R::MountNotCache:
        case R::MountKeyNotAllowed:
        case R::MountTargetNotAbsolute:
        case R::MountSharingValue:
        case R::MountRefused:
        case R::DollarInFlag:
        case R::FlagNotAllowed:
        case R::OddFlagSyntax:
            return Names::Always;
        case R::ImageTransport:
        case R::ImageNotAllowed:
            return Names::Either;
        default:
            return Names::Never;
    }
}

// A fixed list, as the executor sends one: canonical, sorted, unique.
const std::vector<std::string>& allowed_images() {
    static const std::vector<std::string> kAllowed = {
        "alpine:latest", "docker.io/library/debian:12", "localhost/app_web:latest"};
    return kAllowed;
}

}  // namespace

void screen_one(const std::uint8_t* data, std::size_t size) {
    const std::span<const std::uint8_t> bytes(data, size);
    const hb::ScreenVerdict v = parser::screen_containerfile(bytes, allowed_images());
    HB_FUZZ_CHECK(parser::screen_containerfile(bytes, allowed_images()) == v);

    // The admin tool's reading agrees with the screen's: what it collects is
    // canonical, sorted and unique, and exactly those allowed pass the screen.
    const parser::NamedImages named = parser::containerfile_images(bytes);
    if (named.verdict.reason == hb::ScreenReason::None) {
        HB_FUZZ_CHECK(std::is_sorted(named.images.begin(), named.images.end()));
        HB_FUZZ_CHECK(std::adjacent_find(named.images.begin(), named.images.end()) ==
                      named.images.end());
        for (const auto& image : named.images)
            HB_FUZZ_CHECK(hb::canonical_image_ref(image) == image);
        HB_FUZZ_CHECK(parser::screen_containerfile(bytes, named.images) == hb::ScreenVerdict{});
    }
    HB_FUZZ_CHECK(v.reason <= hb::kLastScreenReason);
    HB_FUZZ_CHECK(v.flag <= hb::kLastScreenFlag);
    HB_FUZZ_CHECK(!hb::screen_reason_text(v.reason).empty());

    const auto lines = static_cast<std::uint32_t>(
        std::count(bytes.begin(), bytes.end(), static_cast<std::uint8_t>('\n')) + 1);
    if (v.reason == hb::ScreenReason::None) {
        HB_FUZZ_CHECK(v.line == 0 && v.flag == hb::ScreenFlag::None);
        return;
    }
    if (v.reason == hb::ScreenReason::TooLarge) {
        HB_FUZZ_CHECK(size > hb::kMaxContainerfileBytes && v.line == 0);
        return;
    }
    if (v.reason == hb::ScreenReason::NoStage) {  // about the whole file
        HB_FUZZ_CHECK(v.line == 0 && v.flag == hb::ScreenFlag::None);
        return;
    }
    HB_FUZZ_CHECK(v.line >= 1 && v.line <= lines);
    const Names names = names_flag(v.reason);
    if (names == Names::Always) HB_FUZZ_CHECK(v.flag != hb::ScreenFlag::None);
    if (names == Names::Never) HB_FUZZ_CHECK(v.flag == hb::ScreenFlag::None);
    if (v.flag != hb::ScreenFlag::None) {
        HB_FUZZ_CHECK(!hb::screen_flag_name(v.flag).empty());
    }
}

}  // namespace hb::fuzz

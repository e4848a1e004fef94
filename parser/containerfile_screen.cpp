// The screen reads a Containerfile the way buildah 1.28 does: imagebuilder's
// parser at 4151e43600df (dockerfile/parser: parser.go, split_command.go,
// line_parsers.go), its dispatchers (dispatchers.go) and buildah's own
// reading of --mount values (run_common.go, internal/parse). Where its
// reading and the builder's might part ways (quotes, escapes, Unicode spaces,
// odd flag syntax) it refuses rather than guess, so that an accepted file
// reads the same to both.
//
// The bytes are judged first, then the instructions in file order; the first
// refusal is the verdict.
#include "parser/containerfile_screen.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <utility>

#include "ipc/enum_names.hpp"
#include "ipc/image_ref.hpp"

namespace hb::parser {
namespace {

constexpr std::size_t npos = std::string_view::npos;

struct Refusal {
    ScreenReason reason;
    ScreenFlag flag = ScreenFlag::None;
};
using Check = std::optional<Refusal>;

// ------------------------------------------------------------ bytes

// Go's unicode.IsSpace beyond ASCII, less U+0085 (a C1 control, refused as
// one). The builder trims and splits on these in some places and not in
// others, so a file with one cannot be read the same way twice.
bool is_unicode_space(char32_t c) {
    return c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
           c == 0x202F || c == 0x205F || c == 0x3000;
}

// The length of the well-formed UTF-8 sequence at text[i] (a lead byte of
// 0x80 or more) and its code point, or 0: no overlong forms, no surrogates,
// nothing past U+10FFFF.
std::size_t utf8_sequence(std::string_view text, std::size_t i, char32_t& cp) {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[i + k]); };
    const unsigned char lead = byte(0);
    std::size_t n = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
    if (lead >= 0xC2 && lead <= 0xDF) {
        n = 2;
        cp = lead & 0x1Fu;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        n = 3;
        cp = lead & 0x0Fu;
        if (lead == 0xE0) lo = 0xA0;
        if (lead == 0xED) hi = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        n = 4;
        cp = lead & 0x07u;
        if (lead == 0xF0) lo = 0x90;
        if (lead == 0xF4) hi = 0x8F;
    } else {
        return 0;
    }
    if (text.size() - i < n) return 0;
    for (std::size_t k = 1; k < n; ++k) {
        const unsigned char b = byte(k);
        if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) return 0;
        cp = (cp << 6) | (b & 0x3Fu);
    }
    return n;
}

// Every byte and every line length, before any instruction is read.
ScreenVerdict check_bytes(std::string_view text) {
    std::uint32_t line = 1;
    std::size_t line_start = 0;
    for (std::size_t i = 0; i < text.size();) {
        const auto b = static_cast<unsigned char>(text[i]);
        if (b == '\n') {
            if (i - line_start > kMaxContainerfileLineBytes) {
                return {ScreenReason::LineTooLong, line, ScreenFlag::None};
            }
            ++line;
            line_start = ++i;
            continue;
        }
        if (b < 0x80) {
            // \r included: Go drops one before each '\n', we would have to
            // mirror that; a CRLF file is refused instead.
            if ((b < 0x20 && b != '\t') || b == 0x7F) {
                return {ScreenReason::BadBytes, line, ScreenFlag::None};
            }
            ++i;
            continue;
        }
        char32_t cp = 0;
        const std::size_t n = utf8_sequence(text, i, cp);
        if (n == 0 || cp <= 0x9F || is_unicode_space(cp)) {
            return {ScreenReason::BadBytes, line, ScreenFlag::None};
        }
        i += n;
    }
    if (text.size() - line_start > kMaxContainerfileLineBytes) {
        return {ScreenReason::LineTooLong, line, ScreenFlag::None};
    }
    return {};
}

// ------------------------------------------------------------ words

// After check_bytes, space and tab are the only whitespace left, so these are
// what every one of the builder's trims and splits sees.
bool is_blank(char c) {
    return c == ' ' || c == '\t';
}

std::string_view trim_left(std::string_view s) {
    while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
    return s;
}

std::string_view trim_right(std::string_view s) {
    while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
    return s;
}

std::string_view trim(std::string_view s) {
    return trim_left(trim_right(s));
}

std::size_t find_blank(std::string_view s) {
    return s.find_first_of(" \t");
}

// The first word of `s` (already left-trimmed) and what follows it, left-trimmed.
std::pair<std::string_view, std::string_view> split_word(std::string_view s) {
    const std::size_t end = find_blank(s);
    if (end == npos) return {s, {}};
    return {s.substr(0, end), trim_left(s.substr(end))};
}

char ascii_lower(char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

// ASCII only: Go's strings.ToLower also folds a few non-ASCII letters (the
// Kelvin sign to 'k'), and the screen would rather refuse those words.
bool equals_ascii_ci(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
    }
    return true;
}

bool contains_ascii_ci(std::string_view s, std::string_view needle) {
    for (std::size_t i = 0; i + needle.size() <= s.size(); ++i) {
        if (equals_ascii_ci(s.substr(i, needle.size()), needle)) return true;
    }
    return false;
}

// ------------------------------------------------------------ instructions

enum class Instr {
    From,
    Run,
    Cmd,
    Label,
    Maintainer,
    Expose,
    Env,
    Add,
    Copy,
    Entrypoint,
    Volume,
    User,
    Workdir,
    Arg,
    Onbuild,
    StopSignal,
    Healthcheck,
    Shell,
    Unknown,
};

constexpr std::array<Named<Instr>, 18> kInstructions = {{
    {Instr::From, "from"},
    {Instr::Run, "run"},
    {Instr::Cmd, "cmd"},
    {Instr::Label, "label"},
    {Instr::Maintainer, "maintainer"},
    {Instr::Expose, "expose"},
    {Instr::Env, "env"},
    {Instr::Add, "add"},
    {Instr::Copy, "copy"},
    {Instr::Entrypoint, "entrypoint"},
    {Instr::Volume, "volume"},
    {Instr::User, "user"},
    {Instr::Workdir, "workdir"},
    {Instr::Arg, "arg"},
    {Instr::Onbuild, "onbuild"},
    {Instr::StopSignal, "stopsignal"},
    {Instr::Healthcheck, "healthcheck"},
    {Instr::Shell, "shell"},
}};

Instr instruction_named(std::string_view word) {
    for (const Named<Instr>& row : kInstructions) {
        if (equals_ascii_ci(word, row.word)) return row.value;
    }
    return Instr::Unknown;
}

constexpr std::array<Named<ScreenFlag>, 13> kFlagNames = {{
    {ScreenFlag::Mount, "mount"},
    {ScreenFlag::Network, "network"},
    {ScreenFlag::Security, "security"},
    {ScreenFlag::From, "from"},
    {ScreenFlag::Chown, "chown"},
    {ScreenFlag::Chmod, "chmod"},
    {ScreenFlag::Link, "link"},
    {ScreenFlag::Platform, "platform"},
    {ScreenFlag::Keep, "keep-git-dir"},
    {ScreenFlag::Interval, "interval"},
    {ScreenFlag::Timeout, "timeout"},
    {ScreenFlag::StartPeriod, "start-period"},
    {ScreenFlag::Retries, "retries"},
}};

// Flag names are matched exactly, as the dispatchers' HasPrefix("--mount=") do.
ScreenFlag flag_named(std::string_view name) {
    for (const Named<ScreenFlag>& row : kFlagNames) {
        if (name == row.word) return row.value;
    }
    return ScreenFlag::Other;
}

// The flags each dispatcher reads (dispatchers.go). COPY --link is not among
// them in this imagebuilder ("COPY only supports --chmod --chown --from").
// The others ignore their flags, which a build tool should not rely on.
bool flag_allowed(Instr instr, ScreenFlag flag) {
    using F = ScreenFlag;
    switch (instr) {
        case Instr::Run:
            return flag == F::Mount;
        case Instr::Copy:
            return flag == F::From || flag == F::Chown || flag == F::Chmod;
        case Instr::Add:
            return flag == F::Chown || flag == F::Chmod;
        case Instr::From:
            return flag == F::Platform;
        case Instr::Healthcheck:
            return flag == F::Interval || flag == F::Timeout || flag == F::StartPeriod ||
                   flag == F::Retries;
        default:
            return false;
    }
}

constexpr std::array<Named<ScreenFlag>, 16> kMountKeys = {{
    {ScreenFlag::MountType, "type"},
    {ScreenFlag::MountTarget, "target"},
    {ScreenFlag::MountSharing, "sharing"},
    {ScreenFlag::MountId, "id"},
    {ScreenFlag::MountSource, "source"},
    {ScreenFlag::MountSource, "src"},
    {ScreenFlag::MountFrom, "from"},
    {ScreenFlag::MountRw, "rw"},
    {ScreenFlag::MountRw, "readwrite"},
    {ScreenFlag::MountReadonly, "readonly"},
    {ScreenFlag::MountReadonly, "ro"},
    {ScreenFlag::MountMode, "mode"},
    {ScreenFlag::MountUid, "uid"},
    {ScreenFlag::MountGid, "gid"},
    {ScreenFlag::MountSize, "size"},
    {ScreenFlag::MountRequired, "required"},
}};

// Keys are matched exactly, as buildah's switch on them does; dst= and
// destination= (target's aliases) are among the others.
ScreenFlag mount_key_named(std::string_view key) {
    for (const Named<ScreenFlag>& row : kMountKeys) {
        if (key == row.word) return row.value;
    }
    return ScreenFlag::MountOther;
}

// One key=value of a --mount. buildah splits the value on ',' and each option
// at its first '=' (run_common.go, GetCacheMount); a type= is checked in every
// option, so with more than one the last would win: each must say cache.
Check screen_mount_option(std::string_view option, bool& typed, bool& targeted) {
    if (option.empty() || option.front() == '=') {
        return Refusal{ScreenReason::OddFlagSyntax, ScreenFlag::Mount};
    }
    const std::size_t eq = option.find('=');
    const ScreenFlag key = mount_key_named(option.substr(0, eq));
    if (key != ScreenFlag::MountType && key != ScreenFlag::MountTarget &&
        key != ScreenFlag::MountSharing) {
        return Refusal{ScreenReason::MountKeyNotAllowed, key};
    }
    // A bare `sharing` makes buildah 1.28 index past its split (a panic).
    if (eq == npos) return Refusal{ScreenReason::OddFlagSyntax, key};
    const std::string_view value = option.substr(eq + 1);
    if (key == ScreenFlag::MountType) {
        typed = true;
        if (value != "cache") return Refusal{ScreenReason::MountNotCache, key};
    } else if (key == ScreenFlag::MountTarget) {
        targeted = true;
        if (!value.starts_with('/')) return Refusal{ScreenReason::MountTargetNotAbsolute, key};
    } else if (value != "shared" && value != "private" && value != "locked") {
        return Refusal{ScreenReason::MountSharingValue, key};
    }
    return std::nullopt;
}

// A --mount value is refused whatever it says. The checks before the last
// line only name the worst thing in it: buildah's type defaults to bind (the
// context, or an image with from=), and it carries one mount's type over to
// the next --mount that names none. Even type=cache,target=/abs is not
// confined: buildah keeps it in $TMPDIR/buildah-cache-*/<target> and follows
// a link that an earlier step planted there when it mounts it (SECURITY.md,
// "Two postures").
Check screen_mount(std::string_view value) {
    bool typed = false, targeted = false;
    for (;;) {
        const std::size_t comma = value.find(',');
        if (Check r = screen_mount_option(value.substr(0, comma), typed, targeted)) return r;
        if (comma == npos) break;
        value.remove_prefix(comma + 1);
    }
    if (!typed) return Refusal{ScreenReason::MountNotCache, ScreenFlag::MountType};
    if (!targeted) return Refusal{ScreenReason::MountTargetNotAbsolute, ScreenFlag::MountTarget};
    return Refusal{ScreenReason::MountRefused, ScreenFlag::Mount};
}

// The transports containers/image registers (alltransports), but "docker":
// the name in `FROM docker:24` is the registry's, and `docker://` pulls from
// a registry too. Every other one reads the host (a path, the storage, the
// docker daemon's socket) as the user who builds.
bool is_local_transport(std::string_view prefix) {
    constexpr std::array<std::string_view, 10> kTransports = {
        "atomic",        "containers-storage",
        "dir",           "docker-archive",
        "docker-daemon", "oci",
        "oci-archive",   "ostree",
        "sif",           "tarball",
    };
    for (std::string_view t : kTransports) {
        if (prefix == t) return true;
    }
    return false;
}

struct Reading {
    char escape = '\\';
    bool seen_from = false;
    // Each stage's AS name so far ("" for none), in file order; the last is
    // the stage being read.
    std::vector<std::string> stages;
    std::span<const std::string> allowed;
    std::vector<std::string>* collect = nullptr;  // containerfile_images: collect, never refuse
    bool buildkit = false;                        // Builder::BuildKit
};

// buildah uses a stage for COPY --from=X only when X names an earlier stage
// (its AS name, or its index: stage_executor.go, `other.index < s.index`),
// and for FROM X when an earlier stage is named X; otherwise X is an image.
// An index is not taken for FROM: were buildah to read `FROM 0` as an image,
// "0" would be the prefix of some image's id.
bool names_earlier_stage(std::string_view ref, const Reading& reading, bool index_too) {
    const std::size_t earlier =
        reading.stages.size() - (index_too && !reading.stages.empty() ? 1 : 0);
    for (std::size_t i = 0; i < earlier; ++i) {
        if (reading.stages[i] == ref) return true;
        if (index_too && std::to_string(i) == ref) return true;
    }
    return false;
}

// After the transport check: an earlier stage, scratch (FROM only: it is no
// image), or an allowed image (ipc/image_ref.hpp's comparison).
Check screen_image_allowed(std::string_view ref, ScreenFlag flag, Reading& reading, bool onbuild) {
    const bool copy = flag == ScreenFlag::From;
    if (!onbuild && names_earlier_stage(ref, reading, copy)) return std::nullopt;
    if (!copy && ref == "scratch") return std::nullopt;
    const std::optional<std::string> canonical = canonical_image_ref(ref);
    if (!canonical) return Refusal{ScreenReason::ImageNotAllowed, flag};
    if (reading.collect != nullptr) {
        reading.collect->push_back(*canonical);
        return std::nullopt;
    }
    for (const std::string& image : reading.allowed) {
        if (image_refs_match(*canonical, image)) return std::nullopt;
    }
    return Refusal{ScreenReason::ImageNotAllowed, flag};
}

// FROM's image and COPY --from: libimage reads "<transport>:<rest>" whenever
// the part before the first ':' names a transport. The whole reference must
// be plain: a $ could expand to a transport or to another image than the one
// a person was shown (`FROM localhost/x:${TAG}`), quotes and backslashes are
// removed first.
Check screen_image(std::string_view ref, ScreenFlag flag, Reading& reading, bool onbuild) {
    if (ref.find_first_of("$'\"\\`") != npos) return Refusal{ScreenReason::ImageTransport, flag};
    const std::size_t colon = ref.find(':');
    const std::string_view prefix = ref.substr(0, colon);
    if (colon != npos && is_local_transport(prefix)) {
        return Refusal{ScreenReason::ImageTransport, flag};
    }
    return screen_image_allowed(ref, flag, reading, onbuild);
}

// Bytes whose meaning in a flag depends on who reads it: imagebuilder's flag
// splitter removes quotes and backslashes and splits on the bytes 0x85 and
// 0xA0 inside UTF-8 letters; ProcessWord then removes them again.
bool has_odd_flag_byte(std::string_view word) {
    for (char c : word) {
        if (c == '\'' || c == '"' || c == '\\' || c == '`' ||
            static_cast<unsigned char>(c) >= 0x80) {
            return true;
        }
    }
    return false;
}

// One word starting with "--". A $ first, whatever else is wrong: ARG and ENV
// values are substituted into every flag of RUN, COPY, ADD and FROM.
Check screen_flag(Instr instr, std::string_view word, Reading& reading, bool onbuild) {
    const std::size_t eq = word.find('=');
    const std::string_view name = word.substr(2, eq == npos ? npos : eq - 2);
    const ScreenFlag flag = flag_named(name);
    if (word.find('$') != npos) return Refusal{ScreenReason::DollarInFlag, flag};
    if (has_odd_flag_byte(word) || name.empty()) return Refusal{ScreenReason::OddFlagSyntax, flag};
    if (!flag_allowed(instr, flag)) {
        return Refusal{
            instr == Instr::Run ? ScreenReason::RunFlagNotMount : ScreenReason::FlagNotAllowed,
            flag};
    }
    if (eq == npos || eq + 1 == word.size()) return Refusal{ScreenReason::OddFlagSyntax, flag};
    const std::string_view value = word.substr(eq + 1);
    if (flag == ScreenFlag::Mount) return screen_mount(value);
    if (flag == ScreenFlag::From) return screen_image(value, flag, reading, onbuild);
    return std::nullopt;
}

// imagebuilder's extractBuilderFlags, for every instruction: each word that
// starts with "--" is a flag, up to the first word that does not. `rest` is
// left at that word.
Check screen_flags(Instr instr, std::string_view& rest, Reading& reading, bool onbuild) {
    for (;;) {
        rest = trim_left(rest);
        if (!rest.starts_with("--")) return std::nullopt;
        const std::size_t end = find_blank(rest);
        const std::string_view word = rest.substr(0, end);
        rest.remove_prefix(word.size());
        if (Check r = screen_flag(instr, word, reading, onbuild)) return r;
    }
}

bool starts_heredoc_word(std::string_view s) {
    if (s.starts_with('-')) s.remove_prefix(1);
    s = trim_left(s);
    if (!s.empty() && (s.front() == '\'' || s.front() == '"' || s.front() == '\\')) {
        s.remove_prefix(1);
    }
    if (s.empty()) return false;
    const char c = ascii_lower(s.front());
    return (c >= 'a' && c <= 'z') || c == '_';
}

// `<<EOF`, `<<-EOF`, `<< 'EOF'`: a heredoc to BuildKit, but buildah 1.28 has
// none and reads its body lines as instructions. `<<<` (a here-string) and
// `1<<3` (a shift) are not heredocs to it. BuildKit (docker 26) takes any
// word `<digits><<NAME` whose NAME, unquoted, is one word: `<<3`, `<<.`,
// `0<<EOF` and `<<""LABEL` ran as heredocs there (docs/DOCKER.md), so for
// it every `<<` but a longer run of '<' counts.
bool has_heredoc(std::string_view s, bool buildkit) {
    for (std::size_t i = 0; i < s.size();) {
        if (s[i] != '<') {
            ++i;
            continue;
        }
        std::size_t run_end = i;
        while (run_end < s.size() && s[run_end] == '<') ++run_end;
        if (run_end - i == 2 && (buildkit || starts_heredoc_word(s.substr(run_end)))) return true;
        i = run_end;
    }
    return false;
}

// buildah 1.28 fetches http:// and https:// sources; git ones are refused
// too, so that a newer builder does not turn them into fetches. BuildKit
// reads `HOST/PATH.git#REF` as https://HOST/PATH.git (a path ending in .git
// before its #fragment or ?query): its daemon ran git for
// `ADD example.com/x.git#main` (docs/DOCKER.md).
bool is_remote_source(std::string_view word) {
    const std::string_view path = word.substr(0, word.find_first_of("#?"));
    return word.find("://") != npos || contains_ascii_ci(word, "git@") ||
           (path.size() >= 4 && equals_ascii_ci(path.substr(path.size() - 4), ".git")) ||
           (word.size() >= 11 && equals_ascii_ci(word.substr(0, 11), "github.com/"));
}

// The size of the text of the JSON array of strings `s` starts with, or 0
// when it is not one the screen reads: strings without escapes (backslashes
// are refused before this) and without a raw tab (invalid JSON, so the
// builder falls back to splitting on blanks), blanks between.
std::size_t json_string_array_size(std::string_view s) {
    std::size_t i = 1;  // past the '['
    const auto skip_blanks = [&] {
        while (i < s.size() && is_blank(s[i])) ++i;
    };
    skip_blanks();
    if (i < s.size() && s[i] == ']') return i + 1;
    for (;;) {
        if (i >= s.size() || s[i] != '"') return 0;
        const std::size_t close = s.find('"', i + 1);
        if (close == npos || s.substr(i + 1, close - i - 1).find('\t') != npos) return 0;
        i = close + 1;
        skip_blanks();
        if (i < s.size() && s[i] == ']') return i + 1;
        if (i >= s.size() || s[i] != ',') return 0;
        ++i;
        skip_blanks();
    }
}

// ADD's sources and destination, in either form. They pass through
// ProcessWord (ARG/ENV substitution, quote and backslash removal) before
// buildah looks for "http://", so only plain words are read here.
Check screen_add_sources(std::string_view args) {
    if (args.find_first_of("$'\\`") != npos) return Refusal{ScreenReason::UnclearAddSource};
    if (args.starts_with('[')) {
        if (const std::size_t n = json_string_array_size(args)) {
            // json.Decoder stops after the array; the screen wants nothing there.
            if (!trim(args.substr(n)).empty()) return Refusal{ScreenReason::UnclearAddSource};
            for (std::size_t open = args.find('"'); open < n;) {
                const std::size_t close = args.find('"', open + 1);
                if (is_remote_source(args.substr(open + 1, close - open - 1))) {
                    return Refusal{ScreenReason::RemoteSource};
                }
                open = args.find('"', close + 1);
            }
            return std::nullopt;
        }
    }
    if (args.find('"') != npos) return Refusal{ScreenReason::UnclearAddSource};
    for (std::string_view rest = args; !rest.empty();) {
        const auto [word, after] = split_word(rest);
        if (is_remote_source(word)) return Refusal{ScreenReason::RemoteSource};
        rest = after;
    }
    return std::nullopt;
}

bool plain_stage_name(std::string_view name) {
    if (name.find_first_of("$'\"\\`") != npos) return false;
    // All digits would read as another stage's index.
    return !std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// `IMAGE [AS NAME]` after FROM's flags (imagebuilder's extractNameFromNode:
// "as" in any case, the name as written). The stage is registered after its
// image is judged: `FROM x AS x` names an image x unless an earlier stage is
// x. A repeated name is refused: which stage buildah's map would hold for it
// is not one the screen could be sure of.
Check screen_from(std::string_view args, Reading& reading) {
    const auto [image, after] = split_word(args);
    if (image.empty()) return Refusal{ScreenReason::BadFrom};
    std::string_view name;
    if (!after.empty()) {
        const auto [as, rest] = split_word(after);
        const auto [stage, extra] = split_word(rest);
        if (!equals_ascii_ci(as, "as") || stage.empty() || !extra.empty() ||
            !plain_stage_name(stage))
            return Refusal{ScreenReason::BadFrom};
        if (std::find(reading.stages.begin(), reading.stages.end(), stage) != reading.stages.end())
            return Refusal{ScreenReason::BadFrom};
        name = stage;
    }
    if (Check r = screen_image(image, ScreenFlag::None, reading, false)) return r;
    reading.stages.emplace_back(name);
    return std::nullopt;
}

// An instruction after its word: flags, then what its dispatcher would make
// of the rest.
Check screen_body(Instr instr, std::string_view rest, Reading& reading, bool onbuild) {
    if (Check r = screen_flags(instr, rest, reading, onbuild)) return r;
    const std::string_view args = trim(rest);
    if ((instr == Instr::Run || instr == Instr::Copy || instr == Instr::Add) &&
        has_heredoc(args, reading.buildkit)) {
        return Refusal{ScreenReason::Heredoc};
    }
    if (instr == Instr::Add) return screen_add_sources(args);
    if (instr == Instr::From) return screen_from(args, reading);
    return std::nullopt;
}

// ONBUILD takes no flags; the rest is stored as text and parsed again, with
// the default escape and joined to the other triggers by '\n', when a later
// stage builds FROM this one: it is screened as the instruction it will be
// then. ONBUILD of ONBUILD, FROM or MAINTAINER the builder refuses too (own
// reason, BadOnbuild, so the message says why); a trailing backslash (left by
// a backtick escape, or by a file ending in a continuation) would join the
// next trigger to this one.
Check screen_onbuild(std::string_view rest, Reading& reading) {
    if (Check r = screen_flags(Instr::Onbuild, rest, reading, true)) return r;
    const std::string_view trigger = trim(rest);
    if (trigger.empty() || trigger.back() == '\\') return Refusal{ScreenReason::BadOnbuild};
    const auto [word, inner] = split_word(trigger);
    const Instr instr = instruction_named(word);
    if (instr == Instr::Unknown) return Refusal{ScreenReason::UnknownInstruction};
    if (instr == Instr::Onbuild || instr == Instr::From || instr == Instr::Maintainer) {
        return Refusal{ScreenReason::BadOnbuild};
    }
    return screen_body(instr, inner, reading, true);
}

// One logical line (continuations joined), as splitCommand cuts it.
Check screen_instruction(std::string_view line, Reading& reading) {
    const auto [word, rest] = split_word(trim(line));
    const Instr instr = instruction_named(word);
    if (instr == Instr::Unknown) return Refusal{ScreenReason::UnknownInstruction};
    if (Check r = instr == Instr::Onbuild ? screen_onbuild(rest, reading)
                                          : screen_body(instr, rest, reading, false)) {
        return r;
    }
    // Heading ARGs are the only instructions a stage may start with: the
    // builder finds no FROM for anything else (ErrNoFROM).
    if (instr == Instr::From) {
        reading.seen_from = true;
    } else if (instr != Instr::Arg && !reading.seen_from) {
        return Refusal{ScreenReason::NoFrom};
    }
    return std::nullopt;
}

// ------------------------------------------------------------ lines

// Go's bufio.ScanLines: lines end at '\n'; a last line without one counts,
// an empty text or a final '\n' adds no empty line.
class LineReader {
  public:
    explicit LineReader(std::string_view text) : rest_(text) {}

    std::optional<std::string_view> next() {
        if (rest_.empty()) return std::nullopt;
        const std::size_t nl = rest_.find('\n');
        const std::string_view line = rest_.substr(0, nl);
        rest_.remove_prefix(nl == npos ? rest_.size() : nl + 1);
        ++number_;
        return line;
    }
    std::uint32_t number() const { return number_; }

  private:
    std::string_view rest_;
    std::uint32_t number_ = 0;
};

// imagebuilder's `^#[ \t]*escape[ \t]*=[ \t]*(.).*$` on the lowercased,
// left-trimmed line: the character it captures, or nullopt when the line is
// not a directive. Only blanks after '=' give the regex its last blank.
std::optional<char> escape_directive(std::string_view line) {
    if (!line.starts_with('#')) return std::nullopt;
    line = trim_left(line.substr(1));
    if (line.size() < 6 || !equals_ascii_ci(line.substr(0, 6), "escape")) return std::nullopt;
    line = trim_left(line.substr(6));
    if (!line.starts_with('=')) return std::nullopt;
    line.remove_prefix(1);
    if (line.empty()) return std::nullopt;
    const std::string_view value = trim_left(line);
    return value.empty() ? line.back() : value.front();
}

// `#` blanks `syntax` blanks `=` in any case: BuildKit's syntax directive
// (its key is one word, so `# syntaxes=` is another), which runs the image
// it names as the Dockerfile frontend, a local one too (docs/DOCKER.md).
// BuildKit reads it only in the leading comments; the screen refuses it in
// any comment.
bool is_syntax_directive(std::string_view line) {
    line = trim_left(line.substr(1));
    if (line.size() < 6 || !equals_ascii_ci(line.substr(0, 6), "syntax")) return false;
    return trim_left(line.substr(6)).starts_with('=');
}

// A continuation line the builder skips: blank, or a comment even when
// indented (isEmptyContinuationLine).
bool is_skipped_continuation(std::string_view line) {
    line = trim_left(line);
    return line.empty() || line.front() == '#';
}

// imagebuilder's `\<escape>[ \t]*$`: strips the escape and the blanks after it
// and says whether the instruction goes on. Only the last escape counts, so
// `echo \\` continues too.
bool strip_continuation(std::string_view& line, char escape) {
    const std::string_view t = trim_right(line);
    if (t.empty() || t.back() != escape) return false;
    line = t.substr(0, t.size() - 1);
    return true;
}

// The loop of imagebuilder's Parse: directives on the first line (a second
// escape directive right after is an error there), comments and blank lines
// skipped, continuations joined into `joined` without separators.
ScreenVerdict screen_lines(std::string_view text, std::string& joined, Reading& reading) {
    static constexpr std::string_view kBom = "\xEF\xBB\xBF";
    LineReader lines(text);
    bool directives_open = true, escape_seen = false;
    while (const std::optional<std::string_view> first = lines.next()) {
        std::string_view line = *first;
        if (lines.number() == 1 && line.starts_with(kBom)) line.remove_prefix(kBom.size());
        line = trim_left(line);
        if (directives_open) {
            const std::optional<char> escape = escape_directive(line);
            directives_open = escape.has_value();
            if (escape && (escape_seen || (*escape != '\\' && *escape != '`'))) {
                return {ScreenReason::BadDirective, lines.number(), ScreenFlag::None};
            }
            if (escape) {
                escape_seen = true;
                reading.escape = *escape;
            }
        }
        if (reading.buildkit && line.starts_with('#') && is_syntax_directive(line)) {
            return {ScreenReason::FrontendDirective, lines.number(), ScreenFlag::None};
        }
        if (line.empty() || line.front() == '#') continue;

        const std::uint32_t start = lines.number();
        bool more = strip_continuation(line, reading.escape);
        joined.assign(line);
        while (more) {
            const std::optional<std::string_view> next = lines.next();
            if (!next) break;
            std::string_view part = *next;
            if (is_skipped_continuation(part)) continue;
            more = strip_continuation(part, reading.escape);
            joined.append(part);
        }
        if (const Check r = screen_instruction(joined, reading)) return {r->reason, start, r->flag};
    }
    // Nothing to build: said here, not as the builder's "no contents" (an
    // agent rewriting the file in place can leave it empty when it is copied).
    if (!reading.seen_from) return {ScreenReason::NoStage, 0, ScreenFlag::None};
    return {};
}

}  // namespace

namespace {

ScreenVerdict screen_with(std::span<const std::uint8_t> bytes, Reading& reading) noexcept {
    if (bytes.size() > kMaxContainerfileBytes) {
        return {ScreenReason::TooLarge, 0, ScreenFlag::None};
    }
    const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    if (const ScreenVerdict v = check_bytes(text); v.reason != ScreenReason::None) return v;
    try {
        std::string joined;
        joined.reserve(text.size());  // no instruction is longer
        return screen_lines(text, joined, reading);
    } catch (...) {
        // Out of memory for at most a few MiB: refused, never thrown.
        return {ScreenReason::TooLarge, 0, ScreenFlag::None};
    }
}

}  // namespace

ScreenVerdict screen_containerfile(std::span<const std::uint8_t> bytes,
                                   std::span<const std::string> allowed, Builder builder) noexcept {
    Reading reading;
    reading.allowed = allowed;
    reading.buildkit = builder == Builder::BuildKit;
    return screen_with(bytes, reading);
}

NamedImages containerfile_images(std::span<const std::uint8_t> bytes) noexcept {
    NamedImages out;
    Reading reading;
    try {
        std::vector<std::string> images;
        reading.collect = &images;
        out.verdict = screen_with(bytes, reading);
        std::sort(images.begin(), images.end());
        images.erase(std::unique(images.begin(), images.end()), images.end());
        out.images = std::move(images);
    } catch (...) {
        out.verdict = {ScreenReason::TooLarge, 0, ScreenFlag::None};
    }
    return out;
}

}  // namespace hb::parser

// The container-facts reader's vocabulary and its two messages.
//
// After `up`, `restart` and `rebuild` the executor asks the engine about the
// project's containers (`$ENGINE container inspect ID...`, a row of
// engines/argv_table.cpp). That JSON carries text the agent chose (labels,
// environment, healthcheck output), so the executor never parses it: a fresh
// `hostbridge-parser --inspect`, locked down as the request parser is,
// reads it through the fd the executor attaches and answers fixed-size
// records of numbers and enums, which the executor bounds-checks before it
// believes them (engines/podman/inspect_client.cpp).
//
//   InspectRequest (<= kInspectRequestMax bytes):
//     0 u32 magic "HBI3"   4 u32 seq   8 u8 project length   9 u8 service count
//     10 u8 flags: 1 install label, 2 definitions
//     11 project bytes, then per service: u8 length, bytes, and with
//        definitions its definition's sha256 (32 bytes; zero: none asked)
//   InspectAnswer (kInspectAnswerSize bytes):
//     0 u32 magic   4 u32 seq   8 u8 status   9 u8 count   10 u16 zero
//     12 u32 containers the JSON held (count, plus those past kMaxInspectContainers)
//     16 count records of kInspectRecordSize bytes, the rest zero:
//        0 id[32]  32 image[32]  64 i64 started_ns  72 u32 restarts
//        76 i32 exit_code  80 u32 pid  84 u16 service  86 u8 state  87 u8 health
//        88 u8 labelled  89 u8 definition  90..95 zero
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ipc/result.hpp"

namespace hb {

// `container inspect` of a handful of containers is tens of KiB; anything
// larger is refused unread past this.
inline constexpr std::size_t kMaxInspectBytes = 4u << 20;
inline constexpr std::size_t kMaxInspectContainers = 32;
inline constexpr std::size_t kInspectRecordSize = 96;
inline constexpr std::size_t kInspectAnswerSize = 16 + kMaxInspectContainers * kInspectRecordSize;
inline constexpr std::size_t kMaxInspectName = 64;  // a project or service name
inline constexpr std::size_t kMaxInspectServices = 64;
inline constexpr std::size_t kInspectRequestMax =
    11 + kMaxInspectName + kMaxInspectServices * (1 + kMaxInspectName + 32);
inline constexpr std::uint32_t kInspectMagic = 0x48424933;  // "HBI3"
// The label the rendered compose file sets on every service of a compose
// install, its value the project name (admin/compose/compose_reader.hpp):
// containers a compose run made from another file than the bridge's (a
// checkout run by hand, even with the same -p or container_name) lack it.
inline constexpr std::string_view kInstallLabel = "io.hostbridge.project";
// The sha256 of the service's rendered definition the container was made
// from (admin/compose/compose_reader.hpp, ComposeModel::definitions): `up`
// recreates a service whose containers' differs from bridge.json's
// settle.definitions (docs/COMPOSE.md, "Applying an approved edit").
inline constexpr std::string_view kDefinitionLabel = "io.hostbridge.definition";
inline constexpr std::uint16_t kNoService = 0xFFFF;

// Wire values fixed (one byte each); append only.
enum class InspectStatus : std::uint8_t {
    Ok = 0,
    TooLarge = 1,  // over kMaxInspectBytes
    NotJson = 2,   // not JSON, or nested deeper than any engine writes
    BadShape = 3,  // not an array of objects with the fields below, or a field of the wrong kind
};
inline constexpr InspectStatus kLastInspectStatus = InspectStatus::BadShape;

// State.Status, as podman 4.3 and docker write it.
enum class ContainerState : std::uint8_t {
    Unknown = 0,  // any other word
    Created,
    Configured,  // podman: created in the database only
    Running,
    Paused,
    Restarting,
    Removing,
    Stopping,
    Stopped,  // podman
    Exited,
    Dead,
};
inline constexpr ContainerState kLastContainerState = ContainerState::Dead;

// State.Health.Status (podman 4.3 also writes State.Healthcheck); None when
// the container has no healthcheck.
enum class ContainerHealth : std::uint8_t { None = 0, Starting, Healthy, Unhealthy, Unknown };
inline constexpr ContainerHealth kLastContainerHealth = ContainerHealth::Unknown;

// The container's kDefinitionLabel against the definition the request
// names for its service.
enum class DefinitionMatch : std::uint8_t {
    NotAsked = 0,  // no definition asked for its service (or it has none of the request's)
    Same,
    Changed,  // another value, or no label: made from another definition
};
inline constexpr DefinitionMatch kLastDefinitionMatch = DefinitionMatch::Changed;

std::string_view container_state_name(ContainerState state);     // "running"
std::string_view container_health_name(ContainerHealth health);  // "healthy", "none"
std::string_view inspect_status_text(InspectStatus status);

struct ContainerFacts {
    std::array<std::uint8_t, 32> id{};     // the 64 hex digits of Id
    std::array<std::uint8_t, 32> image{};  // Image, "sha256:" dropped; zero when not 64 hex
    std::int64_t started_ns = 0;           // State.StartedAt; 0 when never started or unreadable
    std::uint32_t restarts = 0;            // RestartCount
    std::int32_t exit_code = 0;            // State.ExitCode
    std::uint32_t pid = 0;                 // State.Pid
    std::uint16_t service =
        kNoService;  // index of com.docker.compose.service in the request's list
    ContainerState state = ContainerState::Unknown;
    ContainerHealth health = ContainerHealth::None;
    // com.docker.compose.project is the request's project (and, with
    // install_label, kInstallLabel too)
    bool labelled = false;
    DefinitionMatch definition = DefinitionMatch::NotAsked;
    bool operator==(const ContainerFacts&) const = default;
};

struct InspectRequest {
    std::uint32_t seq = 0;
    std::string project;
    std::vector<std::string> services;
    bool install_label = false;  // a compose install's: kInstallLabel must be the project too
    // Empty, or one per service: the sha256 its containers' kDefinitionLabel
    // should name (all zero: none).
    std::vector<std::array<std::uint8_t, 32>> definitions{};
};
struct InspectAnswer {
    std::uint32_t seq = 0;
    InspectStatus status = InspectStatus::Ok;
    std::uint32_t total = 0;                 // containers in the JSON, kept or not
    std::vector<ContainerFacts> containers;  // at most kMaxInspectContainers
};

// Refuses names that are empty or too long, too many services, and
// definitions that are not one per service.
Result<std::vector<std::uint8_t>> encode_inspect_request(const InspectRequest& request);
Result<InspectRequest> decode_inspect_request(std::span<const std::uint8_t> bytes);

std::array<std::uint8_t, kInspectAnswerSize> encode_inspect_answer(const InspectAnswer& answer);
// Refuses a wrong size or magic, nonzero padding or unused records, an enum
// out of range, more records than kMaxInspectContainers or than `total`, a
// record for a failed status, and a service index at or past `services`.
Result<InspectAnswer> decode_inspect_answer(std::span<const std::uint8_t> bytes,
                                            std::size_t services);

// 64 lowercase hex digits <-> 32 bytes.
std::string hex_id(const std::array<std::uint8_t, 32>& id);
bool parse_hex_id(std::string_view text, std::array<std::uint8_t, 32>& out);

}  // namespace hb

// What a build step reads, made safe before it runs (docs/BUILDS.md): the
// service's build context copied from the checkout into a host-owned
// snapshot (engines/build_input/build_snapshot.hpp), and the snapshot's Containerfile
// screened in the sandbox (engines/build_input/screen_client.hpp). The builder then
// reads only the snapshot; the argv names nothing else (engines/argv_table.cpp).
#pragma once

#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "common/config.hpp"
#include "executor/engine.hpp"
#include "ipc/result.hpp"

namespace hb::exec {

// Takes the snapshot of services[index]'s context and screens its
// Containerfile. The value is the audit detail (the snapshot's hash, files
// and bytes); an error is the refusal's sentence, naming the checkout path
// or the Containerfile's line and flag.
// With `held`, the build reads the snapshot taken when that request was
// held (hold_build) instead of a new one: it is copied to where the builder
// reads and refused unless its hash is the one the person was shown.
// `base_check`, when given, runs on the builds dir after the screen, told
// the snapshot's hash (the
// registry asks podman's base-trigger check for podman-compose,
// engines/podman/base_triggers.hpp); its error refuses the build.
// `allowed`, when given, is what a FROM may name instead of all of
// build_allowed_images (docker's: those its daemon holds).
using BaseCheck = std::function<Result<void>(int builds_fd, const std::string& snapshot_sha256)>;
Result<nlohmann::ordered_json> prepare_build(const Config& config, std::size_t index,
                                             const HeldBuild* held = nullptr,
                                             const BaseCheck& base_check = {},
                                             const std::vector<std::string>* allowed = nullptr);

// Takes services[index]'s snapshot for a request held for a person, into
// <run_dir>/.hostbridge-held/<request>/<service>, and screens it as a build
// would: the person is shown its hash and its Containerfile, and exactly
// it is built once allowed (docs/BUILDS.md, "Held builds"). The value is
// the snapshot's hash; an error is the refusal's sentence.
Result<std::string> hold_build(const Config& config, const std::string& request, std::size_t index);

// Removes every <run_dir>/.hostbridge-held/<name> for which `live(name)` is
// false (the hold ended: run, denied, expired, or a crash), never
// following a link.
void sweep_held_builds(const Config& config, const std::function<bool(const std::string&)>& live);

// Removes the build's TMPDIR (prepare_build made it anew and empty), never
// following a link: nothing a build step left there outlives the build.
Result<void> discard_build_tmp(const Config& config);

// What the last build of a service that went live was made from
// (docs/BUILDS.md, "An unchanged rebuild"), host-owned in the builds dir
// (<service>.built): its input, noted before a build runs, and the image,
// added once the settle step saw that image live.
struct BuildRecord {
    std::string snapshot_sha256;  // the snapshot's hash (ipc/snapshot_wire.hpp)
    std::string step_sha256;      // of the build step's argv: its settings
    std::string image_id;         // "sha256:" and 64 hex digits
};
// Before a build runs: replaces what went live before (a build that fails
// leaves no record) with this one's input.
Result<void> note_build_input(const Config& config, std::string_view service,
                              const std::string& snapshot_sha256, const std::string& step_sha256);
// After the settle step saw `image_id` live: the noted input is recorded
// with it. Nothing noted: nothing recorded.
Result<void> record_build_live(const Config& config, std::string_view service,
                               const std::string& image_id);
// The record, or nullopt: none, or not of that shape.
std::optional<BuildRecord> read_build_record(const Config& config, std::string_view service);

// The image id the builder wrote (--iidfile) for `service`: "sha256:" and 64
// hex digits, or empty when the file is missing or holds anything else.
std::string read_image_id(const Config& config, std::string_view service);

// The environment the build step of services[index] gets besides
// child_environment(): its own TMPDIR under run_dir, empty when the build
// starts and removed after it, so buildah's temporary files (else in the
// /var/tmp every user shares) are this build's alone; with `told` (a stack,
// which builds with its own command) also HOSTBRIDGE_SERVICE,
// HOSTBRIDGE_BUILD_CONTEXT (the snapshot) and HOSTBRIDGE_CONTAINERFILE (the
// screened file in it).
std::vector<std::string> build_environment(const Config& config, std::size_t index, bool told);

// Where the snapshot of `service`'s build context is made, and the file the
// builder writes the new image's id to: under run_dir, host-only.
std::string snapshot_dir(const Config& config, std::string_view service);
std::string image_id_file(const Config& config, std::string_view service);

}  // namespace hb::exec

// The registry: the one place that knows which engine an install talks to
// (its backend in bridge.json) and switches on BackendKind and
// ComposeFlavour. It answers the core's questions (executor/engine.hpp) with
// the rows of the engine rooms: engines/stack/, engines/podman_compose/,
// engines/podman/ (podman's own queries), engines/build_input/ (a build's input).
// docs/ARCHITECTURE.md, "Rooms", says what each room holds.
#pragma once

#include "common/engine_hold.hpp"
#include "executor/engine.hpp"

namespace hb::exec {

// The Engines the drain is handed (executor/main.cpp). Stateless: every
// answer reads the Config it is given, which the drain refreshes.
const Engines& registry();

// Why each engine verb is held for a person on `config`'s install, by its
// engine and posture (common/engine_hold.hpp; SECURITY.md, "Two postures").
common::EngineHold engine_hold(const Config& config);

}  // namespace hb::exec

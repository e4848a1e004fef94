#include "engines/stack/rows.hpp"

#include "executor/run_tree.hpp"

namespace hb::exec {
namespace {

// `$STACK WORDS...`, where $STACK is the script's verified copy in the run
// tree (executor/run_tree.hpp), never the checkout's file.
Plan with(const Config& config, std::initializer_list<std::string> words) {
    Argv argv = config.backend.argv;
    if (const std::string copy = in_run_tree(config, argv.front()); !copy.empty()) {
        argv.front() = copy;
    }
    argv.insert(argv.end(), words);
    return Plan{Step{std::move(argv), std::nullopt}};
}

}  // namespace

ArgvOutcome stack_rows(Verb verb, std::optional<std::size_t> arg, const Config& config) {
    // Only valid after the table's check: the verbs that take a service.
    auto service = [&]() -> const std::string& { return config.services[*arg]; };
    // No default: a new Verb must be given its argv here or the build fails.
    switch (verb) {
        case Verb::Ping:
        case Verb::JoinNetwork:
            break;  // the table's own (engines/argv_table.cpp)
        case Verb::Status:
            return with(config, {"status"});
        case Verb::Health:
            return with(config, {"health"});
        case Verb::Logs:
            return with(config, {"logs", service()});
        case Verb::Up:
            return with(config, {"start"});
        case Verb::Down:
            return with(config, {"stop"});
        case Verb::Restart:
            return with(config, {"restart", service()});
        case Verb::Rebuild: {
            // With a recorded context the stack builds from the snapshot
            // the executor hands it (HOSTBRIDGE_BUILD_CONTEXT); without
            // one it reads the checkout itself, which the seeded policy
            // holds for a person (docs/BUILDS.md).
            Plan plan = with(config, {"build", service()});
            if (find_build(config.build, service()) != nullptr) plan.front().snapshot_of = *arg;
            return plan;
        }
        case Verb::Init:
            return with(config, {"init"});
    }
    return Denied{ReasonCode::UnknownVerb};
}

}  // namespace hb::exec

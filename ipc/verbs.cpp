#include "ipc/verbs.hpp"

#include "ipc/enum_names.hpp"

namespace hb {
namespace {

// The table is complete, in kAllVerbs order, and every verb has one row.
constexpr bool table_matches_all_verbs() {
    for (std::size_t i = 0; i < kAllVerbs.size(); ++i) {
        if (kVerbTable[i].verb != kAllVerbs[i]) return false;
        if (kVerbTable[i].policy_key.size() >= verbs_detail::kMaxKey) return false;
    }
    return true;
}
static_assert(table_matches_all_verbs(),
              "kVerbTable must list every Verb once, in kAllVerbs order");

// The wire values are 1..kVerbCount in kAllVerbs order, so one range check
// against kLastVerb (ipc/wire_executor.cpp) admits exactly the verbs.
constexpr bool wire_values_are_dense() {
    for (std::size_t i = 0; i < kAllVerbs.size(); ++i) {
        if (static_cast<std::size_t>(kAllVerbs[i]) != i + 1) return false;
    }
    return static_cast<std::size_t>(kLastVerb) == kVerbCount;
}
static_assert(wire_values_are_dense(), "a new verb takes the next wire value, at the end");

// Invariants the rest of the bridge relies on.
constexpr bool table_is_consistent() {
    for (const VerbInfo& row : kVerbTable) {
        // A verb that runs nothing can change nothing and has nothing to outlive.
        if (!row.runs_command && (row.mutating || row.long_lived)) return false;
        // Long-lived verbs start containers: they are mutating.
        if (row.long_lived && !row.mutating) return false;
        // Only what changes the application waits for a person.
        if (row.asks_a_person && !row.mutating) return false;
    }
    return true;
}
static_assert(table_is_consistent());
static_assert(kVerbTable[9].policy_key == "MODE_join-network");
static_assert(rate_class(Verb::Ping) == RateClass::Exempt);
static_assert(rate_class(Verb::Logs) == RateClass::ReadOnly);
static_assert(rate_class(Verb::Rebuild) == RateClass::Mutating);

}  // namespace

std::string_view verb_name(Verb verb) {
    const VerbInfo& row = verb_info(verb);
    return row.verb == verb ? row.name : std::string_view();
}

std::optional<Verb> verb_from_name(std::string_view name) {
    for (const VerbInfo& row : kVerbTable) {
        if (row.name == name) return row.verb;
    }
    return std::nullopt;
}

ArgKind verb_arg_kind(Verb verb) {
    return verb_info(verb).arg;
}

std::string_view rate_class_name(RateClass rate) {
    static constexpr auto kNames =
        dense_names<RateClass::Mutating>({"exempt", "read_only", "mutating"}, "?");
    return name_of(kNames, rate);
}

}  // namespace hb

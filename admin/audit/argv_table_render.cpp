#include "admin/audit/argv_table_render.hpp"

namespace hb::admin {

using exec::Argv;
using exec::argv_for;
using exec::ArgvOutcome;
using exec::Denied;
using exec::NoCommand;
using exec::Plan;
using exec::Step;

std::vector<ArgvTableRow> enumerate_argv_table(const Config& config) {
    std::vector<ArgvTableRow> rows;
    for (Verb verb : kAllVerbs) {
        if (verb_info(verb).arg == ArgKind::None) {
            rows.push_back({verb, std::nullopt, argv_for(verb, std::nullopt, config)});
            continue;
        }
        for (std::size_t i = 0; i < config.services.size(); ++i) {
            rows.push_back({verb, i, argv_for(verb, i, config)});
        }
    }
    return rows;
}

std::string display_argv(const Argv& argv) {
    std::string out;
    for (const std::string& word : argv) {
        if (!out.empty()) out += ' ';
        const bool plain = !word.empty() && word.find_first_of(" \t\n'\"\\") == std::string::npos;
        out += plain ? word : "'" + word + "'";
    }
    return out;
}

std::string display_plan(const Plan& plan) {
    std::string out;
    for (const Step& step : plan) {
        if (!out.empty()) out += " && ";
        out += display_argv(step.argv);
    }
    return out;
}

std::string describe_outcome(const ArgvOutcome& outcome) {
    if (const auto* plan = std::get_if<Plan>(&outcome)) {
        // status, health and logs where the engine is read
        // (exec::logs_by_container): only the settle rows run.
        if (plan->empty()) return "(only the engine's own rows: docs/ARGV-TABLE.md, \"Settling\")";
        return display_plan(*plan);
    }
    if (std::holds_alternative<NoCommand>(outcome)) {
        return "(answered by the executor, nothing runs)";
    }
    return "denied: " + std::string(reason_text(std::get<Denied>(outcome).reason));
}

std::string describe_row(const ArgvTableRow& row, const Config& config) {
    std::string line(verb_name(row.verb));
    if (row.arg) {
        line += ' ';
        line += *row.arg < config.services.size() ? config.services[*row.arg] : "#?";
    }
    return line + " -> " + describe_outcome(row.outcome);
}

}  // namespace hb::admin

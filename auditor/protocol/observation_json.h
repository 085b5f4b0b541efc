#pragma once
// JSON forms of what crosses the worker pipe and lands in journals and reports: cells going to a
// worker, and what it observed coming back.
#include <nlohmann/json.hpp>

#include "plan/plan.h"
#include "verdict/observation.h"
#include "protocol/python_observation_json.h"
#include "verdict/verdict.h"

namespace repro_audit {

// A run keeps its first kKeptWarnings distinct warnings and one line counting the rest: a step that
// warns on every element (200,000 a run) would otherwise carry each into the pipe, the journal, the
// report and the memory of every reader.
inline constexpr std::size_t kKeptWarnings = 50;
// `warnings` cut to kKeptWarnings and a line saying how many more (`more` and those past the cap) there were.
std::vector<std::string> bounded_warnings(std::vector<std::string> warnings, std::size_t more = 0);

void to_json(nlohmann::json& j, const KernelRecord& value);
void from_json(const nlohmann::json& j, KernelRecord& value);
void to_json(nlohmann::json& j, const RunObservation& value);
void from_json(const nlohmann::json& j, RunObservation& value);
void to_json(nlohmann::json& j, const Divergence& value);
void from_json(const nlohmann::json& j, Divergence& value);
void to_json(nlohmann::json& j, const Sensitivity& value);
void from_json(const nlohmann::json& j, Sensitivity& value);
// Throws nlohmann::json::exception for an unknown status, naming the valid ones.
void to_json(nlohmann::json& j, const ProcessObservation& value);
void from_json(const nlohmann::json& j, ProcessObservation& value);
void to_json(nlohmann::json& j, const Cell& value);
void from_json(const nlohmann::json& j, Cell& value);
void to_json(nlohmann::json& j, const OpRecord& value);
void from_json(const nlohmann::json& j, OpRecord& value);
void to_json(nlohmann::json& j, const OpSequence& value);
void from_json(const nlohmann::json& j, OpSequence& value);
void to_json(nlohmann::json& j, const Origin& value);
void from_json(const nlohmann::json& j, Origin& value);
void to_json(nlohmann::json& j, const StepGrowth& value);
void from_json(const nlohmann::json& j, StepGrowth& value);
void to_json(nlohmann::json& j, const Timing& value);
void from_json(const nlohmann::json& j, Timing& value);

}  // namespace repro_audit

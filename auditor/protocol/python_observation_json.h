#pragma once
// JSON forms of what py cells observe beside their runs: the random sources a step drew from, a
// DataLoader's batches and workers, and a random source as the verdict sums it up over the processes.
#include <nlohmann/json.hpp>

#include "verdict/observation.h"

namespace repro_audit {

void to_json(nlohmann::json& j, const RandomSource& value);
void from_json(const nlohmann::json& j, RandomSource& value);
void to_json(nlohmann::json& j, const LoaderObservation& value);
void from_json(const nlohmann::json& j, LoaderObservation& value);
void to_json(nlohmann::json& j, const RandomSourceVerdict& value);
void from_json(const nlohmann::json& j, RandomSourceVerdict& value);

}  // namespace repro_audit

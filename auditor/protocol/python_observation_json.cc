#include "protocol/python_observation_json.h"

#include <set>
#include <string>

#include "common/json_number.h"

namespace repro_audit {
using nlohmann::json;

void to_json(json& j, const RandomSource& value) {
  j = {{"name", value.name},
       {"kind", value.kind},
       {"where", value.where},
       {"state", value.state},
       {"drawn_in_factory", value.drawn_in_factory},
       {"drawn_in_runs", value.drawn_in_runs}};
  if (value.seeded_by_runner) j["seeded_by_runner"] = true;
  if (!value.recipe.empty()) j["recipe"] = value.recipe;
}
void from_json(const json& j, RandomSource& value) {
  value.name = json_field<std::string>(j, "name");
  value.kind = json_field_or<std::string>(j, "kind", "");
  value.where = json_field_or<std::string>(j, "where", "");
  value.state = json_field_or<std::string>(j, "state", "");
  value.drawn_in_factory = json_field_or(j, "drawn_in_factory", false);
  value.drawn_in_runs = json_field_or(j, "drawn_in_runs", false);
  value.seeded_by_runner = json_field_or(j, "seeded_by_runner", false);
  value.recipe = json_field_or<std::string>(j, "recipe", "");
}

void to_json(json& j, const LoaderObservation& value) {
  j = {{"batches", json::array()},
       {"epochs", value.epochs},
       {"batches_per_epoch", value.batches_per_epoch},
       {"num_workers", value.num_workers}};
  for (const auto& batch : value.batches) {
    json entry = {{"epoch", batch.epoch}, {"batch", batch.batch}, {"samples", batch.samples}};
    if (!batch.indices.empty()) entry["indices"] = batch.indices;
    if (batch.worker >= 0) entry["worker"] = batch.worker;
    j["batches"].push_back(entry);
  }
  if (!value.workers.empty()) {
    j["worker_sources"] = json::array();
    for (const auto& worker : value.workers) {
      json start = json::object();
      for (const auto& [name, state] : worker.start) start[name] = state;
      j["worker_sources"].push_back({{"worker", worker.worker}, {"start", start}, {"drawn", worker.drawn}});
    }
  }
}
void from_json(const json& j, LoaderObservation& value) {
  const auto& batches = j.at("batches");
  if (!batches.is_array() || batches.size() > kMaxLoaderBatchesKept)
    throw json::out_of_range::create(406, "\"loader\": batches must be a list of at most 100000", nullptr);
  value.batches.clear();
  for (const auto& entry : batches) {
    LoaderBatch batch;
    batch.epoch = json_integer_or(entry, "epoch", 0);
    batch.batch = json_integer_or(entry, "batch", 0);
    batch.indices = json_field_or(entry, "indices", std::vector<std::int64_t>{});
    batch.worker = json_integer_or(entry, "worker", -1);
    batch.samples = json_field_or(entry, "samples", std::vector<std::string>{});
    if (batch.indices.size() > 256 || batch.samples.size() > 64)
      throw json::out_of_range::create(406, "\"loader\": at most 256 indices and 64 samples per batch", nullptr);
    value.batches.push_back(std::move(batch));
  }
  value.epochs = json_integer_or(j, "epochs", 0);
  value.batches_per_epoch = json_integer_or(j, "batches_per_epoch", 0);
  value.num_workers = json_integer_or(j, "num_workers", 0);
  value.workers.clear();
  for (const auto& entry : j.value("worker_sources", json::array())) {
    LoaderWorker worker;
    worker.worker = json_integer_or(entry, "worker", 0);
    const auto start = entry.value("start", json::object());
    for (const auto& [name, state] : start.items()) worker.start.emplace_back(name, state.get<std::string>());
    worker.drawn = json_field_or(entry, "drawn", std::vector<std::string>{});
    value.workers.push_back(std::move(worker));
  }
  if (value.workers.size() > 1024) throw json::out_of_range::create(406, "\"loader\": at most 1024 workers", nullptr);
}

void to_json(json& j, const RandomSourceVerdict& value) {
  j = {{"name", value.name},
       {"kind", value.kind},
       {"where", value.where},
       {"seeded", value.seeded},
       {"drawn_in_factory", value.drawn_in_factory},
       {"drawn_in_runs", value.drawn_in_runs}};
  if (!value.recipe.empty()) j["recipe"] = value.recipe;
}
void from_json(const json& j, RandomSourceVerdict& value) {
  value.name = json_field<std::string>(j, "name");
  value.kind = json_field_or<std::string>(j, "kind", "");
  value.where = json_field_or<std::string>(j, "where", "");
  value.seeded = json_field_or<std::string>(j, "seeded", "");
  static const std::set<std::string> kSeeded = {"alike", "differs", "runner", "unknown"};
  if (!kSeeded.count(value.seeded))
    throw json::other_error::create(
        501, "\"seeded\": '" + value.seeded + "' is none of alike, differs, runner, unknown", &j);
  value.drawn_in_factory = json_field_or(j, "drawn_in_factory", false);
  value.drawn_in_runs = json_field_or(j, "drawn_in_runs", false);
  value.recipe = json_field_or<std::string>(j, "recipe", "");
}

}  // namespace repro_audit

#include "protocol/worker_protocol.h"

#include "common/json_number.h"
#include "protocol/observation_json.h"

namespace repro_audit {
using nlohmann::json;

json request_to_json(const WorkerRequest& request) {
  return {{"device", request.device},
          {"process", request.process},
          {"repeats", request.repeats},
          {"warmup", request.warmup},
          {"timing",
           {{"min_samples", request.timing.min_samples},
            {"target", request.timing.target},
            {"budget_seconds", request.timing.budget_seconds},
            {"max_samples", request.timing.max_samples},
            {"rounds", request.timing.rounds},
            {"round_min_samples", request.timing.round_min_samples}}},
          {"timing_round", request.timing_round},
          {"process_settings", request.process_settings},
          {"cells", request.cells},
          {"input_scheme", to_int(request.input_scheme)},
          {"sensitivity_process", request.sensitivity_process},
          {"sensitivity_elsewhere", request.sensitivity_elsewhere},
          {"quiet_runs", request.quiet_runs}};
}

WorkerRequest request_from_json(const json& j) {
  WorkerRequest request;
  request.device = j.at("device").get<std::string>();
  request.process = json_integer_or(j, "process", 0);
  request.repeats = json_integer_or(j, "repeats", 10);
  request.warmup = json_integer_or(j, "warmup", 1);
  const auto timing = j.value("timing", json::object());
  request.timing.min_samples = json_integer_or(timing, "min_samples", request.timing.min_samples);
  request.timing.target = timing.value("target", request.timing.target);
  request.timing.budget_seconds = timing.value("budget_seconds", request.timing.budget_seconds);
  request.timing.max_samples = json_integer_or(timing, "max_samples", request.timing.max_samples);
  request.timing.rounds = json_integer_or(timing, "rounds", 1);
  request.timing.round_min_samples = json_integer_or(timing, "round_min_samples", request.timing.round_min_samples);
  request.timing_round = json_integer_or(j, "timing_round", 0);
  request.process_settings = j.value("process_settings", FlagSet{});
  request.cells = j.at("cells").get<std::vector<Cell>>();
  const auto scheme = input_scheme_from_int(json_integer_or(j, "input_scheme", to_int(kCurrentInputScheme)));
  if (!scheme)
    throw json::other_error::create(501, std::string("unknown input_scheme; valid: ") + kInputSchemeNames, &j);
  request.input_scheme = *scheme;
  request.sensitivity_process = json_integer_or(j, "sensitivity_process", 0);
  request.sensitivity_elsewhere = j.value("sensitivity_elsewhere", std::vector<std::string>{});
  request.quiet_runs = json_integer_or(j, "quiet_runs", 0);
  return request;
}

json environment_event(const json& environment) { return {{"event", "environment"}, {"environment", environment}}; }
json start_event(const std::string& key) { return {{"event", "start"}, {"key", key}}; }
json cell_event(const std::string& key, const ProcessObservation& observation) {
  return {{"event", "cell"}, {"key", key}, {"observation", observation}};
}
json done_event() { return {{"event", "done"}}; }
json environment_failure_event(const std::string& message) {
  return {{"event", "environment_failure"}, {"message", message}};
}

std::optional<WorkerEvent> parse_event(const std::string& line) {
  try {
    const auto j = json::parse(line);
    if (!j.is_object()) return std::nullopt;
    const auto kind = j.value("event", "");
    WorkerEvent event;
    if (kind == "loaded") {
      event.kind = WorkerEvent::Kind::loaded;
    } else if (kind == "environment") {
      event.kind = WorkerEvent::Kind::environment;
      event.environment = j.at("environment");
    } else if (kind == "start") {
      event.kind = WorkerEvent::Kind::start;
      event.key = j.at("key").get<std::string>();
    } else if (kind == "cell") {
      event.kind = WorkerEvent::Kind::cell;
      event.key = j.at("key").get<std::string>();
      try {
        event.observation = j.at("observation").get<ProcessObservation>();
      } catch (const json::exception& error) {
        event.message = error.what();
      }
    } else if (kind == "done") {
      event.kind = WorkerEvent::Kind::done;
    } else if (kind == "imports") {
      event.kind = WorkerEvent::Kind::imports;
      event.modules = j.at("modules").get<std::vector<std::string>>();
      event.preloaded = j.value("preloaded", std::vector<std::string>{});
    } else if (kind == "environment_failure") {
      event.kind = WorkerEvent::Kind::environment_failure;
      event.message = j.at("message").get<std::string>();
    } else {
      return std::nullopt;
    }
    return event;
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

}  // namespace repro_audit

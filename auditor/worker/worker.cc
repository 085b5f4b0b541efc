#include "worker/worker.h"

#include <c10/util/Exception.h>
#include <torch/cuda.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>

#include "hash/digest.h"
#include "hash/tensor_digest.h"
#include "report/json_io.h"
#include "worker/environment.h"
#include "worker/probe.h"
#include "worker/settings_apply.h"

namespace repro_audit {
namespace {

// Keeps every distinct warning raised on this thread while a cell runs (warn-only mode's alerts).
class WarningCollector : public c10::WarningHandler {
 public:
  void process(const c10::Warning& warning) override {
    const auto text = warning.msg();
    if (std::find(warnings.begin(), warnings.end(), text) == warnings.end()) warnings.push_back(text);
  }
  std::vector<std::string> warnings;
};

std::string error_text(const std::exception& error) {
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&error)) return c10_error->what_without_backtrace();
  return error.what();
}

void synchronize(const at::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

struct Digested {
  RunObservation run;
  std::vector<at::Tensor> canonical;
};

Digested digest_outputs(const Outputs& outputs) {
  Digested result;
  for (const auto& [name, tensor] : outputs) {
    result.canonical.push_back(canonical_tensor(tensor));
    const auto& cpu = result.canonical.back();
    result.run.outputs.emplace_back(
        name, digest_canonical(c10::toString(cpu.scalar_type()), cpu.sizes().vec(), cpu.data_ptr(), cpu.nbytes()));
  }
  result.run.digest = combine_digests(result.run.outputs);
  return result;
}

void run_all(const Cell& cell, const WorkerRequest& request, ProcessObservation& observation) {
  const auto* probe = find_registered_probe(cell.probe);
  if (!probe) throw std::runtime_error("this worker has no probe '" + cell.probe + "'");
  const at::Device device(request.device);
  const auto* variant = probe->info.find_variant(cell.variant);
  if (!variant) throw std::runtime_error("probe '" + cell.probe + "' has no variant '" + cell.variant + "'");
  const auto kind = device.is_cuda() ? "cuda" : "cpu";
  if (std::find(variant->devices.begin(), variant->devices.end(), kind) == variant->devices.end())
    throw Unsupported(variant->unsupported_reason.empty() ? std::string("no implementation on ") + kind
                                                          : variant->unsupported_reason);
  const auto seed = static_cast<std::uint64_t>(std::stoull(cell.settings.at("seed")));
  ProbeContext context(device, seed, cell.variant);
  const auto run = probe->prepare(context);
  std::vector<at::Tensor> reference;
  const int total = request.warmup + request.repeats;
  for (int index = 0; index < total; ++index) {
    at::manual_seed(seed);  // ops that draw random numbers (fractional pooling) draw the same ones
    synchronize(device);
    const auto start = std::chrono::steady_clock::now();
    const auto outputs = run();
    synchronize(device);
    const auto elapsed = std::chrono::steady_clock::now() - start;
    auto digested = digest_outputs(outputs);
    digested.run.warmup = index < request.warmup;
    digested.run.time_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count();
    if (index == 0) {
      reference = digested.canonical;
    } else if (!observation.divergence && digested.run.digest != observation.runs.front().digest) {
      for (std::size_t i = 0; i < digested.canonical.size(); ++i)
        if (digested.run.outputs[i].second != observation.runs.front().outputs[i].second) {
          observation.divergence = compare_tensors(outputs[i].first, index, reference[i], digested.canonical[i]);
          break;
        }
    }
    observation.runs.push_back(std::move(digested.run));
  }
}

}  // namespace

WorkerRequest parse_worker_request(const nlohmann::json& json) {
  WorkerRequest request;
  request.device = json.at("device").get<std::string>();
  request.process = json.value("process", 0);
  request.repeats = json.value("repeats", 10);
  request.warmup = json.value("warmup", 1);
  request.process_settings = json.value("process_settings", FlagSet{});
  request.cells = json.at("cells").get<std::vector<Cell>>();
  return request;
}

ProcessObservation run_cell(const Cell& cell, const WorkerRequest& request) {
  ProcessObservation observation;
  observation.process = request.process;
  WarningCollector collector;
  c10::WarningUtils::WarningHandlerGuard guard(&collector);
  try {
    apply_cell_settings(cell.settings);
    run_all(cell, request, observation);
  } catch (const Unsupported& unsupported) {
    observation = ProcessObservation{};
    observation.status = "unsupported";
    observation.message = unsupported.what();
  } catch (const std::exception& error) {
    observation.runs.clear();
    observation.divergence.reset();
    observation.status = "exception";
    observation.message = error_text(error);
  }
  observation.process = request.process;
  observation.warnings = collector.warnings;
  return observation;
}

void run_worker(const WorkerRequest& request, const std::function<void(const nlohmann::json&)>& emit) {
  // Fingerprint first, so `threads` is libtorch's own default on this machine.
  emit({{"event", "environment"}, {"environment", environment_fingerprint()}});
  apply_process_settings(request.process_settings);
  for (const auto& cell : request.cells) {
    emit({{"event", "start"}, {"key", cell.key}});
    emit({{"event", "cell"}, {"key", cell.key}, {"observation", run_cell(cell, request)}});
  }
  emit({{"event", "done"}});
}

int worker_main() {
  // Events go to the original stdout; anything else printing to stdout is sent to stderr instead.
  const int events_fd = ::dup(STDOUT_FILENO);
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
  FILE* events = ::fdopen(events_fd, "w");
  nlohmann::json request_json;
  try {
    request_json = nlohmann::json::parse(std::cin);
  } catch (const nlohmann::json::exception& error) {
    std::cerr << "worker: bad request: " << error.what() << "\n";
    return 2;
  }
  run_worker(parse_worker_request(request_json), [&](const nlohmann::json& event) {
    const auto line = event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    std::fwrite(line.data(), 1, line.size(), events);
    std::fflush(events);
  });
  return 0;
}

}  // namespace repro_audit

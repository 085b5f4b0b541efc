#include "worker/worker.h"

#include <c10/util/Exception.h>
#include <torch/cuda.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>

#include <cstdio>
#include <iostream>

#include "hash/digest.h"
#include "hash/tensor_digest.h"
#include "protocol/observation_json.h"
#include "trace/tracer_factory.h"
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

// An invariance probe's outputs that differ from its reference (output 0), measured against it.
void measure_variations(const Outputs& outputs, const Digested& digested, ProcessObservation& observation) {
  const auto& names = digested.run.outputs;
  for (std::size_t i = 1; i < names.size(); ++i)
    if (names[i].second != names.front().second)
      observation.variations.push_back(
          compare_tensors(outputs[i].first, 0, digested.canonical.front(), digested.canonical[i]));
}

void keep_sequence(ProcessObservation& observation, const std::string& digest, std::vector<KernelRecord>&& kernels) {
  for (const auto& [seen, _] : observation.kernel_sequences)
    if (seen == digest) return;
  observation.kernel_sequences.emplace_back(digest, std::move(kernels));
}

void run_all(const Cell& cell, const WorkerRequest& request, Tracer& tracer, RunTimer& timer,
             ProcessObservation& observation) {
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
  ProbeContext context(device, seed, *variant);
  const auto run = probe->prepare(context);
  observation.input_digest = context.input_digest();
  std::vector<at::Tensor> reference;
  const int total = request.warmup + request.repeats;
  for (int index = 0; index < total; ++index) {
    at::manual_seed(seed);  // ops that draw random numbers (fractional pooling) draw the same ones
    synchronize(device);
    tracer.begin_run();
    timer.start();
    const auto outputs = run();
    const auto elapsed_ns = timer.stop_ns();
    synchronize(device);
    auto kernels = tracer.end_run();
    auto digested = digest_outputs(outputs);
    digested.run.warmup = index < request.warmup;
    digested.run.time_ns = elapsed_ns;
    if (observation.trace_unavailable.empty()) {
      digested.run.kernel_digest = kernel_sequence_digest(kernels);
      keep_sequence(observation, digested.run.kernel_digest, std::move(kernels));
    }
    if (index == 0) {
      reference = digested.canonical;
      if (probe->info.invariance != Invariance::none) measure_variations(outputs, digested, observation);
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

ProcessObservation run_cell(const Cell& cell, const WorkerRequest& request, Tracer& tracer, RunTimer& timer) {
  ProcessObservation observation;
  observation.process = request.process;
  observation.trace_unavailable = tracer.unavailable_reason();
  WarningCollector collector;
  c10::WarningUtils::WarningHandlerGuard guard(&collector);
  try {
    apply_cell_settings(cell.settings);
    run_all(cell, request, tracer, timer, observation);
  } catch (const Unsupported& unsupported) {
    observation = ProcessObservation{};
    observation.trace_unavailable = tracer.unavailable_reason();
    observation.status = ObservationStatus::unsupported;
    observation.message = unsupported.what();
  } catch (const std::exception& error) {
    observation.runs.clear();
    observation.divergence.reset();
    observation.variations.clear();
    observation.kernel_sequences.clear();
    observation.status = ObservationStatus::exception;
    observation.message = error_text(error);
  }
  observation.process = request.process;
  observation.warnings = collector.warnings;
  return observation;
}

void run_worker(const WorkerRequest& request, Tracer& tracer, RunTimer& timer,
                const std::function<void(const nlohmann::json&)>& emit) {
  // Fingerprint first, so `threads` is libtorch's own default on this machine.
  emit(environment_event(environment_fingerprint()));
  apply_process_settings(request.process_settings);
  ProcessObservation skipped;
  skipped.process = request.process;
  skipped.status = ObservationStatus::unsupported;
  skipped.message = unhonoured_process_setting(request.process_settings);
  for (const auto& cell : request.cells) {
    emit(start_event(cell.key));
    emit(cell_event(cell.key, skipped.message.empty() ? run_cell(cell, request, tracer, timer) : skipped));
  }
  emit(done_event());
}

namespace {

// A worker limits its own memory, so a runaway probe fails with an allocation error instead of
// pulling the machine into swap or the OOM killer: three quarters of physical memory.
void limit_memory() {
  const auto pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return;
  rlimit limit{};
  ::getrlimit(RLIMIT_DATA, &limit);
  const rlim_t wanted = static_cast<rlim_t>(pages) / 4 * 3 * static_cast<rlim_t>(page);
  if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < wanted) return;
  limit.rlim_cur = wanted;
  ::setrlimit(RLIMIT_DATA, &limit);
}

}  // namespace

int worker_main() {
  // The supervisor decides when a worker stops: Ctrl-C reaches the whole process group, and the
  // supervisor ends its workers itself. If the supervisor dies (kill -9), its workers die with it.
  ::signal(SIGINT, SIG_IGN);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() == 1) return 3;  // the supervisor was gone before the line above took effect
  limit_memory();
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
  WorkerRequest request;
  try {
    request = request_from_json(request_json);
  } catch (const nlohmann::json::exception& error) {
    std::cerr << "worker: bad request: " << error.what() << "\n";
    return 2;
  }
  const auto tracer = make_tracer(request.device);
  const auto timer = make_run_timer(request.device);
  run_worker(request, *tracer, *timer, [&](const nlohmann::json& event) {
    const auto line = event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    std::fwrite(line.data(), 1, line.size(), events);
    std::fflush(events);
  });
  return 0;
}

}  // namespace repro_audit

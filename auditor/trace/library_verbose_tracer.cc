#include "trace/library_verbose_tracer.h"

#include <ATen/ATen.h>
#include <ATen/native/verbose_wrapper.h>
#include <c10/util/Exception.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <string_view>

#include "trace/library_verbose.h"
#include "trace/mkl_clock.h"

namespace repro_audit {
namespace {

// Level 1: oneDNN prints each primitive execution, MKL each call; 0: nothing. False when this
// libtorch lacks the library (or its verbose mode).
bool set_onednn_verbose(int level) {
  try {
    return torch::verbose::_mkldnn_set_verbose(level) != 0;
  } catch (const c10::Error&) {
    return false;
  }
}

bool set_mkl_verbose(int level) {
  static std::once_flag clock_preset;
  if (level != 0) std::call_once(clock_preset, [] { preset_mkl_clock_frequency(); });
  try {
    return torch::verbose::_mkl_set_verbose(level) != 0;
  } catch (const c10::Error&) {
    return false;
  }
}

void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const auto written = ::write(fd, text.data(), text.size());
    if (written <= 0) return;  // the log is gone; nothing better to do with the text
    text.remove_prefix(static_cast<std::size_t>(written));
  }
}

// Points fd 1 at an in-memory file between start and stop. Both libraries flush each line as they
// print it, so the file holds whole lines in the order the run printed them.
class StdoutCapture {
 public:
  StdoutCapture() : memory_(::memfd_create("repro-audit-verbose", MFD_CLOEXEC)) {}
  ~StdoutCapture() {
    if (started()) stop();
    if (memory_ >= 0) ::close(memory_);
  }
  StdoutCapture(const StdoutCapture&) = delete;
  StdoutCapture& operator=(const StdoutCapture&) = delete;

  bool started() const { return saved_ >= 0; }

  // How much the run has printed so far.
  std::size_t position() const {
    std::fflush(stdout);
    const auto offset = ::lseek(memory_, 0, SEEK_CUR);
    return offset < 0 ? 0 : static_cast<std::size_t>(offset);
  }

  bool start() {
    if (memory_ < 0) return false;
    std::fflush(stdout);  // what was printed before the run belongs to the real stdout
    saved_ = ::dup(STDOUT_FILENO);
    if (saved_ >= 0 && ::dup2(memory_, STDOUT_FILENO) >= 0) return true;
    if (saved_ >= 0) ::close(saved_);
    saved_ = -1;
    return false;
  }

  // What the run printed; fd 1 is the real stdout again, and the file empty for the next run.
  std::string stop() {
    std::fflush(stdout);
    ::dup2(saved_, STDOUT_FILENO);
    ::close(saved_);
    saved_ = -1;
    std::string text;
    struct stat status {};
    if (::fstat(memory_, &status) == 0 && status.st_size > 0) {
      text.resize(static_cast<std::size_t>(status.st_size));
      std::size_t done = 0;
      for (ssize_t got; done < text.size(); done += static_cast<std::size_t>(got))
        if ((got = ::pread(memory_, text.data() + done, text.size() - done, static_cast<off_t>(done))) <= 0) break;
      text.resize(done);
    }
    if (::ftruncate(memory_, 0) != 0 || ::lseek(memory_, 0, SEEK_SET) != 0) {
      ::close(memory_);  // cannot be reused: no capture from here on
      memory_ = -1;
    }
    return text;
  }

 private:
  int memory_ = -1;
  int saved_ = -1;  // the real stdout while started
};

std::atomic<bool> tracer_exists{false};

// The libraries print their banners once per process, so what the parser learnt of them outlives a tracer.
LibraryVerboseParser& process_parser() {
  static LibraryVerboseParser parser;
  return parser;
}

class LibraryVerboseTracer : public Tracer {
 public:
  explicit LibraryVerboseTracer(std::unique_ptr<Tracer> inner) : inner_(std::move(inner)) {
    if (tracer_exists.exchange(true)) throw std::logic_error("only one library verbose tracer may exist at a time");
    // Off outside runs, whatever ONEDNN_VERBOSE or MKL_VERBOSE said at start: a banner printed
    // outside a run would never reach the parser.
    onednn_ = set_onednn_verbose(0);
    mkl_ = set_mkl_verbose(0);
  }
  ~LibraryVerboseTracer() override {
    if (capture_.started()) finish();
    tracer_exists.store(false);
  }

  std::string unavailable_reason() const override { return inner_->unavailable_reason(); }

  void begin_run() override {
    if (capture_.started()) finish();  // the last run threw before end_run
    inner_->begin_run();
    if ((!onednn_ && !mkl_) || !capture_.start()) return;
    if (onednn_) set_onednn_verbose(1);
    if (mkl_) set_mkl_verbose(1);
  }

  // From here on, what the libraries print belongs to `op` (until it exits): a change point.
  void enter_op(std::int64_t op) override {
    inner_->enter_op(op);
    if (!capture_.started()) return;
    open_.push_back(op);
    changes_.emplace_back(capture_.position(), op);
  }
  void exit_op() override {
    inner_->exit_op();
    if (!capture_.started() || open_.empty()) return;
    open_.pop_back();
    changes_.emplace_back(capture_.position(), open_.empty() ? -1 : open_.back());
  }

  std::vector<KernelRecord> end_run() override {
    auto records = inner_->end_run();
    if (!capture_.started()) return records;
    for (auto& record : finish()) {
      if (records.size() >= kMaxKernelsPerRun) break;
      records.push_back(std::move(record));
    }
    return records;
  }

 private:
  std::vector<KernelRecord> finish() {
    if (onednn_) set_onednn_verbose(0);
    if (mkl_) set_mkl_verbose(0);
    auto run = process_parser().parse_run(capture_.stop());
    write_all(STDOUT_FILENO, run.other_output);
    // Each record belongs to the op that was innermost when its line was printed.
    std::size_t change = 0;
    std::int64_t op = -1;
    for (std::size_t i = 0; i < run.records.size(); ++i) {
      if (run.offsets[i] == std::string_view::npos) continue;
      while (change < changes_.size() && changes_[change].first <= run.offsets[i]) op = changes_[change++].second;
      run.records[i].op = op;
    }
    changes_.clear();
    open_.clear();
    return std::move(run.records);
  }

  std::unique_ptr<Tracer> inner_;
  bool onednn_ = false, mkl_ = false;  // whether this libtorch has the library's verbose mode
  StdoutCapture capture_;
  std::vector<std::int64_t> open_;                             // ops entered and not exited, innermost last
  std::vector<std::pair<std::size_t, std::int64_t>> changes_;  // (output position, innermost op from there)
};

}  // namespace

void warm_up_library_verbose() {
  if (tracer_exists.load() || !set_mkl_verbose(0)) return;
  StdoutCapture capture;
  if (!capture.start()) return;
  set_mkl_verbose(1);
  try {
    const auto a = at::ones({8, 8});  // float32 on the CPU: an MKL sgemm
    (void)at::mm(a, a);
  } catch (const std::exception&) {  // a libtorch without BLAS: nothing to warm up
  }
  set_mkl_verbose(0);
  process_parser().parse_run(capture.stop());  // the banner is learnt; the call's own record is not a run's
}

std::unique_ptr<Tracer> make_library_verbose_tracer(std::unique_ptr<Tracer> inner) {
  return std::make_unique<LibraryVerboseTracer>(std::move(inner));
}

}  // namespace repro_audit

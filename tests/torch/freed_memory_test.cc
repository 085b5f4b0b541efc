// What a run frees stays with the worker for its next run (worker/freed_memory.h). This program runs
// cells in its own process as a worker runs them, so it keeps its memory the same way.
#include <gtest/gtest.h>
#include <malloc.h>
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "worker/freed_memory.h"

namespace repro_audit {
namespace {

const bool kept_as_a_worker_keeps_it = [] {
  keep_freed_memory();
  return true;
}();

long minor_faults() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// The pages faulted in by writing a 16 MiB block that was just allocated, after one of the same size
// was written and freed (a run's output, then the next run's).
long faults_of_a_second_block() {
  constexpr std::size_t kBytes = std::size_t{16} << 20;
  auto* first = static_cast<char*>(std::malloc(kBytes));
  std::memset(first, 1, kBytes);
  std::free(first);
  const auto before = minor_faults();
  auto* second = static_cast<char*>(std::malloc(kBytes));
  std::memset(second, 2, kBytes);
  const auto faults = minor_faults() - before;
  std::free(second);
  return faults;
}

// The three measurements, in a process of its own: in a heap that earlier tests left with a free block of
// 16 MiB or more, glibc's defaults reuse that block too, and the returned case measures nothing (0 vs 0
// faults where the torch tests' shards were dealt otherwise). Exits 0 when all three hold.
[[noreturn]] void measure_in_a_fresh_heap() {
  const auto kept = faults_of_a_second_block();
  // glibc's defaults at the start of a process: such a block is mapped for each allocation and unmapped
  // when freed.
  ::mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  ::mallopt(M_TRIM_THRESHOLD, 128 * 1024);
  const auto returned = faults_of_a_second_block();
  keep_freed_memory();
  const auto kept_again = faults_of_a_second_block();
  // 16 MiB is 4096 pages of 4 KiB.
  std::fprintf(stderr, "faults: kept %ld, returned %ld, kept again %ld\n", kept, returned, kept_again);
  std::_Exit(kept < 64 && returned > kept && kept_again < 64 ? 0 : 1);
}

TEST(FreedMemory, ABlockFreedByOneRunIsTheNextRunsWithoutFaultingItInAgain) {
  ASSERT_TRUE(kept_as_a_worker_keeps_it);
  // A new process of this program (not a fork of this one, whose heap it would copy), running this test
  // alone: its heap holds only what the program's start allocated.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(measure_in_a_fresh_heap(), ::testing::ExitedWithCode(0), "faults: kept [0-9]+, returned [0-9]+");
}

}  // namespace
}  // namespace repro_audit

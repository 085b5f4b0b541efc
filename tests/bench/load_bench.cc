// Loads reports and baselines the way `show`, `compare` and `gate` do and prints what it found, for
// measuring time and peak memory by hand:
//   /usr/bin/time -v build/tests/load_bench report FILE [PATTERN]   load + match (what `show` does)
//   /usr/bin/time -v build/tests/load_bench baseline FILE           load a baseline
//   /usr/bin/time -v build/tests/load_bench compare BEFORE AFTER    two loads + the comparison
#include <chrono>
#include <exception>
#include <iostream>
#include <string>

#include "compare/baseline.h"
#include "compare/compare.h"
#include "common/user_error.h"
#include "report/cell_printer.h"
#include "report/json_io.h"

namespace {

using repro_audit::UserError;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int run(int argc, char** argv) {
  const std::string mode = argc > 2 ? argv[1] : "";
  const auto start = std::chrono::steady_clock::now();
  if (mode == "report") {
    const auto report = repro_audit::load_report_file(argv[2]);
    std::cout << report.cells.size() << " cells, " << report.notes.size() << " notes";
    if (argc > 3) std::cout << ", " << repro_audit::match_cells(report, argv[3]).size() << " matching";
  } else if (mode == "baseline") {
    std::cout << repro_audit::load_baseline_file(argv[2]).cells.size() << " cells";
  } else if (mode == "compare" && argc > 3) {
    const auto comparison =
        repro_audit::compare_snapshots(repro_audit::load_comparable(argv[2]), repro_audit::load_comparable(argv[3]));
    std::cout << comparison.cells.size() << " cells compared";
  } else {
    std::cerr << "usage: load_bench report FILE [PATTERN] | baseline FILE | compare BEFORE AFTER\n";
    return 2;
  }
  std::cout << " in " << seconds_since(start) << " s\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const UserError& error) {
    std::cerr << error.what() << "\n";
    return 2;
  } catch (const std::exception& error) {
    std::cerr << "internal error: " << error.what() << "\n";
    return 3;
  }
}

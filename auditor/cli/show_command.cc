// `show REPORT [CELL...]`: a cell's kernels, timings and verdict detail.
#include <iostream>

#include "cli/commands.h"
#include "common/user_error.h"
#include "report/cell_printer.h"
#include "report/text_format.h"
#include "report/json_io.h"

namespace repro_audit {

Command add_show_command(CLI::App& app) {
  auto* show = app.add_subcommand("show", "Print cells of a report: kernels, timings, verdict detail");
  auto report_path = std::make_shared<std::string>();
  auto patterns = std::make_shared<std::vector<std::string>>();
  show->add_option("report", *report_path, "A report written by `run --json`")->required();
  show->add_option("cells", *patterns, "Cell keys, or parts of keys (every matching cell is shown); none: list all");
  return {show,
          [report_path, patterns] {
            const auto report = load_report_file(*report_path);
            if (patterns->empty()) {
              print_cell_list(report, std::cout);
              return 0;
            }
            for (const auto& pattern : *patterns) {
              const auto matches = match_cells(report, pattern);
              if (matches.empty()) throw UserError(*report_path + ": no cell key contains '" + pattern + "'");
              for (const auto* cell : matches) {
                print_cell_details(*cell, std::cout);
                std::cout << "\n";
              }
            }
            std::cout << documentation_line(report) << "\n";
            return 0;
          },
          [] { return false; }};
}

}  // namespace repro_audit

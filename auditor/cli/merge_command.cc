// `merge`: the shards' reports of one audit become one report.
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <iostream>

#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/output_options.h"
#include "cli/terminal.h"
#include "merge/merge.h"
#include "output/output_format.h"
#include "report/json_io.h"
#include "report/terminal_printer.h"

namespace repro_audit {

Command add_merge_command(CLI::App& app) {
  struct Arguments {
    std::vector<std::string> reports;
    std::string output;
    bool allow_partial = false;
    OutputArguments outputs;
  };
  auto arguments = std::make_shared<Arguments>();
  auto* merge = app.add_subcommand(
      "merge",
      "Join the reports of an audit's shards (run with --shard, or by a Slurm job array or Kubernetes Indexed Job) "
      "into one report; the same shards run on several hosts of one platform add their processes to each cell");
  merge->add_option("reports", arguments->reports, "The shards' JSON reports")->required()->check(input_file());
  merge->add_option("-o,--output", arguments->output, "The merged report (JSON)")->required();
  merge->add_flag("--allow-partial", arguments->allow_partial,
                  "Merge what is here when shards are missing; the report names the missing shards and cells");
  add_output_options(merge, arguments->outputs);
  return {merge,
          [arguments] {
            auto outputs = arguments->outputs.named();
            outputs.push_back({"--output", arguments->output});
            std::vector<NamedPath> inputs;
            for (const auto& report : arguments->reports) inputs.push_back({"a report", report});
            check_outputs(outputs, inputs);
            const auto report = merge_reports(load_report_files(arguments->reports), {arguments->allow_partial});
            print_matrix(report, std::cout, {use_color(STDOUT_FILENO), true});
            print_summary(report, FailOn::contradiction, std::cout);
            std::vector<std::string> hosts;
            for (const auto& input : report.merge->reports)
              if (std::find(hosts.begin(), hosts.end(), input.host) == hosts.end()) hosts.push_back(input.host);
            std::cout << fmt::format("merged {} report{} from {} host{} into {} cells\n", report.merge->reports.size(),
                                     report.merge->reports.size() == 1 ? "" : "s", hosts.size(),
                                     hosts.size() == 1 ? "" : "s", report.cells.size());
            auto files = arguments->outputs.files();
            files.push_back({"json", arguments->output});
            auto failures = write_reports(files, report);
            for (const auto& failure : failures) print_message("repro-audit: " + failure);
            if (!failures.empty()) return 2;
            const auto& missing = report.merge->missing_shards;
            if (!missing.empty())
              print_message(fmt::format("repro-audit: partial merge: {} {} {} missing ({} cells of the plan)",
                                        missing.size() == 1 ? "shard" : "shards", fmt::join(missing, ", "),
                                        missing.size() == 1 ? "is" : "are", report.merge->missing_cells.size()));
            return 0;
          },
          [] { return false; }};
}

}  // namespace repro_audit

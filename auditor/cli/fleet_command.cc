// `fleet`: reports of many hosts -> which cells are bit-identical fleet-wide, and which hosts disagree.
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/output_options.h"
#include "cli/terminal.h"
#include "fleet/fleet_printers.h"
#include "report/json_io.h"

namespace repro_audit {

Command add_fleet_command(CLI::App& app) {
  struct Arguments {
    std::vector<std::string> reports;
    OutputArguments outputs;  // the formats with a fleet form (output/output_format.h)
  };
  auto arguments = std::make_shared<Arguments>();
  auto* fleet = app.add_subcommand(
      "fleet",
      "Hosts x cells from many hosts' reports, grouped by platform: which cells are bit-identical across the "
      "fleet, which hosts disagree, and the fingerprint field that separates them");
  fleet->add_option("reports", arguments->reports, "One report per host (or a merged report per host)")
      ->required()
      ->check(input_file());
  for (const auto* format : fleet_formats()) {
    const auto index = static_cast<std::size_t>(format - output_formats().data());
    fleet->add_option("--" + format->name, arguments->outputs.paths[index], format->help);
  }
  return {fleet,
          [arguments] {
            std::vector<NamedPath> inputs;
            for (const auto& report : arguments->reports) inputs.push_back({"a report", report});
            check_outputs(arguments->outputs.named(), inputs);
            const auto matrix = build_fleet(load_report_files(arguments->reports));
            std::cout << fleet_text(matrix) << std::flush;
            const auto failures = write_fleets(arguments->outputs.files(), matrix);
            for (const auto& failure : failures) print_message("repro-audit: " + failure);
            if (!failures.empty()) return 2;
            if (matrix.compared == 0) {
              print_message(fmt::format(
                  "repro-audit: nothing was compared: {}",
                  matrix.hosts.size() < 2
                      ? fmt::format("a fleet needs reports of at least two hosts ({} given, {} "
                                    "left out as copies of a host's report)",
                                    matrix.hosts.size() + matrix.duplicates.size(), matrix.duplicates.size())
                      : "no cell has agreeing runs on two hosts (no common cells, or all skipped)"));
              return 1;
            }
            return 0;
          },
          [] { return false; }};
}

}  // namespace repro_audit

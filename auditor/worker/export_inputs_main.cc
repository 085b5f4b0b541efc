// `repro-audit export-inputs` (worker/entry_points.h): each cell's runner saves its inputs
// (runners/input_export.h); one JSON line per cell on stdout.
#include <iostream>
#include <nlohmann/json.hpp>

#include "apply/settings_apply.h"
#include "protocol/worker_protocol.h"
#include "runners/cell_runner.h"
#include "worker/entry_points.h"
#include "worker/freed_memory.h"

namespace repro_audit {

int export_inputs_main() {
  keep_freed_memory();  // the cells' inputs, made one after another
  nlohmann::json request;
  WorkerRequest cells;
  std::vector<std::string> directories;
  std::vector<std::int64_t> origins;
  try {
    request = nlohmann::json::parse(std::cin);
    cells = request_from_json(request.at("request"));
    directories = request.at("directories").get<std::vector<std::string>>();
    origins = request.value("origins", std::vector<std::int64_t>(directories.size(), -1));
  } catch (const nlohmann::json::exception& error) {
    std::cerr << "export-inputs: bad request: " << error.what() << "\n";
    return 2;
  }
  if (directories.size() != cells.cells.size() || origins.size() != cells.cells.size()) {
    std::cerr << "export-inputs: one directory per cell is needed\n";
    return 2;
  }
  apply_process_settings(cells.process_settings);
  for (std::size_t i = 0; i < cells.cells.size(); ++i)
    std::cout << make_cell_runner(cells.cells[i])
                     ->export_inputs(cells.cells[i], cells.input_scheme, directories[i], origins[i])
                     .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
              << std::endl;
  return 0;
}

}  // namespace repro_audit

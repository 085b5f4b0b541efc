#include "cli/cli.h"
#include "cli/standard_library.h"

int main(int argc, char** argv) {
  repro_audit::ensure_standard_library_first(argv);
  return repro_audit::run_cli(argc, argv);
}

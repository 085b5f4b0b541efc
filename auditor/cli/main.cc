#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "cli/cli.h"
#include "cli/standard_library.h"

int main(int argc, char** argv) {
  repro_audit::ensure_standard_library_first(argv);
  const int code = repro_audit::run_cli(argc, argv);
  // Everything is said and written (run_cli checked standard output): the static destructors left
  // would only deregister libtorch's thousands of operators one by one, a tenth of a second of every
  // command and every worker, and run beside threads that may still be in libtorch.
  std::cout.flush();
  std::fflush(nullptr);  // std::cerr is unbuffered
  std::_Exit(code);
}

#include "cli/cli.h"

int main(int argc, char** argv) { return repro_audit::run_cli(argc, argv); }

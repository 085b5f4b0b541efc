#pragma once
// The command line: one table of subcommands, one catch of UserError at the top.
namespace repro_audit {

// Exit codes: 0 passed, 1 audit or gate failed, 2 bad usage or input, 3 internal error.
int run_cli(int argc, char** argv);

}  // namespace repro_audit

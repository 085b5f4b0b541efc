#pragma once
// `repro-audit` is the front end people run; it does not load libtorch. A command that reads only
// reports and baselines (show, baseline, compare, gate --report, merge, fleet) runs in it, in a few
// milliseconds; every other command is handed, whole and unchanged, to repro-audit-torch beside it:
// the same commands linked with libtorch and the probes, which loads libtorch's 3 GB of libraries
// (0.3 s of every command here) and runs the audits.
#include <string>

namespace repro_audit {

// Replaces this process with repro-audit-torch, beside this program, with the same arguments: the
// same process, its output and exit code. Returns only when it cannot start: says why, returns 2.
int start_torch_side(char** argv);

// The program people run, for the commands a message prints (a resume hint): repro-audit beside this
// one when this is repro-audit-torch, else this one.
std::string front_end_executable();

}  // namespace repro_audit

#pragma once
// Whether a test's Python has the modules it needs, asked without importing them: importlib finds a
// module in 0.03 s, where importing torch costs 1.5 s of CPU in every test that asks. A module that is
// there but fails to import is no reason to skip: the tests that need it fail, saying why.
#include <cstdlib>
#include <string>

namespace test_paths {

// `modules`: names separated by spaces, e.g. "torch xxhash".
inline bool python_has_modules(const std::string& python, const std::string& modules) {
  if (python.empty()) return false;
  const auto command =
      "'" + python +
      "' -c 'import importlib.util as u, sys; sys.exit(not all(u.find_spec(m) for m in sys.argv[1:]))' " + modules +
      " > /dev/null 2>&1";
  return std::system(command.c_str()) == 0;
}

}  // namespace test_paths

// Hostile inputs, output: see the tests below.
#include "cli_tools.h"

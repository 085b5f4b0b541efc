// Hostile inputs, python: see the tests below.
#include "cli_tools.h"

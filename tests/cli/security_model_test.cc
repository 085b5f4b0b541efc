// Hostile inputs, model: see the tests below.
#include "cli_tools.h"

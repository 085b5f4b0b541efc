#pragma once
// Removing a folder the tool made, and everything in it, without leaving its mount: a bind mount
// or another filesystem mounted inside (by the code a worker ran, or by whoever planted it in an
// abandoned folder) keeps its files, and the folders above it stay. No link is followed.
#include <string>

namespace repro_audit {

// True when `folder` is gone (or was never there); false when something in it could not be removed,
// a mount inside it included.
bool remove_tree(const std::string& folder);

}  // namespace repro_audit

// Where the checkout is, for tests that read its files (scenarios/*.toml).
#pragma once

#include <string>

namespace sluice::testing {

// The source tree's root, absolute, without a trailing slash.
const char* source_dir();

// A file or folder under the source tree: source_path("scenarios") is "<root>/scenarios".
std::string source_path(const std::string& relative);

}  // namespace sluice::testing

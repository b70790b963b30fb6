// The only test file compiled with SLUICE_SOURCE_DIR (CMakeLists.txt says why).
#include "tests/source_dir.h"

namespace sluice::testing {

const char* source_dir() { return SLUICE_SOURCE_DIR; }

std::string source_path(const std::string& relative) { return std::string(SLUICE_SOURCE_DIR) + "/" + relative; }

}  // namespace sluice::testing

// TempDir: a fresh directory under /tmp for one test, removed with everything in it at the end.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <string_view>

namespace sluice::net_test {

class TempDir {
 public:
  TempDir() {
    char name[] = "/tmp/sluice-net-test-XXXXXX";
    const char* made = ::mkdtemp(name);
    EXPECT_NE(made, nullptr) << "mkdtemp failed";
    path_ = made != nullptr ? made : "/tmp";
  }
  ~TempDir() {
    std::error_code ignored;
    if (path_ != "/tmp") std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string operator/(std::string_view name) const { return path_ + "/" + std::string(name); }

 private:
  std::string path_;
};

}  // namespace sluice::net_test

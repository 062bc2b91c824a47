#pragma once
/// @file
/// Helpers for the workload tests: repository and shared-data paths, and a scratch folder.

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <unistd.h>

namespace llmbench::workload::testing {

/// The repository root: $LLMBENCH_SOURCE_DIR (set by ctest), else the configure-time path.
inline std::filesystem::path source_dir() {
  if (const char* env = std::getenv("LLMBENCH_SOURCE_DIR"); env != nullptr && *env != '\0') {
    return env;
  }
  return LLMBENCH_TEST_SOURCE_DIR;
}

/// The bundled data folder committed in the repository.
inline std::string bundled_data_dir() {
  return (source_dir() / "data").string();
}

/// ../shared/data next to the repository (CI), else /work/shared/data; empty if neither exists.
inline std::filesystem::path shared_data_dir() {
  for (const auto& dir :
       {source_dir() / ".." / "shared" / "data", std::filesystem::path("/work/shared/data")}) {
    if (std::filesystem::is_directory(dir)) {
      return dir;
    }
  }
  return {};
}

/// A fresh folder under the system temp folder, removed with its contents on destruction.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ =
        std::filesystem::temp_directory_path() /
        ("llmbench_workload_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  /// Writes `content` to `name` inside the folder and returns the full path.
  std::string write(const std::string& name, std::string_view content) const {
    const auto p = path_ / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    return p.string();
  }
  [[nodiscard]] std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace llmbench::workload::testing

#pragma once
/// @file
/// Version and source revision stamped in at configure time (MLPerf LoadGen `version.h` habit).

#include <string_view>

namespace llmbench::build_info {
/// Semantic version of llmbench, e.g. "0.1.0".
std::string_view version() noexcept;
/// Git commit SHA of the source tree at configure time, or "unknown" outside a git checkout.
std::string_view git_sha() noexcept;
/// Folder of the bundled data (default prompts, corpus) in the source tree at configure time;
/// `LLMBENCH_DATA_DIR` in the environment overrides it at run time (the CLI checks).
std::string_view data_dir() noexcept;
}  // namespace llmbench::build_info

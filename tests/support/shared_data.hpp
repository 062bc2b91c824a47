#pragma once
/// @file
/// What a test does when the data it needs from `../shared/data` is missing: it is skipped on a
/// developer's machine without the data, and it fails when `LLMBENCH_REQUIRE_SHARED_DATA=1`
/// (`scripts/test.sh` sets it whenever `../shared/data` exists, so CI, where the data is there,
/// can never pass by skipping). Use it where a test would call `GTEST_SKIP()`:
///
///     if (dir.empty()) {
///       LLMBENCH_SHARED_DATA_MISSING() << "tokenizers/deepseek-v3 not found";
///     }

#include <gtest/gtest.h>

#include <cstdlib>
#include <string_view>

namespace llmbench::test {

/// True when `LLMBENCH_REQUIRE_SHARED_DATA` is set to "1": a missing file is then a failure.
inline bool shared_data_required() {
  const char* env = std::getenv("LLMBENCH_REQUIRE_SHARED_DATA");
  return env != nullptr && std::string_view(env) == "1";
}

/// kFatalFailure when the shared data is required, else kSkip.
inline ::testing::TestPartResult::Type shared_data_missing_result() {
  return shared_data_required() ? ::testing::TestPartResult::kFatalFailure
                                : ::testing::TestPartResult::kSkip;
}

}  // namespace llmbench::test

/// Ends the current test (like `GTEST_SKIP()` / `FAIL()`, streams a message) as skipped, or as
/// failed under `LLMBENCH_REQUIRE_SHARED_DATA=1`. Built on the same helper `GTEST_SKIP` expands
/// to in GoogleTest 1.12 (`gtest-message.h`, `AssertHelper`).
#define LLMBENCH_SHARED_DATA_MISSING()                                           \
  return ::testing::internal::AssertHelper(                                      \
             ::llmbench::test::shared_data_missing_result(), __FILE__, __LINE__, \
             "needs ../shared/data (LLMBENCH_REQUIRE_SHARED_DATA)") = ::testing::Message()

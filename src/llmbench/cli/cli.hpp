#pragma once
/// @file
/// Command-line entry: subcommands → config structs → library calls (README.md "Benchmarking a
/// server").

#include <functional>

namespace llmbench::cli {

/// Runs a parsed command and maps what it throws to the exit code, with one line on stderr:
/// `llmbench::Exception` (a usage, configuration or start-up error) → 2 "llmbench: error: ...";
/// `std::bad_alloc` → 3 "llmbench: internal error: out of memory ..."; any other exception → 3
/// "llmbench: internal error: ...". Returns the command's own code when it returns.
int run_guarded(const std::function<int()>& command);

/// Runs `llmbench <subcommand> ...`. Exit codes (docs/architecture.md, conventions: errors): 0 ok;
/// 1 the run finished but requests failed; 2 usage, configuration or start-up error; 3 internal
/// error. Never throws.
int run(int argc, char** argv);

}  // namespace llmbench::cli

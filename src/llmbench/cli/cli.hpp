#pragma once
/// @file
/// Command-line entry: subcommands → config structs → library calls (DESIGN.md §1).

namespace llmbench::cli {

/// Runs `llmbench <subcommand> ...`. Exit codes (STYLE.md): 0 ok; 1 the run finished but
/// requests failed; 2 usage, configuration or start-up error; 3 internal error. Never throws.
int run(int argc, char** argv);

}  // namespace llmbench::cli

#pragma once
/// @file
/// `--tokenizer PATH|NAME` resolution and loading, shared by `run` and `simulate`.

#include "llmbench/tokenizer/tokenizer.hpp"

#include <filesystem>
#include <string>
#include <string_view>

namespace llmbench::workload {

/// Resolves a `--tokenizer` value to a tokenizer JSON file or a folder holding `tokenizer.json`,
/// in this order:
///  1. `spec` as a path: an existing file, or a folder with `tokenizer.json` in it;
///  2. `<llmbench_data>/tokenizers/<spec>/` (the `LLMBENCH_DATA` folder, an unpacked copy of
///     ../shared/data), when `llmbench_data` is not empty;
///  3. `<bundled_data_dir>/tokenizers/<spec>/`.
/// A name is one path component (no '/'). Throws `Exception` naming `--tokenizer` when nothing
/// matches; the message lists the names found under the searched `tokenizers/` folders and says
/// when only a compressed `tokenizer.json.zst` is there.
std::filesystem::path resolve_tokenizer_spec(std::string_view spec,
                                             const std::string& llmbench_data,
                                             const std::string& bundled_data_dir);

/// The value of the `LLMBENCH_DATA` environment variable, or empty.
std::string llmbench_data_env();

/// Resolves `spec` (with `LLMBENCH_DATA` from the environment) and loads the tokenizer. Throws
/// `Exception` naming `--tokenizer` and the resolved path when loading fails.
tokenizer::Tokenizer load_tokenizer_spec(std::string_view spec,
                                         const std::string& bundled_data_dir);

}  // namespace llmbench::workload

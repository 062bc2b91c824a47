#pragma once
/// @file
/// The one whole-file reader: every input file (datasets, corpora, tokenizer files, profiles) is
/// read through it, so each fails the same clear way on a missing file, a folder, an unreadable
/// file or one far larger than the input could sensibly be (`--dataset-path /dev/zero`).

#include "llmbench/core/error.hpp"

#include <cstdint>
#include <filesystem>
#include <string>

namespace llmbench {

/// Default size limit of an input file: 2 GiB, three times the largest dataset llmbench reads
/// (the unfiltered ShareGPT_V3 file vLLM documents is ~640 MB).
inline constexpr std::uint64_t kDefaultMaxFileBytes = std::uint64_t{2} << 30;

/// Spare capacity `read_file` leaves after the contents of a regular file: simdjson's
/// SIMDJSON_PADDING (64 bytes in simdjson 3), so that a DOM parse of the string needs no copy.
inline constexpr std::size_t kFileReadPadding = 64;

/// The whole contents of the file at `path`, read as bytes. Works for regular files and streams
/// (pipes, character devices); a regular file larger than `max_bytes` fails before any byte is
/// read, a stream as soon as it passes `max_bytes`. Errors name the path in `Error::source`:
/// "cannot open file: <reason>", "is a folder, not a file", "read error: <reason>", "file is
/// larger than the limit of N bytes". Never throws on bad input (`.value()` throws `Exception`).
Result<std::string> read_file(const std::filesystem::path& path,
                              std::uint64_t max_bytes = kDefaultMaxFileBytes);

}  // namespace llmbench

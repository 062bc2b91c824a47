#include "llmbench/workload/tokenizer_spec.hpp"

#include "llmbench/core/error.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <vector>

namespace llmbench::workload {
namespace {

namespace fs = std::filesystem;

bool is_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

/// Names of the sub-folders of `root` that hold a tokenizer.json (or its .zst).
void collect_names(const fs::path& root, std::set<std::string>& names) {
  std::error_code ec;
  if (!is_dir(root)) {
    return;
  }
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    if (entry.is_directory(ec) && (is_file(entry.path() / "tokenizer.json") ||
                                   is_file(entry.path() / "tokenizer.json.zst"))) {
      names.insert(entry.path().filename().string());
    }
  }
}

}  // namespace

std::string llmbench_data_env() {
  const char* value = std::getenv("LLMBENCH_DATA");
  return value != nullptr ? std::string(value) : std::string();
}

fs::path resolve_tokenizer_spec(std::string_view spec, const std::string& llmbench_data,
                                const std::string& bundled_data_dir) {
  if (spec.empty()) {
    throw Exception(Error{"is empty", "--tokenizer", -1});
  }
  const fs::path as_path(spec);
  if (is_file(as_path)) {
    return as_path;
  }
  if (is_dir(as_path)) {
    if (is_file(as_path / "tokenizer.json")) {
      return as_path;
    }
    throw Exception(Error{fmt::format("folder '{}' has no tokenizer.json{}", spec,
                                      is_file(as_path / "tokenizer.json.zst")
                                          ? " (only tokenizer.json.zst: unpack it with zstd -d)"
                                          : ""),
                          "--tokenizer", -1});
  }
  std::vector<fs::path> roots;
  if (!llmbench_data.empty()) {
    roots.push_back(fs::path(llmbench_data) / "tokenizers");
  }
  if (!bundled_data_dir.empty()) {
    roots.push_back(fs::path(bundled_data_dir) / "tokenizers");
  }
  const bool is_name = spec.find('/') == std::string_view::npos && spec != "." && spec != "..";
  std::string compressed_only;
  if (is_name) {
    for (const auto& root : roots) {
      const fs::path folder = root / spec;
      if (is_file(folder / "tokenizer.json")) {
        return folder;
      }
      if (compressed_only.empty() && is_file(folder / "tokenizer.json.zst")) {
        compressed_only = folder.string();
      }
    }
  }
  std::set<std::string> names;
  std::string searched;
  for (const auto& root : roots) {
    collect_names(root, names);
    searched += (searched.empty() ? "" : ", ") + root.string();
  }
  std::string message = fmt::format(
      "'{}' is neither a tokenizer file, a folder holding "
      "tokenizer.json, nor a known name",
      spec);
  if (!compressed_only.empty()) {
    message += fmt::format(
        " ({} holds only tokenizer.json.zst: point LLMBENCH_DATA at an "
        "unpacked copy of the data, or unpack it with zstd -d)",
        compressed_only);
  }
  if (roots.empty()) {
    message += "; set LLMBENCH_DATA to a data folder with tokenizers/<name>/ to use names";
  } else if (names.empty()) {
    message += fmt::format("; no tokenizer names found under {}{}", searched,
                           llmbench_data.empty() ? " (set LLMBENCH_DATA to the data folder)" : "");
  } else {
    std::string list;
    for (const auto& name : names) {
      list += (list.empty() ? "" : ", ") + name;
    }
    message += fmt::format("; available names: {} (under {})", list, searched);
  }
  throw Exception(Error{std::move(message), "--tokenizer", -1});
}

tokenizer::Tokenizer load_tokenizer_spec(std::string_view spec,
                                         const std::string& bundled_data_dir) {
  const fs::path path = resolve_tokenizer_spec(spec, llmbench_data_env(), bundled_data_dir);
  auto loaded = tokenizer::Tokenizer::load(path);
  if (!loaded) {
    throw Exception(Error{fmt::format("cannot load '{}': {}", path.string(), loaded.error().what()),
                          "--tokenizer", -1});
  }
  return std::move(*loaded);
}

}  // namespace llmbench::workload

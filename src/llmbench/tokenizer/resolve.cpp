#include "llmbench/tokenizer/resolve.hpp"

#include "llmbench/core/build_info.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>
#include <system_error>
#include <utility>

namespace llmbench::tokenizer {
namespace {

namespace fs = std::filesystem;

// fs::path converts to both sides of Result (Error is an aggregate), so name the value side.
Result<fs::path> ok(fs::path p) {
  return Result<fs::path>(boost::system::in_place_value, std::move(p));
}

bool is_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

// `tokenizer.json` or `tokenizer.<anything>.json`, but not `tokenizer_config*.json`.
bool is_tokenizer_json_name(std::string_view name) {
  return name == "tokenizer.json" ||
         (name.starts_with("tokenizer.") && name.ends_with(".json") && name.size() > 15);
}

bool is_compressed_tokenizer_name(std::string_view name) {
  return name.starts_with("tokenizer.") && name.ends_with(".json.zst");
}

// What a folder holds: its tokenizer JSON (empty when none) and whether a .zst one is there.
struct FolderContents {
  fs::path json;
  bool compressed = false;
};

FolderContents scan_folder(const fs::path& dir) {
  FolderContents out;
  if (is_file(dir / "tokenizer.json")) {
    out.json = dir / "tokenizer.json";
    return out;
  }
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (is_tokenizer_json_name(name) && entry.is_regular_file(ec)) {
      found.push_back(name);
    }
    out.compressed = out.compressed || is_compressed_tokenizer_name(name);
  }
  if (!found.empty()) {
    out.json = dir / *std::min_element(found.begin(), found.end());
  }
  return out;
}

std::string unpack_hint(const fs::path& dir) {
  return fmt::format(
      "{} holds only a zstd-compressed tokenizer JSON: unpack it (zstd -d) or point "
      "LLMBENCH_DATA at an unpacked copy of the data",
      dir.string());
}

bool is_name(std::string_view spec) {
  return !spec.empty() && spec.find('/') == std::string_view::npos && spec != "." && spec != "..";
}

}  // namespace

std::vector<fs::path> default_data_roots() {
  std::vector<fs::path> roots;
  auto add = [&](std::string_view p) {
    if (!p.empty() && std::find(roots.begin(), roots.end(), fs::path(p)) == roots.end()) {
      roots.emplace_back(p);
    }
  };
  if (const char* v = std::getenv("LLMBENCH_DATA"); v != nullptr) {
    add(v);
  }
  if (const char* v = std::getenv("LLMBENCH_DATA_DIR"); v != nullptr && *v != '\0') {
    add(v);
  } else {
    add(build_info::data_dir());
  }
  return roots;
}

Result<fs::path> resolve_tokenizer(std::string_view spec, std::span<const fs::path> roots) {
  const std::string source(spec);
  if (spec.empty()) {
    return Error{"is empty", "tokenizer argument", -1};
  }
  const fs::path direct(spec);
  if (is_file(direct)) {
    return ok(direct);
  }
  if (is_dir(direct)) {
    const FolderContents c = scan_folder(direct);
    if (!c.json.empty()) {
      return ok(c.json);
    }
    return Error{c.compressed ? unpack_hint(direct)
                              : fmt::format("folder {} has no tokenizer.json or tokenizer.*.json",
                                            direct.string()),
                 source, -1};
  }
  fs::path compressed_only;
  if (is_name(spec)) {
    for (const auto& root : roots) {
      const fs::path dir = root / "tokenizers" / direct;
      if (!is_dir(dir)) {
        continue;
      }
      const FolderContents c = scan_folder(dir);
      if (!c.json.empty()) {
        return ok(c.json);
      }
      if (c.compressed && compressed_only.empty()) {
        compressed_only = dir;
      }
    }
  }
  std::set<std::string> names;
  std::string searched;
  for (const auto& root : roots) {
    const fs::path dir = root / "tokenizers";
    searched += (searched.empty() ? "" : ", ") + dir.string();
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      if (!entry.is_directory(ec)) {
        continue;
      }
      const FolderContents c = scan_folder(entry.path());
      if (!c.json.empty() || c.compressed) {
        names.insert(entry.path().filename().string());
      }
    }
  }
  std::string message = compressed_only.empty()
                            ? "not a tokenizer file or folder, nor a known tokenizer name"
                            : unpack_hint(compressed_only);
  if (roots.empty()) {
    message += "; set LLMBENCH_DATA to a data folder with tokenizers/<name>/ to use names";
  } else if (names.empty()) {
    message += fmt::format("; no tokenizer names under {} (set LLMBENCH_DATA to the data folder)",
                           searched);
  } else {
    std::string list;
    for (const auto& n : names) {
      list += (list.empty() ? "" : ", ") + n;
    }
    message += fmt::format("; available names: {} (under {})", list, searched);
  }
  return Error{std::move(message), source, -1};
}

Result<fs::path> resolve_tokenizer(std::string_view spec) {
  const auto roots = default_data_roots();
  return resolve_tokenizer(spec, roots);
}

Result<ResolvedTokenizer> load_tokenizer(std::string_view spec) {
  auto path = resolve_tokenizer(spec);
  if (!path) {
    return path.error();
  }
  auto loaded = Tokenizer::load(*path);
  if (!loaded) {
    return Error{fmt::format("cannot load '{}': {}", path->string(), loaded.error().what()),
                 std::string(spec), -1};
  }
  return Result<ResolvedTokenizer>(boost::system::in_place_value,
                                   ResolvedTokenizer{std::move(*path), std::move(*loaded)});
}

}  // namespace llmbench::tokenizer

#pragma once
// Locating the shared tokenizer data ($LLMBENCH_SOURCE_DIR/../shared/data/tokenizers) and
// unpacking `.zst` files into a temporary folder with `zstd -d`.

#include "llmbench/tokenizer/tokenizer.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unistd.h>

namespace llmbench::tokenizer::testing {

namespace fs = std::filesystem;

/// The repository root: $LLMBENCH_SOURCE_DIR (set by ctest), else the configured source dir.
inline fs::path source_dir() {
  const char* env = std::getenv("LLMBENCH_SOURCE_DIR");
  return env != nullptr ? fs::path(env) : fs::path(LLMBENCH_TEST_SOURCE_DIR);
}

/// Root of the shared tokenizer data, or empty when it is not there.
inline fs::path data_root() {
  const fs::path root = source_dir() / ".." / "shared" / "data" / "tokenizers";
  std::error_code ec;
  return fs::is_directory(root, ec) ? root : fs::path();
}

/// Path of `rel` under the data root; a `.zst`-only file is decompressed once into a temporary
/// folder. Empty when neither exists (or zstd failed): callers skip.
inline fs::path data_file(const std::string& rel) {
  const fs::path root = data_root();
  if (root.empty()) {
    return {};
  }
  std::error_code ec;
  if (fs::exists(root / rel, ec)) {
    return root / rel;
  }
  const fs::path zst = root / (rel + ".zst");
  if (!fs::exists(zst, ec)) {
    return {};
  }
  const fs::path out =
      fs::temp_directory_path() / ("llmbench_tok_" + std::to_string(::getpid())) / rel;
  if (fs::exists(out, ec)) {
    return out;
  }
  fs::create_directories(out.parent_path(), ec);
  const std::string tmp = out.string() + ".part";
  const std::string cmd = "zstd -d -q -f -o '" + tmp + "' '" + zst.string() + "'";
  if (std::system(cmd.c_str()) != 0) {
    return {};
  }
  fs::rename(tmp, out, ec);
  return ec ? fs::path() : out;
}

/// Whole file as a string (empty when unreadable).
inline std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// A tokenizer of the shared data set, loaded once per process; nullptr when its files are absent.
/// `folder/file` is the tokenizer JSON; `folder/tokenizer_config.json` is used when present.
inline const Tokenizer* shared_tokenizer(const std::string& folder, const std::string& file) {
  static std::map<std::string, std::unique_ptr<Tokenizer>> cache;
  const std::string key = folder + "/" + file;
  if (auto it = cache.find(key); it != cache.end()) {
    return it->second.get();
  }
  std::unique_ptr<Tokenizer> tok;
  const fs::path json = data_file(key);
  if (!json.empty()) {
    const fs::path config = data_file(folder + "/tokenizer_config.json");
    auto r = Tokenizer::from_json(slurp(json), config.empty() ? std::string() : slurp(config),
                                  json.string());
    if (!r) {
      throw std::runtime_error(r.error().what());
    }
    tok = std::make_unique<Tokenizer>(std::move(*r));
  }
  return cache.emplace(key, std::move(tok)).first->second.get();
}

}  // namespace llmbench::tokenizer::testing

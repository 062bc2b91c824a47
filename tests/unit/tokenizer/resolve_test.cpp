// The one tokenizer-argument resolver (resolve.hpp): paths, folders, names under data roots in
// order, tokenizer.*.json fallback, compressed-only folders and the list of available names.

#include "llmbench/tokenizer/resolve.hpp"

#include <gtest/gtest.h>

#include "shared_data.hpp"
#include "test_data.hpp"
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace llmbench::tokenizer {
namespace {

namespace fs = std::filesystem;

// A temporary folder removed at the end of the test.
class Tree {
 public:
  Tree() : root_(fs::temp_directory_path() / ("resolve_test_" + std::to_string(::getpid()))) {
    fs::remove_all(root_);
  }
  ~Tree() { fs::remove_all(root_); }
  Tree(const Tree&) = delete;
  Tree& operator=(const Tree&) = delete;
  // Writes `text` to `rel` (folders created) and returns its path.
  fs::path write(const std::string& rel, const std::string& text = "{}") {
    const fs::path p = root_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  [[nodiscard]] const fs::path& root() const { return root_; }

 private:
  fs::path root_;
};

TEST(ResolveTokenizer, PathsThenNamesInRootOrder) {
  Tree t;
  const fs::path file = t.write("one/tokenizer.json");
  t.write("data/tokenizers/alpha/tokenizer.json");
  t.write("bundled/tokenizers/alpha/tokenizer.json");
  t.write("bundled/tokenizers/beta/tokenizer.json");
  const std::vector<fs::path> roots{t.root() / "data", t.root() / "bundled"};
  EXPECT_EQ(*resolve_tokenizer(file.string(), roots), file);
  EXPECT_EQ(*resolve_tokenizer((t.root() / "one").string(), roots), file);  // folder → its file
  // The first root wins; a name missing there is looked up in the next.
  EXPECT_EQ(*resolve_tokenizer("alpha", roots), t.root() / "data/tokenizers/alpha/tokenizer.json");
  EXPECT_EQ(*resolve_tokenizer("beta", roots), t.root() / "bundled/tokenizers/beta/tokenizer.json");
  const std::vector<fs::path> bundled_only{t.root() / "bundled"};
  EXPECT_EQ(*resolve_tokenizer("alpha", bundled_only),
            t.root() / "bundled/tokenizers/alpha/tokenizer.json");
}

TEST(ResolveTokenizer, DerivedJsonWhenNoTokenizerJson) {
  Tree t;
  t.write("data/tokenizers/foo/tokenizer.reconstructed.json");
  t.write("data/tokenizers/foo/tokenizer.derived.json");
  t.write("data/tokenizers/foo/tokenizer_config.json");
  const std::vector<fs::path> roots{t.root() / "data"};
  // First by name among tokenizer.*.json; tokenizer_config.json never counts.
  EXPECT_EQ(*resolve_tokenizer("foo", roots),
            t.root() / "data/tokenizers/foo/tokenizer.derived.json");
  EXPECT_EQ(resolve_tokenizer((t.root() / "data/tokenizers/foo").string(), roots)->filename(),
            "tokenizer.derived.json");
}

TEST(ResolveTokenizer, UnknownNameListsTheAvailableOnes) {
  Tree t;
  t.write("data/tokenizers/alpha/tokenizer.json");
  t.write("data/tokenizers/gamma/tokenizer.json.zst", "x");
  t.write("data/tokenizers/not-a-tokenizer/README", "x");
  t.write("bundled/tokenizers/delta/tokenizer.json");
  const std::vector<fs::path> roots{t.root() / "data", t.root() / "bundled"};
  auto missing = resolve_tokenizer("deepseek-v9", roots);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().source, "deepseek-v9");
  const std::string& msg = missing.error().message;
  EXPECT_NE(msg.find("available names: alpha, delta, gamma (under "), std::string::npos) << msg;
  EXPECT_EQ(msg.find("not-a-tokenizer"), std::string::npos) << msg;

  auto zipped = resolve_tokenizer("gamma", roots);
  ASSERT_FALSE(zipped.has_value());
  EXPECT_NE(zipped.error().message.find("only a zstd-compressed tokenizer JSON: unpack it"),
            std::string::npos)
      << zipped.error().message;
  // A compressed-only folder named directly says the same.
  auto zipped_dir = resolve_tokenizer((t.root() / "data/tokenizers/gamma").string(), roots);
  ASSERT_FALSE(zipped_dir.has_value());
  EXPECT_NE(zipped_dir.error().message.find("unpack it"), std::string::npos);
  // A folder without a tokenizer JSON is an error, not a name lookup.
  auto no_json = resolve_tokenizer((t.root() / "data").string(), roots);
  ASSERT_FALSE(no_json.has_value());
  EXPECT_NE(no_json.error().message.find("has no tokenizer.json"), std::string::npos);
  // Paths with '/' are never names; no roots: the message says how to use names.
  EXPECT_FALSE(resolve_tokenizer("x/alpha", roots).has_value());
  auto no_roots = resolve_tokenizer("alpha", std::vector<fs::path>{});
  ASSERT_FALSE(no_roots.has_value());
  EXPECT_NE(no_roots.error().message.find("set LLMBENCH_DATA"), std::string::npos);
  EXPECT_FALSE(resolve_tokenizer("", roots).has_value());
}

TEST(ResolveTokenizer, DefaultRootsFollowTheEnvironment) {
  Tree t;
  t.write("env/tokenizers/foo/tokenizer.json", "not json");
  ::setenv("LLMBENCH_DATA", (t.root() / "env").c_str(), 1);
  ::setenv("LLMBENCH_DATA_DIR", (t.root() / "bundled").c_str(), 1);
  const auto roots = default_data_roots();
  ASSERT_EQ(roots.size(), 2U);
  EXPECT_EQ(roots[0], t.root() / "env");
  EXPECT_EQ(roots[1], t.root() / "bundled");
  EXPECT_EQ(*resolve_tokenizer("foo"), t.root() / "env/tokenizers/foo/tokenizer.json");
  // Loading names the resolved file.
  auto bad = load_tokenizer("foo");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().source, "foo");
  EXPECT_NE(bad.error().message.find("cannot load '" +
                                     (t.root() / "env/tokenizers/foo/tokenizer.json").string()),
            std::string::npos)
      << bad.error().message;
  ::unsetenv("LLMBENCH_DATA");
  ::unsetenv("LLMBENCH_DATA_DIR");
}

TEST(ResolveTokenizer, SharedDataNames) {
  const fs::path root = testing::data_root();
  if (root.empty()) {
    LLMBENCH_SHARED_DATA_MISSING() << "../shared/data not found";
  }
  const std::vector<fs::path> roots{root.parent_path()};
  auto r = resolve_tokenizer("deepseek-v3", roots);
  if (fs::exists(root / "deepseek-v3" / "tokenizer.json")) {
    ASSERT_TRUE(r.has_value()) << r.error().what();
    EXPECT_EQ(*r, root / "deepseek-v3" / "tokenizer.json");
  } else {  // the shared copy is compressed: the error says so
    ASSERT_FALSE(r.has_value());
    EXPECT_NE(r.error().message.find("unpack it"), std::string::npos) << r.error().message;
  }
  auto unknown = resolve_tokenizer("deepseek-v9", roots);
  ASSERT_FALSE(unknown.has_value());
  EXPECT_NE(unknown.error().message.find("qwen3"), std::string::npos) << unknown.error().message;
}

}  // namespace
}  // namespace llmbench::tokenizer

#include "llmbench/core/file.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace llmbench {
namespace {

namespace fs = std::filesystem;

class ReadFile : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() /
           ("llmbench_file_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path write(const std::string& name, const std::string& content) const {
    const fs::path path = dir_ / name;
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }
  fs::path dir_;
};

TEST_F(ReadFile, ReturnsEveryByte) {
  std::string content = "line 1\r\nnul \0 byte\n";
  content.push_back('\0');
  content += std::string(200000, 'x');  // more than one read chunk
  const auto got = read_file(write("a.bin", content));
  ASSERT_TRUE(got) << got.error().what();
  EXPECT_EQ(*got, content);
  EXPECT_GE(got->capacity() - got->size(), kFileReadPadding);
}

TEST_F(ReadFile, EmptyFileIsEmptyString) {
  const auto got = read_file(write("empty", ""));
  ASSERT_TRUE(got);
  EXPECT_TRUE(got->empty());
}

TEST_F(ReadFile, ErrorsNameThePath) {
  const auto missing = read_file(dir_ / "missing.json");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().source, (dir_ / "missing.json").string());
  EXPECT_NE(missing.error().message.find("cannot open file"), std::string::npos);
  const auto folder = read_file(dir_);
  ASSERT_FALSE(folder);
  EXPECT_EQ(folder.error().message, "is a folder, not a file");
}

TEST_F(ReadFile, LimitIsInclusive) {
  const auto path = write("ten", "0123456789");
  EXPECT_TRUE(read_file(path, 10));
  const auto over = read_file(path, 9);
  ASSERT_FALSE(over);
  EXPECT_NE(over.error().message.find("larger than the limit of 9 bytes"), std::string::npos);
  EXPECT_EQ(over.error().source, path.string());
}

// A stream without a size (a character device that never ends) fails at the limit instead of
// growing until memory runs out.
TEST_F(ReadFile, EndlessStreamStopsAtTheLimit) {
  const auto got = read_file("/dev/zero", std::uint64_t{1} << 20);
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().source, "/dev/zero");
  EXPECT_NE(got.error().message.find("larger than the limit of 1048576 bytes"), std::string::npos);
}

TEST_F(ReadFile, ValueThrowsException) {
  EXPECT_THROW(static_cast<void>(read_file(dir_ / "nope").value()), Exception);
}

}  // namespace
}  // namespace llmbench

// Inputs that must end with a clear error naming the input (bad input, clear
// error): binary files given as text corpora, endless or huge files, absurd sizes.

#include "llmbench/core/error.hpp"
#include "llmbench/workload/dataset.hpp"
#include "llmbench/workload/detail/loaders.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"
#include <initializer_list>
#include <string>

namespace llmbench::workload {
namespace {

using testing::bundled_data_dir;
using testing::TempDir;

// The message of the `Exception` that `options` makes `load_samples` throw.
std::string load_error(const DatasetOptions& options) {
  try {
    static_cast<void>(load_samples(options));
  } catch (const Exception& e) {
    return e.what();
  }
  return "(no error)";
}

void expect_parts(const std::string& what, std::initializer_list<std::string> parts) {
  for (const auto& part : parts) {
    EXPECT_NE(what.find(part), std::string::npos) << "message: " << what << "\nmissing: " << part;
  }
}

DatasetOptions random_options(const std::string& corpus) {
  DatasetOptions options;
  options.kind = DatasetKind::Random;
  options.path = corpus;
  options.num_prompts = 4;
  options.random_input_len = 16;
  options.data_dir = bundled_data_dir();
  return options;
}

TEST(TextCorpus, BinaryFileIsRejectedWithItsOffset) {
  TempDir dir;
  // The start of an ELF executable: a NUL byte at offset 7.
  const std::string elf(
      "\x7F"
      "ELF\x02\x01\x01\x00\x00\x00\x00\x00",
      12);
  const auto path = dir.write("a.out", elf + std::string(64, 'x'));
  expect_parts(load_error(random_options(path)), {path, "not a text file: NUL byte", "byte 7"});
  // Latin-1 text (not UTF-8): the first byte above 0x7F.
  const auto latin1 = dir.write("latin1.txt", "caf\xE9 au lait and more words here");
  expect_parts(load_error(random_options(latin1)), {latin1, "invalid UTF-8 (byte 0xE9)", "byte 3"});
}

TEST(TextCorpus, TextFilesStillLoad) {
  TempDir dir;
  const auto path = dir.write("ok.txt",
                              "Stra\xC3\x9F"
                              "e und \xE4\xBD\xA0\xE5\xA5\xBD words "
                              "enough to cut prompts from again and again\n");
  const auto samples = load_samples(random_options(path));
  ASSERT_EQ(samples.size(), 4U);
  EXPECT_FALSE(samples[0].prompt.empty());
  EXPECT_NO_THROW(detail::check_text("plain\ttext\r\n", "t.txt"));
}

// `--dataset-path /dev/zero` read until memory ran out (std::bad_alloc); now every reader stops
// at the size limit with an error naming the file.
TEST(FileLimit, EndlessFileEndsWithAClearError) {
  for (const auto kind : {DatasetKind::Custom, DatasetKind::ShareGpt, DatasetKind::MtBench,
                          DatasetKind::Random, DatasetKind::Sonnet}) {
    DatasetOptions options = random_options("/dev/zero");
    options.kind = kind;
    options.max_file_bytes = std::uint64_t{1} << 20;
    expect_parts(load_error(options), {"/dev/zero", "larger than the limit of 1048576 bytes"});
  }
}

TEST(FileLimit, LargeRegularFileFailsBeforeItIsRead) {
  TempDir dir;
  DatasetOptions options;
  options.kind = DatasetKind::Custom;
  options.path = dir.write("big.jsonl", std::string(4096, ' '));
  options.max_file_bytes = 4095;
  expect_parts(load_error(options), {options.path, "larger than the limit of 4095 bytes"});
  options.max_file_bytes = 4096;  // the limit itself is allowed
  expect_parts(load_error(options), {options.path, "no usable prompts"});
}

TEST(AbsurdSizes, NumPromptsHasAnUpperBound) {
  DatasetOptions options;
  options.data_dir = bundled_data_dir();
  options.num_prompts = 100'000'000;
  expect_parts(load_error(options), {"--num-prompts", "1..10000000", "got 100000000"});
  options.num_prompts = kMaxNumPrompts + 1;
  expect_parts(load_error(options), {"--num-prompts"});
}

TEST(AbsurdSizes, RandomPromptTextMustFitInMemory) {
  DatasetOptions options = random_options("");
  options.path.clear();  // the bundled corpus
  options.num_prompts = 1000;
  options.random_input_len = 1'000'000'000;
  expect_parts(load_error(options), {"--random-input-len 1000000000", "GiB of prompt text"});
  options.random_text = false;  // lengths only (`simulate`): no text is held
  EXPECT_EQ(load_samples(options).size(), 1000U);
}

// Found by the `dataset` fuzz target: a number beyond double's range is valid JSON syntax that
// nlohmann rejects with out_of_range, which escaped the readers instead of naming the line.
TEST(JsonNumbers, NumberBeyondDoubleRangeNamesTheLine) {
  TempDir dir;
  DatasetOptions options;
  options.kind = DatasetKind::Custom;
  options.path =
      dir.write("c.jsonl", "{\"prompt\": \"a\"}\n{\"prompt\": \"b\", \"x\": 6e555555}\n");
  expect_parts(load_error(options), {options.path, "line 2", "not valid JSON", "number overflow"});
  options.kind = DatasetKind::MtBench;
  options.path = dir.write("q.jsonl", "{\"question_id\": 1e999, \"turns\": [\"t\"]}\n");
  expect_parts(load_error(options), {options.path, "line 1", "not valid JSON"});
  options.kind = DatasetKind::ShareGpt;
  options.path = dir.write("s.json", "[{\"id\": 1e999, \"conversations\": []}]");
  expect_parts(load_error(options), {options.path, "not valid JSON"});
}

}  // namespace
}  // namespace llmbench::workload

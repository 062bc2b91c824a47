#include "llmbench/metrics/record_file.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/metrics/record_io.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace llmbench::metrics {
namespace {

using ::testing::HasSubstr;

RequestRecord record(std::int64_t id) {
  RequestRecord r;
  r.id = id;
  r.scheduled_ns = r.slot_ns = r.sent_ns = 10 * id;
  r.done_ns = 10 * id + 5;
  r.http_status = 200;
  r.output_tokens = 2;
  r.chunks = {Chunk{.time_ns = 10 * id + 2, .tokens = 1, .bytes = 3},
              Chunk{.time_ns = 10 * id + 4, .tokens = 1, .bytes = 3}};
  return r;
}

TEST(RecordFileWriter, WritesEveryLineAndReadsThemBack) {
  std::string file;
  RecordFileWriter writer("memory", [&](const char* data, std::size_t n) {
    file.append(data, n / 2 + 1 > n ? n : n / 2 + 1);  // short writes: the rest is retried
    return static_cast<ssize_t>(n / 2 + 1 > n ? n : n / 2 + 1);
  });
  for (std::int64_t i = 0; i < 5; ++i) writer.append(record(i));
  EXPECT_TRUE(writer.flush());
  writer.append(record(5));
  EXPECT_TRUE(writer.flush());
  EXPECT_EQ(writer.written(), 6u);
  EXPECT_EQ(writer.lost(), 0u);
  const RecordFile back = parse_record_file(file, "memory");
  EXPECT_TRUE(back.warning.empty());
  ASSERT_EQ(back.records.size(), 6u);
  EXPECT_TRUE(back.records[5] == record(5));
}

TEST(RecordFileWriter, AFailedWriteIsCountedAndNothingIsWrittenAfterIt) {
  // A full disk once lost records silently. The writer takes 1.5 lines, then fails.
  std::string file;
  const std::size_t line = record_to_json_line(record(0)).size() + 1;
  std::size_t budget = line + line / 2;
  RecordFileWriter writer("full disk", [&](const char* data, std::size_t n) -> ssize_t {
    if (budget == 0) {
      errno = ENOSPC;
      return -1;
    }
    const std::size_t take = std::min(n, budget);
    file.append(data, take);
    budget -= take;
    return static_cast<ssize_t>(take);
  });
  writer.append(record(0));
  writer.append(record(1));
  writer.append(record(2));
  EXPECT_FALSE(writer.flush());
  EXPECT_EQ(writer.written(), 1u);
  EXPECT_EQ(writer.lost(), 2u);
  EXPECT_THAT(writer.error(), HasSubstr("No space left on device"));
  budget = 1'000'000;  // space again: still nothing more, a line after a torn one is unreadable
  writer.append(record(3));
  EXPECT_FALSE(writer.flush());
  EXPECT_EQ(writer.lost(), 3u);
  EXPECT_EQ(file.size(), line + line / 2);
  // The reader keeps the whole line and warns about the torn one.
  const RecordFile back = parse_record_file(file, "full disk");
  ASSERT_EQ(back.records.size(), 1u);
  EXPECT_THAT(back.warning, HasSubstr("line 2 is torn"));
}

TEST(RecordFileWriter, DevFullFailsOnTheFirstFlush) {
  if (!std::filesystem::exists("/dev/full")) {
    GTEST_SKIP() << "no /dev/full";
  }
  RecordFileWriter writer("/dev/full");
  writer.append(record(0));
  EXPECT_FALSE(writer.flush());
  EXPECT_EQ(writer.written(), 0u);
  EXPECT_EQ(writer.lost(), 1u);
  EXPECT_THAT(writer.error(), HasSubstr("No space left on device"));
}

TEST(RecordFileWriter, AnUnwritablePathIsNamed) {
  try {
    RecordFileWriter writer("/nonexistent-dir/x.records.jsonl");
    FAIL();
  } catch (const Exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("/nonexistent-dir/x.records.jsonl"));
  }
}

TEST(RecordFile, ABadLineBeforeTheLastIsAnErrorNamingTheLine) {
  const std::string text =
      record_to_json_line(record(0)) + "\n{\"id\":\"x\"}\n" + record_to_json_line(record(1)) + "\n";
  try {
    parse_record_file(text, "runs/a.records.jsonl");
    FAIL();
  } catch (const Exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("runs/a.records.jsonl"));
    EXPECT_THAT(e.what(), HasSubstr("line 2"));
    EXPECT_THAT(e.what(), HasSubstr("field 'id'"));
  }
  // A bad last line that ends in a newline was written whole: also an error, not a torn tail.
  EXPECT_THROW(parse_record_file(record_to_json_line(record(0)) + "\n{\"id\":\"x\"}\n", "f"),
               Exception);
}

TEST(RecordFile, UnknownChunkTokensOfOldFilesAreAssignedOnRead) {
  RequestRecord r = record(0);
  r.output_tokens = 5;
  r.chunks[0].tokens = -1;
  r.chunks[1].tokens = -1;
  r.chunks[1].bytes = 9;
  const RecordFile back = parse_record_file(record_to_json_line(r) + "\n\n", "old");
  ASSERT_EQ(back.records.size(), 1u);
  EXPECT_EQ(back.records[0].chunks[0].tokens, 2);  // 1 each, then 3 by bytes 3:9: 0.75, 2.25
  EXPECT_EQ(back.records[0].chunks[1].tokens, 3);  // the largest remainder to the first
}

TEST(RecordFile, ReadsAFileAndNamesAMissingOne) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("llmbench-record-file-" + std::to_string(::getpid()) + ".jsonl");
  {
    std::ofstream out(path);
    out << record_to_json_line(record(0)) << "\n" << record_to_json_line(record(1)).substr(0, 20);
  }
  const RecordFile file = read_record_file(path.string());
  EXPECT_EQ(file.records.size(), 1u);
  EXPECT_THAT(file.warning, HasSubstr("line 2 is torn"));
  std::filesystem::remove(path);
  EXPECT_THROW(read_record_file(path.string()), Exception);
}

}  // namespace
}  // namespace llmbench::metrics

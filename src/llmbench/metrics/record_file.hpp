#pragma once
/// @file
/// The per-request JSONL file (`<stem>.records.jsonl`, one `record_to_json_line` per line): a
/// writer that checks every write and counts what it could not write, and a reader that
/// tolerates the torn last line a killed run may leave (data safety).

#include "llmbench/core/error.hpp"
#include "llmbench/metrics/record.hpp"

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace llmbench::metrics {

/// Appends records to a JSONL file. `append` formats into a buffer; `flush` writes the buffer
/// with write(2), retrying short writes, so the lines of every flushed record are in the kernel
/// (a `kill -9` of the process loses none of them). On the first failed write (a full disk,
/// EIO) it logs a warning at once, and from then on writes nothing more: every record not
/// completely written is counted in `lost()`, and the file ends with whole lines except
/// possibly a torn last one. Not thread-safe: one thread appends and flushes.
class RecordFileWriter {
 public:
  /// Writes `n` bytes of `data`; returns the bytes written (may be fewer) or -1 with errno set,
  /// as write(2) does. Tests inject failures through it.
  using WriteFn = std::function<ssize_t(const char* data, std::size_t n)>;

  /// Creates or truncates `path` for writing; throws `Exception` naming the path on failure.
  explicit RecordFileWriter(const std::string& path);
  /// Writes through `write` instead of a file; `name` appears in messages.
  RecordFileWriter(std::string name, WriteFn write);
  ~RecordFileWriter();
  RecordFileWriter(const RecordFileWriter&) = delete;
  RecordFileWriter& operator=(const RecordFileWriter&) = delete;
  RecordFileWriter(RecordFileWriter&&) = delete;
  RecordFileWriter& operator=(RecordFileWriter&&) = delete;

  /// Formats `record` as one line for the next `flush` (or counts it lost after a failure).
  void append(const RequestRecord& record);
  /// Writes every appended line. Returns false when this or an earlier write failed.
  bool flush();

  /// Records whose line is completely in the file.
  [[nodiscard]] std::size_t written() const noexcept { return written_; }
  /// Records appended but not completely written (after a failed write).
  [[nodiscard]] std::size_t lost() const noexcept { return lost_; }
  /// The first write failure ("No space left on device"), empty while none happened.
  [[nodiscard]] const std::string& error() const noexcept { return error_; }
  /// The path or name given at construction.
  [[nodiscard]] const std::string& name() const noexcept { return name_; }

 private:
  std::string name_;
  WriteFn write_;
  int fd_ = -1;
  std::string buffer_;             // appended lines not yet written
  std::vector<std::size_t> ends_;  // end offset in buffer_ of each pending line
  std::size_t written_ = 0;
  std::size_t lost_ = 0;
  std::string error_;
};

/// Records read from a JSONL file, and what was wrong with it.
struct RecordFile {
  std::vector<RequestRecord> records;  ///< in file order, chunk tokens assigned
  /// A warning when the last line was torn (a killed writer), which was then skipped: names the
  /// file and line. Empty otherwise.
  std::string warning;
};

/// Parses the JSONL text `text` from `name`: one record per non-empty line, chunk tokens filled
/// by `assign_chunk_tokens` where a record (written by an older version) left them unknown. A
/// last line that does not parse and does not end in a newline is the torn tail of a killed
/// run: it is skipped with `warning` set. Any other bad line throws `Exception` naming `name`,
/// the line number and the field and offset `record_from_json_line` reported.
RecordFile parse_record_file(std::string_view text, const std::string& name);

/// `parse_record_file` of the file at `path` (also logs the warning); throws `Exception` naming
/// the path when it cannot be read.
RecordFile read_record_file(const std::string& path);

}  // namespace llmbench::metrics

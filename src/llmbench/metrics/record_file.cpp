#include "llmbench/metrics/record_file.hpp"

#include "llmbench/core/file.hpp"
#include "llmbench/core/log.hpp"
#include "llmbench/core/text.hpp"
#include "llmbench/metrics/record_io.hpp"

#include <fmt/core.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>
#include <utility>

namespace llmbench::metrics {

RecordFileWriter::RecordFileWriter(const std::string& path) : name_(path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    throw Exception(
        Error{fmt::format("cannot open for writing: {}", std::strerror(errno)), path, -1});
  }
  write_ = [fd = fd_](const char* data, std::size_t n) { return ::write(fd, data, n); };
}

RecordFileWriter::RecordFileWriter(std::string name, WriteFn write)
    : name_(std::move(name)), write_(std::move(write)) {}

RecordFileWriter::~RecordFileWriter() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

void RecordFileWriter::append(const RequestRecord& record) {
  if (!error_.empty()) {
    ++lost_;  // after a failure nothing more is written: a line after a torn one is unreadable
    return;
  }
  buffer_ += record_to_json_line(record);
  buffer_ += '\n';
  ends_.push_back(buffer_.size());
}

bool RecordFileWriter::flush() {
  std::size_t done = 0;
  while (error_.empty() && done < buffer_.size()) {
    const ssize_t n = write_(buffer_.data() + done, buffer_.size() - done);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      // n == 0 on a regular file means no progress is possible: treat it as a failure too.
      error_ = n < 0 ? std::strerror(errno) : "write made no progress";
    }
  }
  std::size_t complete = 0;
  while (complete < ends_.size() && ends_[complete] <= done) {
    ++complete;
  }
  written_ += complete;
  if (!error_.empty()) {
    lost_ += ends_.size() - complete;
    log::warn(
        "cannot write the per-request records to {}: {}; {} records lost so far, the rest are "
        "kept in memory for the summary and not written",
        name_, error_, lost_);
  }
  buffer_.clear();
  ends_.clear();
  return error_.empty();
}

RecordFile parse_record_file(std::string_view text, const std::string& name) {
  RecordFile out;
  std::size_t line_no = 0;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t newline = text.find('\n', at);
    const bool last = newline == std::string_view::npos;
    const std::string_view line = text.substr(at, last ? std::string_view::npos : newline - at);
    at = last ? text.size() : newline + 1;
    ++line_no;
    if (is_blank(line)) {
      continue;
    }
    auto record = record_from_json_line(line);
    if (record.has_value()) {
      assign_chunk_tokens(*record);
      out.records.push_back(std::move(*record));
      continue;
    }
    if (last) {
      // A writer killed mid-line leaves a last line without its newline.
      out.warning = fmt::format(
          "{}: line {} is torn (the writer was stopped mid-line?): "
          "skipped; {} records read",
          name, line_no, out.records.size());
      break;
    }
    throw Exception(Error{fmt::format("line {}: {}", line_no, record.error().what()), name, -1});
  }
  return out;
}

RecordFile read_record_file(const std::string& path) {
  // The one file reader (core/file.hpp): a missing, unreadable or oversized file throws naming it.
  RecordFile file = parse_record_file(read_file(path).value(), path);
  if (!file.warning.empty()) {
    log::warn("{}", file.warning);
  }
  return file;
}

}  // namespace llmbench::metrics

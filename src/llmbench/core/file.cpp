#include "llmbench/core/file.hpp"

#include <fmt/core.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <system_error>
#include <vector>

namespace llmbench {
namespace {

constexpr std::size_t kChunkBytes = std::size_t{1} << 16;

struct FileCloser {
  void operator()(std::FILE* file) const noexcept { static_cast<void>(std::fclose(file)); }
};

Error too_large(const std::filesystem::path& path, std::uint64_t max_bytes) {
  return Error{fmt::format("file is larger than the limit of {} bytes ({:.1f} MiB)", max_bytes,
                           static_cast<double>(max_bytes) / (1024.0 * 1024.0)),
               path.string(), -1};
}

}  // namespace

Result<std::string> read_file(const std::filesystem::path& path, std::uint64_t max_bytes) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (std::filesystem::is_directory(status)) {
    return Error{"is a folder, not a file", path.string(), -1};
  }
  std::uint64_t expected = 0;
  if (std::filesystem::is_regular_file(status)) {
    expected = std::filesystem::file_size(path, ec);
    if (!ec && expected > max_bytes) {
      return too_large(path, max_bytes);
    }
  }
  errno = 0;
  const std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file) {
    return Error{fmt::format("cannot open file: {}", std::strerror(errno)), path.string(), -1};
  }
  // A regular file is read in one call into storage of its size (plus the padding), so a large
  // dataset is not copied while it grows; what follows (a file that grew, or a stream) is read in
  // chunks and checked against the limit as it comes.
  std::string out;
  out.reserve(static_cast<std::size_t>(expected) + kFileReadPadding);
  out.resize(static_cast<std::size_t>(expected));
  const std::size_t first = std::fread(out.data(), 1, out.size(), file.get());
  out.resize(first);
  if (first == expected) {
    std::vector<char> chunk(kChunkBytes);
    for (;;) {
      const std::size_t got = std::fread(chunk.data(), 1, chunk.size(), file.get());
      if (got == 0) {
        break;
      }
      if (got > max_bytes - out.size()) {
        return too_large(path, max_bytes);
      }
      out.append(chunk.data(), got);
    }
  }
  if (std::ferror(file.get()) != 0) {
    return Error{fmt::format("read error: {}", std::strerror(errno)), path.string(), -1};
  }
  return Result<std::string>(boost::system::in_place_value, std::move(out));
}

}  // namespace llmbench

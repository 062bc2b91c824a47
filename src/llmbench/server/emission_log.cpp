#include "llmbench/server/emission_log.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/log.hpp"
#include "llmbench/server/openai_format.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <iterator>

namespace llmbench::server {

EmissionLog::EmissionLog(const std::string& path) {
  file_ = std::fopen(path.c_str(), "ae");
  if (file_ == nullptr) {
    throw Exception(Error{
        "cannot open emission log for appending: " + std::string(std::strerror(errno)), path, -1});
  }
}

EmissionLog::~EmissionLog() {
  if (file_ != nullptr)
    std::fclose(file_);
}

void EmissionLog::append(std::string_view request_id, std::string_view id, TimeNs arrival_ns,
                         TimeNs admit_ns, const std::vector<Emission>& chunks) {
  std::string line;
  line.reserve(96 + chunks.size() * 28 + request_id.size());
  line += "{\"request_id\":";
  append_json_string(line, request_id);
  line += ",\"id\":";
  append_json_string(line, id);
  fmt::format_to(std::back_inserter(line), ",\"arrival_ns\":{},\"admit_ns\":{},\"chunks\":[",
                 arrival_ns, admit_ns);
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    fmt::format_to(std::back_inserter(line), "{}[{},{}]", i == 0 ? "" : ",", chunks[i].first,
                   chunks[i].second);
  }
  line += "]}\n";
  std::lock_guard lock(mu_);
  const bool ok =
      std::fwrite(line.data(), 1, line.size(), file_) == line.size() && std::fflush(file_) == 0;
  if (!ok && !reported_error_) {
    reported_error_ = true;
    log::error("emission log: write failed: {}", std::strerror(errno));
  }
}

void EmissionLog::flush() {
  std::lock_guard lock(mu_);
  std::fflush(file_);
}

}  // namespace llmbench::server

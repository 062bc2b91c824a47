#include "llmbench/report/history.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/metrics/catalog.hpp"

#include <fmt/core.h>

#include <cmath>
#include <set>
#include <sqlite3.h>
#include <string_view>
#include <utility>

namespace llmbench::report {

namespace {

using nlohmann::json;

constexpr const char* kSchema =
    "CREATE TABLE IF NOT EXISTS runs(id INTEGER PRIMARY KEY, kind TEXT, time_utc TEXT, "
    "label TEXT, model TEXT, backend TEXT, host TEXT, tool_version TEXT, git_sha TEXT, "
    "results_path TEXT, records_path TEXT, config TEXT, summary TEXT);"
    "CREATE TABLE IF NOT EXISTS metrics(run_id INTEGER REFERENCES runs(id), name TEXT, "
    "value REAL);"
    "CREATE INDEX IF NOT EXISTS metrics_by_name ON metrics(name, run_id);";

constexpr const char* kColumns =
    "id, kind, time_utc, label, model, backend, host, tool_version, git_sha, results_path, "
    "records_path, config, summary";

/// A prepared statement, finalized on scope exit.
class Statement {
 public:
  Statement(sqlite3* db, const std::string& sql, const std::string& path) : path_(path) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK)
      throw Exception(Error{std::string("SQLite: ") + sqlite3_errmsg(db), path_, -1});
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement(Statement&&) = delete;
  Statement& operator=(Statement&&) = delete;

  void bind(int i, const std::string& text) {
    sqlite3_bind_text(stmt_, i, text.c_str(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  }
  void bind(int i, std::int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  void bind(int i, double v) { sqlite3_bind_double(stmt_, i, v); }
  /// Steps once: true while a row is available; throws on an error.
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW)
      return true;
    if (rc == SQLITE_DONE)
      return false;
    throw Exception(
        Error{std::string("SQLite: ") + sqlite3_errmsg(sqlite3_db_handle(stmt_)), path_, -1});
  }
  [[nodiscard]] std::string text(int col) const {
    const auto* p = sqlite3_column_text(stmt_, col);
    return p == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(p));
  }
  [[nodiscard]] std::int64_t integer(int col) const { return sqlite3_column_int64(stmt_, col); }

 private:
  std::string path_;
  sqlite3_stmt* stmt_ = nullptr;
};

HistoryEntry entry_of(const Statement& s) {
  const auto parse = [](const std::string& text) {
    json j = json::parse(text, nullptr, false);
    return j.is_discarded() ? json::object() : j;
  };
  return HistoryEntry{.id = s.integer(0),
                      .kind = s.text(1),
                      .time_utc = s.text(2),
                      .label = s.text(3),
                      .model = s.text(4),
                      .backend = s.text(5),
                      .host = s.text(6),
                      .tool_version = s.text(7),
                      .git_sha = s.text(8),
                      .results_path = s.text(9),
                      .records_path = s.text(10),
                      .config = parse(s.text(11)),
                      .summary = parse(s.text(12))};
}

bool kept_key(std::string_view key) {
  const auto starts = [&](std::string_view p) { return key.substr(0, p.size()) == p; };
  const bool ms = key.size() > 3 && key.substr(key.size() - 3) == "_ms";
  if (ms && (starts("mean_") || starts("median_") || starts("std_") || starts("p")))
    return true;
  for (const std::string_view k :
       {"request_throughput", "output_throughput", "total_token_throughput", "request_goodput",
        "completed", "failed", "duration"}) {
    if (key == k)
      return true;
  }
  return false;
}

}  // namespace

json summary_numbers(const json& results) {
  json out = json::object();
  for (const auto& [key, value] : results.items()) {
    if (value.is_number() && std::isfinite(value.get<double>()) && kept_key(key))
      out[key] = value;
  }
  const double completed = results.value("completed", 0.0);
  const double failed = results.value("failed", 0.0);
  if (completed + failed > 0)
    out["error_rate"] = failed / (completed + failed);
  return out;
}

std::vector<std::string> summary_keys(const std::vector<HistoryEntry>& entries) {
  std::set<std::string> keys;
  for (const auto& e : entries) {
    for (const auto& [key, value] : e.summary.items()) keys.insert(key);
  }
  return {keys.begin(), keys.end()};
}

std::vector<std::string> summary_regressions(const json& base, const json& run, double min_change,
                                             RegressionScope scope) {
  const auto number = [](const json& j, const std::string& key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_number() ? it->get<double>() : std::nan("");
  };
  std::vector<std::string> out;
  if (scope == RegressionScope::Everything) {
    for (const auto& m : metrics::kLatencyMetrics) {
      if (!m.tail_interval)  // the four per-request latencies of vLLM's table
        continue;
      const std::string key = metrics::latency_key("mean", m.key);
      const double a = number(base, key);
      const double b = number(run, key);
      if (a > 0 && (b - a) / a > 2 * min_change)
        out.push_back(fmt::format("{} {:+.1f}%", key, (b - a) / a * 100));
    }
    const double e = number(run, "error_rate") - number(base, "error_rate");
    if (e >= 0.001)
      out.push_back(fmt::format("error_rate {:+.2f} points", e * 100));
  }
  for (const char* key : {"output_throughput", "request_throughput", "request_goodput"}) {
    const double a = number(base, key);
    const double b = number(run, key);
    if (a > 0 && (a - b) / a > 2 * min_change)
      out.push_back(fmt::format("{} {:+.1f}%", key, (b - a) / a * 100));
  }
  return out;
}

History::History(const std::string& path) : path_(path) {
  if (sqlite3_open(path.c_str(), &db_) != SQLITE_OK) {
    const std::string why = db_ != nullptr ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw Exception(Error{"cannot open the history database: " + why, path, -1});
  }
  sqlite3_busy_timeout(db_, 5000);
  char* message = nullptr;
  if (sqlite3_exec(db_, kSchema, nullptr, nullptr, &message) != SQLITE_OK) {
    const std::string why = message != nullptr ? message : "unknown error";
    sqlite3_free(message);
    sqlite3_close(db_);
    throw Exception(Error{"not a usable history database: " + why, path, -1});
  }
}

History::~History() {
  sqlite3_close(db_);
}

std::int64_t History::add(const HistoryEntry& e) {
  sqlite3_exec(db_, "BEGIN", nullptr, nullptr, nullptr);
  Statement insert(
      db_, fmt::format("INSERT INTO runs({}) VALUES(NULL,?,?,?,?,?,?,?,?,?,?,?,?)", kColumns),
      path_);
  int i = 1;
  for (const std::string* v : {&e.kind, &e.time_utc, &e.label, &e.model, &e.backend, &e.host,
                               &e.tool_version, &e.git_sha, &e.results_path, &e.records_path}) {
    insert.bind(i++, *v);
  }
  insert.bind(i++, e.config.dump());
  insert.bind(i, e.summary.dump());
  insert.step();
  const std::int64_t id = sqlite3_last_insert_rowid(db_);
  for (const auto& [name, value] : e.summary.items()) {
    if (!value.is_number())
      continue;
    Statement m(db_, "INSERT INTO metrics(run_id, name, value) VALUES(?,?,?)", path_);
    m.bind(1, id);
    m.bind(2, name);
    m.bind(3, value.get<double>());
    m.step();
  }
  if (sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK)
    throw Exception(Error{std::string("SQLite: ") + sqlite3_errmsg(db_), path_, -1});
  return id;
}

std::vector<HistoryEntry> History::list(const HistoryFilter& f) const {
  std::string sql = fmt::format("SELECT {} FROM runs WHERE 1", kColumns);
  std::vector<std::string> args;
  const auto where = [&](const std::string& value, const char* clause) {
    if (!value.empty()) {
      sql += clause;
      args.push_back(value);
    }
  };
  where(f.label, " AND label = ?");
  where(f.model, " AND model = ?");
  where(f.since, " AND time_utc >= ?");
  where(f.until, " AND time_utc < ?");
  sql += " ORDER BY time_utc, id";
  Statement s(db_, sql, path_);
  for (std::size_t i = 0; i < args.size(); ++i) s.bind(static_cast<int>(i + 1), args[i]);
  std::vector<HistoryEntry> out;
  while (s.step()) out.push_back(entry_of(s));
  return out;
}

std::optional<HistoryEntry> History::get(std::int64_t id) const {
  Statement s(db_, fmt::format("SELECT {} FROM runs WHERE id = ?", kColumns), path_);
  s.bind(1, id);
  if (!s.step())
    return std::nullopt;
  return entry_of(s);
}

}  // namespace llmbench::report

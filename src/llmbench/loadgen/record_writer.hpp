#pragma once
/// @file
/// The run's one writer thread for finished records (records off the event loop). A
/// worker hands a finished record over with `push` (a copy under a short lock, no formatting,
/// no I/O); the thread gives the records to a `RecordSink` in batches and flushes it at least
/// every `kRecordFlushInterval`, so a `kill -9` loses only the records of the last interval.

#include "llmbench/loadgen/loadgen.hpp"
#include "llmbench/metrics/record.hpp"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace llmbench::loadgen {

/// Feeds `sink` from one thread. `push` may be called from any thread; `finish` from the owner.
class RecordWriterThread {
 public:
  /// Starts the thread when `sink` has a `write` or a `flush` (else `push` does nothing).
  /// `sink` must outlive this object. `interval` is the longest a pushed record waits.
  explicit RecordWriterThread(const RecordSink& sink,
                              std::chrono::milliseconds interval = kRecordFlushInterval);
  /// Calls `finish`.
  ~RecordWriterThread();
  RecordWriterThread(const RecordWriterThread&) = delete;
  RecordWriterThread& operator=(const RecordWriterThread&) = delete;
  RecordWriterThread(RecordWriterThread&&) = delete;
  RecordWriterThread& operator=(RecordWriterThread&&) = delete;

  /// Queues a copy of `record` for the sink. Thread-safe; never blocks on I/O.
  void push(const metrics::RequestRecord& record);
  /// Writes what is queued, flushes once more and joins the thread. Records pushed after it are
  /// dropped. Idempotent.
  void finish();

 private:
  void loop();

  const RecordSink& sink_;
  std::chrono::milliseconds interval_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<metrics::RequestRecord> queue_;  // guarded by mutex_
  bool done_ = false;                          // guarded by mutex_
  std::thread thread_;
};

}  // namespace llmbench::loadgen

#include "llmbench/loadgen/record_writer.hpp"

#include "llmbench/core/thread_name.hpp"

#include <utility>

namespace llmbench::loadgen {

RecordWriterThread::RecordWriterThread(const RecordSink& sink, std::chrono::milliseconds interval)
    : sink_(sink), interval_(interval) {
  if (sink_.write || sink_.flush) {
    thread_ = std::thread([this] {
      set_thread_name("llmb-records");
      loop();
    });
  }
}

RecordWriterThread::~RecordWriterThread() {
  finish();
}

void RecordWriterThread::push(const metrics::RequestRecord& record) {
  if (!thread_.joinable()) {
    return;
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  if (!done_) {
    queue_.push_back(record);
  }
}

void RecordWriterThread::finish() {
  if (!thread_.joinable()) {
    return;
  }
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void RecordWriterThread::loop() {
  std::vector<metrics::RequestRecord> batch;
  for (bool done = false; !done;) {
    {
      // Wakes on the interval, not on every push: records are written in batches, one flush
      // (one write(2) for a file) per interval rather than per record.
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait_for(lock, interval_, [this] { return done_; });
      batch.swap(queue_);
      done = done_;
    }
    if (sink_.write) {
      for (const auto& record : batch) sink_.write(record);
    }
    if (sink_.flush && (!batch.empty() || done)) {
      sink_.flush();
    }
    batch.clear();
  }
}

}  // namespace llmbench::loadgen

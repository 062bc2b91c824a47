#include "llmbench/loadgen/record_writer.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace llmbench::loadgen {
namespace {

using metrics::RequestRecord;

RequestRecord record(std::int64_t id) {
  RequestRecord r;
  r.id = id;
  r.chunks = {metrics::Chunk{.time_ns = id, .tokens = 1}};
  return r;
}

TEST(RecordWriterThread, EveryRecordPushedFromManyThreadsReachesTheSinkOnItsOwnThread) {
  std::mutex mutex;
  std::vector<std::int64_t> ids;
  std::set<std::thread::id> sink_threads;
  std::atomic<int> flushes{0};
  const RecordSink sink{.write =
                            [&](const RequestRecord& r) {
                              const std::lock_guard<std::mutex> lock(mutex);
                              ids.push_back(r.id);
                              sink_threads.insert(std::this_thread::get_id());
                            },
                        .flush = [&] { flushes.fetch_add(1); }};
  RecordWriterThread writer(sink, std::chrono::milliseconds(5));
  std::vector<std::thread> workers;
  for (int t = 0; t < 4; ++t) {
    workers.emplace_back([&writer, t] {
      for (int i = 0; i < 250; ++i) writer.push(record(t * 1000 + i));
    });
  }
  for (auto& w : workers) w.join();
  writer.finish();
  writer.push(record(99'999));  // after finish: dropped
  EXPECT_EQ(ids.size(), 1000u);
  EXPECT_EQ(std::set<std::int64_t>(ids.begin(), ids.end()).size(), 1000u);
  ASSERT_EQ(sink_threads.size(), 1u);
  EXPECT_NE(*sink_threads.begin(), std::this_thread::get_id());
  EXPECT_GE(flushes.load(), 1);
  // The records of one worker arrive in the order it pushed them.
  std::int64_t last = -1;
  for (const auto id : ids) {
    if (id / 1000 == 2) {
      EXPECT_GT(id, last);
      last = id;
    }
  }
}

TEST(RecordWriterThread, FlushesWhileTheRunGoesNotOnlyAtTheEnd) {
  std::atomic<int> written{0};
  std::atomic<int> flushed_after_write{0};
  const RecordSink sink{.write = [&](const RequestRecord&) { written.fetch_add(1); },
                        .flush =
                            [&] {
                              if (written.load() > 0)
                                flushed_after_write.fetch_add(1);
                            }};
  RecordWriterThread writer(sink, std::chrono::milliseconds(5));
  writer.push(record(1));
  // Without finish(): the writer flushes by itself (a kill -9 would keep this record).
  for (int i = 0; i < 2000 && flushed_after_write.load() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(written.load(), 1);
  EXPECT_GE(flushed_after_write.load(), 1);
}

}  // namespace
}  // namespace llmbench::loadgen

// A fake NCCL for the tests (libfake_nccl.so; libfake_nccl_no_send.so, built with
// LLMBENCH_FAKE_NCCL_NO_SEND, lacks ncclSend as an NCCL older than 2.7 does). It exports the
// functions `llmbench probe comm` resolves (src/llmbench/telemetry/detail/nccl_abi.hpp, after
// nccl.h) and holds the probe to NCCL's contract instead of moving data:
// - one thread driving several communicators must put its calls inside ncclGroupStart/End (else
//   real NCCL deadlocks: here ncclInvalidUsage);
// - at ncclGroupEnd every rank of the communicator set takes part in each collective exactly
//   once with the same count and type, and every ncclSend has its ncclRecv (same count and type,
//   from the right peer), else ncclInvalidUsage;
// - every buffer lies inside one allocation of the communicator's device, and the stream belongs
//   to that device (checked through the fake CUDA runtime, fake_cudart.cpp), else
//   ncclInvalidArgument; a data type unknown to the NCCL version reported is ncclInvalidArgument.
// A group that passes advances the virtual clock of every participating stream to
// max(clocks) + the scripted time of its operation, so the probe's CUDA events time it exactly.
//
// Environment, read at every ncclGetVersion (the probe calls it once, when it opens):
//   LLMBENCH_FAKE_NCCL_VERSION  ncclGetVersion's code (default 22403 = 2.24.3)
//   LLMBENCH_FAKE_NCCL_SCRIPT   a file of timing lines, the first that matches wins:
//     COLLECTIVE GPUS LATENCY_US GBPS [MAX_BYTES]   time = LATENCY_US + S / (GBPS·1e3) µs for a
//                                                  call of nccl-tests size S ≤ MAX_BYTES
//                                                  (COLLECTIVE and GPUS may be "*")
//     spike COLLECTIVE EVERY FACTOR                the EVERY-th, 2·EVERY-th, … call of that
//                                                  collective at one size and GPU count (warm-up
//                                                  included) takes FACTOR times as long
//     fail COLLECTIVE BYTES                        the first such call at that size fails at
//                                                  ncclGroupEnd with ncclInternalError
//   (default, no script: "* * 10 100"). An all-to-all is recognised as a group in which every
//   rank sends to and receives from every rank; S is then one rank's send bytes.
// Test hooks: llmbench_fake_nccl_live() counts live communicators; llmbench_fake_nccl_nvls()
// gives NCCL_NVLS_ENABLE as seen at the last ncclCommInitAll ("<unset>" when unset).

#include "fake_comm_state.hpp"
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#define FAKE_API extern "C" __attribute__((visibility("default")))

namespace {

using llmbench_fake::FakeStream;

constexpr int kSuccess = 0;
constexpr int kInternalError = 3;
constexpr int kInvalidArgument = 4;
constexpr int kInvalidUsage = 5;

struct Clique;
struct FakeComm {
  int rank = 0;
  int nranks = 0;
  int device = 0;
  Clique* clique = nullptr;
};
struct Clique {
  std::vector<FakeComm*> comms;
};

enum class Kind { AllReduce, AllGather, ReduceScatter, Send, Recv };

struct Op {
  Kind kind = Kind::AllReduce;
  FakeComm* comm = nullptr;
  FakeStream* stream = nullptr;
  std::size_t count = 0;
  int type = 0;
  int peer = -1;
};

struct Rule {
  std::string collective;  // "*" = any
  int gpus = 0;            // 0 = any
  double latency_us = 10;
  double gb_s = 100;
  std::int64_t max_bytes = -1;  // -1 = no limit
};

struct Spike {
  std::string collective;
  int every = 0;
  double factor = 1;
};

struct State {
  bool loaded = false;
  int version = 22403;
  std::vector<Rule> rules;
  std::vector<Spike> spikes;
  std::vector<std::pair<std::string, std::int64_t>> fails;
  std::map<std::tuple<std::string, int, std::int64_t>, int> calls;
  int depth = 0;
  std::vector<Op> pending;
  std::set<FakeComm*> live;
  std::string nvls = "<unset>";
};

State& st() {
  static State s;
  return s;
}

/// (Re)reads the environment and the script: at every ncclGetVersion, which the probe calls once
/// when it opens, so each probe of a test process starts from its own script and call counts.
void load() {
  State& s = st();
  s.loaded = true;
  s.version = 22403;
  s.rules.clear();
  s.spikes.clear();
  s.fails.clear();
  s.calls.clear();
  if (const char* v = std::getenv("LLMBENCH_FAKE_NCCL_VERSION"))
    s.version = std::atoi(v);
  if (const char* path = std::getenv("LLMBENCH_FAKE_NCCL_SCRIPT")) {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream ls(line);
      std::string first;
      if (!(ls >> first) || first[0] == '#')
        continue;
      if (first == "spike") {
        Spike sp;
        ls >> sp.collective >> sp.every >> sp.factor;
        s.spikes.push_back(sp);
      } else if (first == "fail") {
        std::pair<std::string, std::int64_t> f;
        ls >> f.first >> f.second;
        s.fails.push_back(f);
      } else {
        Rule r;
        r.collective = first;
        std::string gpus;
        ls >> gpus >> r.latency_us >> r.gb_s;
        r.gpus = gpus == "*" ? 0 : std::atoi(gpus.c_str());
        if (!(ls >> r.max_bytes))
          r.max_bytes = -1;
        s.rules.push_back(r);
      }
    }
  }
  if (s.rules.empty())
    s.rules.push_back(Rule{"*", 0, 10, 100, -1});
}

int type_bytes(int type) {
  switch (type) {
    case 0:
    case 1:
      return 1;
    case 6:
    case 9:
      return 2;
    case 10:
    case 11:
      return st().version >= 22400 ? 1 : 0;
    case 2:
    case 3:
    case 7:
      return 4;
    case 4:
    case 5:
    case 8:
      return 8;
    default:
      return 0;
  }
}

/// Checks an operation's arguments; queues it. `send`/`recv` bytes per buffer.
int enqueue(Op op, const void* send, std::size_t send_bytes, void* recv, std::size_t recv_bytes) {
  if (op.comm == nullptr || op.stream == nullptr || op.stream->magic != llmbench_fake::kStreamMagic)
    return kInvalidArgument;
  if (type_bytes(op.type) == 0 || op.stream->device != op.comm->device)
    return kInvalidArgument;
  if ((send != nullptr && llmbench_fake_cuda_check(send, send_bytes, op.comm->device) != 0) ||
      (recv != nullptr && llmbench_fake_cuda_check(recv, recv_bytes, op.comm->device) != 0))
    return kInvalidArgument;
  if (st().depth == 0 && op.comm->nranks > 1)
    return kInvalidUsage;  // one thread, several GPUs, no group: real NCCL would hang here
  st().pending.push_back(op);
  return kSuccess;
}

double scripted_us(const std::string& collective, int gpus, std::int64_t bytes) {
  State& s = st();
  double us = -1;
  for (const Rule& r : s.rules) {
    if ((r.collective == "*" || r.collective == collective) && (r.gpus == 0 || r.gpus == gpus) &&
        (r.max_bytes < 0 || bytes <= r.max_bytes)) {
      us = r.latency_us + static_cast<double>(bytes) / (r.gb_s * 1e3);
      break;
    }
  }
  if (us < 0)
    us = 10 + static_cast<double>(bytes) / 1e5;
  const int call = ++s.calls[{collective, gpus, bytes}];
  for (const Spike& sp : s.spikes) {
    if (sp.collective == collective && sp.every > 0 && call % sp.every == 0)
      us *= sp.factor;
  }
  return us;
}

bool fails(const std::string& collective, std::int64_t bytes) {
  auto& f = st().fails;
  const auto it = std::find(f.begin(), f.end(), std::make_pair(collective, bytes));
  if (it == f.end())
    return false;
  f.erase(it);
  return true;
}

/// Runs one collective kind's ops (one per rank of the clique, all alike); returns its S.
int run_collective(const std::vector<Op>& ops, Kind kind, double& us) {
  const Clique* clique = ops.front().comm->clique;
  const int n = static_cast<int>(clique->comms.size());
  std::set<int> ranks;
  for (const Op& o : ops) {
    if (o.comm->clique != clique || o.count != ops.front().count || o.type != ops.front().type ||
        !ranks.insert(o.comm->rank).second)
      return kInvalidUsage;
  }
  if (static_cast<int>(ranks.size()) != n)
    return kInvalidUsage;
  const auto e = static_cast<std::int64_t>(type_bytes(ops.front().type));
  const auto count = static_cast<std::int64_t>(ops.front().count);
  const std::int64_t bytes = kind == Kind::AllReduce ? count * e : count * e * n;
  const std::string name = kind == Kind::AllReduce   ? "all_reduce"
                           : kind == Kind::AllGather ? "all_gather"
                                                     : "reduce_scatter";
  if (fails(name, bytes))
    return kInternalError;
  us += scripted_us(name, n, bytes);
  return kSuccess;
}

/// Matches the group's sends and receives; an all-to-all when every rank sends to every rank.
int run_p2p(const std::vector<Op>& sends, const std::vector<Op>& recvs, double& us) {
  std::multiset<std::tuple<FakeComm*, int, std::size_t, int>> open;
  for (const Op& r : recvs) open.insert({r.comm, r.peer, r.count, r.type});
  const Clique* clique = sends.empty() ? nullptr : sends.front().comm->clique;
  for (const Op& s : sends) {
    if (s.peer < 0 || s.comm->clique != clique || s.peer >= static_cast<int>(clique->comms.size()))
      return kInvalidArgument;
    FakeComm* to = clique->comms[static_cast<std::size_t>(s.peer)];
    const auto it = open.find({to, s.comm->rank, s.count, s.type});
    if (it == open.end())
      return kInvalidUsage;
    open.erase(it);
  }
  if (!open.empty())
    return kInvalidUsage;
  if (sends.empty())
    return kSuccess;
  const int n = static_cast<int>(clique->comms.size());
  std::int64_t rank0 = 0;
  std::set<std::pair<int, int>> pairs;
  for (const Op& s : sends) {
    pairs.insert({s.comm->rank, s.peer});
    if (s.comm->rank == 0)
      rank0 += static_cast<std::int64_t>(s.count) * type_bytes(s.type);
  }
  const std::string name = static_cast<int>(pairs.size()) == n * n ? "all_to_all" : "send_recv";
  if (fails(name, rank0))
    return kInternalError;
  us += scripted_us(name, n, rank0);
  return kSuccess;
}

int execute(std::vector<Op> ops) {
  if (ops.empty())
    return kSuccess;
  double us = 0;
  std::vector<Op> sends;
  std::vector<Op> recvs;
  for (const Kind k : {Kind::AllReduce, Kind::AllGather, Kind::ReduceScatter}) {
    std::vector<Op> of_kind;
    for (const Op& o : ops) {
      if (o.kind == k)
        of_kind.push_back(o);
    }
    if (!of_kind.empty()) {
      if (const int rc = run_collective(of_kind, k, us); rc != kSuccess)
        return rc;
    }
  }
  for (const Op& o : ops) {
    if (o.kind == Kind::Send)
      sends.push_back(o);
    if (o.kind == Kind::Recv)
      recvs.push_back(o);
  }
  if (const int rc = run_p2p(sends, recvs, us); rc != kSuccess)
    return rc;
  double start = 0;
  for (const Op& o : ops) start = std::max(start, o.stream->clock_us);
  for (const Op& o : ops) o.stream->clock_us = start + us;
  return kSuccess;
}

}  // namespace

FAKE_API int ncclGetVersion(int* version) {
  load();
  *version = st().version;
  return kSuccess;
}

FAKE_API const char* ncclGetErrorString(int result) {
  switch (result) {
    case kSuccess:
      return "no error";
    case kInternalError:
      return "internal error - please report this issue to the NCCL developers";
    case kInvalidArgument:
      return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case kInvalidUsage:
      return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    default:
      return "unknown result code";
  }
}

FAKE_API int ncclCommInitAll(void** comms, int ndev, const int* devlist) {
  if (!st().loaded)
    load();
  const char* nvls = std::getenv("NCCL_NVLS_ENABLE");
  st().nvls = nvls != nullptr ? nvls : "<unset>";
  std::set<int> seen;
  for (int i = 0; i < ndev; ++i) {
    if (devlist[i] < 0 || devlist[i] >= llmbench_fake_cuda_device_count() ||
        !seen.insert(devlist[i]).second)
      return kInvalidArgument;
  }
  auto* clique = new Clique();
  for (int i = 0; i < ndev; ++i) {
    auto* c = new FakeComm{.rank = i, .nranks = ndev, .device = devlist[i], .clique = clique};
    clique->comms.push_back(c);
    st().live.insert(c);
    comms[i] = c;  // NOLINT: the caller's array of ndev handles
  }
  return kSuccess;
}

namespace {

int release(FakeComm* comm) {
  if (st().live.erase(comm) == 0)
    return kInvalidArgument;
  Clique* clique = comm->clique;
  std::erase(clique->comms, comm);
  delete comm;
  if (clique->comms.empty())
    delete clique;
  return kSuccess;
}

}  // namespace

FAKE_API int ncclCommDestroy(void* comm) {
  return release(static_cast<FakeComm*>(comm));
}

FAKE_API int ncclCommAbort(void* comm) {
  return release(static_cast<FakeComm*>(comm));
}

FAKE_API int ncclGroupStart() {
  ++st().depth;
  return kSuccess;
}

FAKE_API int ncclGroupEnd() {
  State& s = st();
  if (s.depth == 0)
    return kInvalidUsage;
  if (--s.depth > 0)
    return kSuccess;
  std::vector<Op> ops;
  ops.swap(s.pending);
  return execute(std::move(ops));
}

FAKE_API int ncclAllReduce(const void* send, void* recv, std::size_t count, int type, int op,
                           void* comm_handle, FakeStream* stream) {
  auto* comm = static_cast<FakeComm*>(comm_handle);
  if (op < 0 || op > 4)
    return kInvalidArgument;
  const std::size_t bytes = count * static_cast<std::size_t>(type_bytes(type));
  return enqueue(Op{Kind::AllReduce, comm, stream, count, type, -1}, send, bytes, recv, bytes);
}

FAKE_API int ncclAllGather(const void* send, void* recv, std::size_t count, int type,
                           void* comm_handle, FakeStream* stream) {
  auto* comm = static_cast<FakeComm*>(comm_handle);
  const std::size_t bytes = count * static_cast<std::size_t>(type_bytes(type));
  const std::size_t n = comm != nullptr ? static_cast<std::size_t>(comm->nranks) : 0;
  return enqueue(Op{Kind::AllGather, comm, stream, count, type, -1}, send, bytes, recv, bytes * n);
}

FAKE_API int ncclReduceScatter(const void* send, void* recv, std::size_t count, int type, int op,
                               void* comm_handle, FakeStream* stream) {
  auto* comm = static_cast<FakeComm*>(comm_handle);
  if (op < 0 || op > 4)
    return kInvalidArgument;
  const std::size_t bytes = count * static_cast<std::size_t>(type_bytes(type));
  const std::size_t n = comm != nullptr ? static_cast<std::size_t>(comm->nranks) : 0;
  return enqueue(Op{Kind::ReduceScatter, comm, stream, count, type, -1}, send, bytes * n, recv,
                 bytes);
}

#ifndef LLMBENCH_FAKE_NCCL_NO_SEND
FAKE_API int ncclSend(const void* send, std::size_t count, int type, int peer, void* comm_handle,
                      FakeStream* stream) {
  auto* comm = static_cast<FakeComm*>(comm_handle);
  const std::size_t bytes = count * static_cast<std::size_t>(type_bytes(type));
  return enqueue(Op{Kind::Send, comm, stream, count, type, peer}, send, bytes, nullptr, 0);
}
#endif

FAKE_API int ncclRecv(void* recv, std::size_t count, int type, int peer, void* comm_handle,
                      FakeStream* stream) {
  auto* comm = static_cast<FakeComm*>(comm_handle);
  const std::size_t bytes = count * static_cast<std::size_t>(type_bytes(type));
  return enqueue(Op{Kind::Recv, comm, stream, count, type, peer}, nullptr, 0, recv, bytes);
}

FAKE_API int llmbench_fake_nccl_live() {
  return static_cast<int>(st().live.size());
}

FAKE_API const char* llmbench_fake_nccl_nvls() {
  return st().nvls.c_str();
}

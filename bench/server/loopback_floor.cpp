// The kernel's floor for streaming tokens over loopback: what one core spends per token when it
// does nothing but send, with no HTTP, SSE, timers or simulated engine.
//
//   server_loopback_floor MODE STREAMS STEP_MS SECONDS SENDER_CPU CLIENT_CPU
//
// Opens STREAMS TCP connections on 127.0.0.1 to a client process it forks (so each process holds
// STREAMS descriptors, as `llmbench serve` and its load generator do). Every STEP_MS the sender,
// pinned to SENDER_CPU, writes one 200-byte message (about one SSE token event) to every
// connection, in lock-step like an engine step; the client, pinned to CLIENT_CPU, reads them all
// with epoll. MODE `send` makes one send(2) per message; MODE `uring`
// (built when liburing is found) queues the step's messages as io_uring IORING_OP_SEND entries and
// submits them with one io_uring_enter per 4,096. Prints messages/s delivered, the sender thread's
// CPU per message (getrusage RUSAGE_THREAD: user + system, which includes the softirq work the
// kernel runs in its context), and how many steps started more than 5 ms after their due time.
//
// On loopback the kernel runs the receiver's TCP input in softirq on the sending CPU unless RPS
// (/sys/class/net/lo/queues/rx-0/rps_cpus) steers it elsewhere, so the figure is the cost a
// server pays on loopback; docs/performance.md (built-in server) reports both.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#if LLMBENCH_HAVE_URING
#include <liburing.h>
#endif

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr std::size_t kMessageBytes = 200;

/// Pins the calling thread to `cpu`; exits the program if the kernel refuses.
void pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) {
    std::fprintf(stderr, "cannot pin a thread to CPU %d\n", cpu);
    std::exit(2);
  }
}

/// User + system CPU seconds of the calling thread (getrusage RUSAGE_THREAD).
double thread_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

[[noreturn]] void die(const char* what) {
  std::perror(what);
  std::exit(1);
}

/// A listening socket on 127.0.0.1 with its port; exits the program on failure.
int listen_loopback(sockaddr_in& address) {
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  address = sockaddr_in{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (listener < 0 || bind(listener, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
      listen(listener, 65535) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) != 0)
    die("listener on 127.0.0.1");
  return listener;
}

/// The client process: connects `streams` sockets to `address`, reads everything they receive
/// until `stop_fd` becomes readable, then writes the byte count (a long) to `result_fd`.
[[noreturn]] void run_client(const sockaddr_in& address, int streams, int cpu, int stop_fd,
                             int result_fd) {
  pin_to(cpu);
  const int ep = epoll_create1(0);
  std::vector<int> fds;
  for (int i = 0; i < streams; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
      die("client socket (raise `ulimit -n`)");
    if (connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0)
      die("connect");
    fcntl(fd, F_SETFL, O_NONBLOCK);
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = fd;
    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &event);
    fds.push_back(fd);
  }
  epoll_event stop_event{};
  stop_event.events = EPOLLIN;
  stop_event.data.fd = stop_fd;
  epoll_ctl(ep, EPOLL_CTL_ADD, stop_fd, &stop_event);
  std::vector<epoll_event> ready(4096);
  std::vector<char> buffer(65536);
  long bytes = 0;
  for (bool stop = false; !stop;) {
    const int n = epoll_wait(ep, ready.data(), static_cast<int>(ready.size()), -1);
    for (int j = 0; j < n; ++j) {
      const int fd = ready[static_cast<std::size_t>(j)].data.fd;
      if (fd == stop_fd) {
        stop = true;
        continue;
      }
      ssize_t r = 0;
      while ((r = read(fd, buffer.data(), buffer.size())) > 0) bytes += r;
    }
  }
  if (write(result_fd, &bytes, sizeof bytes) != static_cast<ssize_t>(sizeof bytes))
    _exit(1);
  _exit(0);
}

/// Accepts `streams` connections: non-blocking, with TCP_NODELAY (as `llmbench serve` sets it).
/// Gives up after 10 s without a connection (the client died).
std::vector<int> accept_streams(int listener, int streams) {
  timeval timeout{10, 0};
  setsockopt(listener, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  std::vector<int> fds;
  for (int i = 0; i < streams; ++i) {
    const int fd = accept(listener, nullptr, nullptr);
    if (fd < 0)
      die("accept (raise `ulimit -n`)");
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    fcntl(fd, F_SETFL, O_NONBLOCK);
    fds.push_back(fd);
  }
  return fds;
}

/// Counts of one step's sends.
struct Sent {
  long whole = 0;   ///< messages written in full
  long failed = 0;  ///< short writes and errors (EAGAIN when the client fell behind)
};

void send_step(const std::vector<int>& fds, const std::string& message, Sent& sent) {
  for (const int fd : fds) {
    const ssize_t r = send(fd, message.data(), message.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    (r == static_cast<ssize_t>(message.size()) ? sent.whole : sent.failed) += 1;
  }
}

#if LLMBENCH_HAVE_URING
void uring_step(io_uring& ring, const std::vector<int>& fds, const std::string& message,
                Sent& sent) {
  auto reap = [&] {
    io_uring_cqe* cqe = nullptr;
    unsigned head = 0;
    unsigned seen = 0;
    io_uring_for_each_cqe(&ring, head, cqe) {
      (cqe->res == static_cast<int>(message.size()) ? sent.whole : sent.failed) += 1;
      ++seen;
    }
    io_uring_cq_advance(&ring, seen);
  };
  std::size_t i = 0;
  while (i < fds.size()) {
    io_uring_sqe* sqe = nullptr;
    while (i < fds.size() && (sqe = io_uring_get_sqe(&ring)) != nullptr) {
      io_uring_prep_send(sqe, fds[i], message.data(), message.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      ++i;
    }
    io_uring_submit_and_wait(&ring, 0);
    reap();
  }
  reap();
}
#endif

}  // namespace

int main(int argc, char** argv) {
  if (argc != 7) {
    std::fprintf(stderr,
                 "usage: server_loopback_floor send|uring STREAMS STEP_MS SECONDS SENDER_CPU "
                 "CLIENT_CPU\n");
    return 2;
  }
  const std::string mode = argv[1];
  const int streams = std::atoi(argv[2]);
  const double step_ms = std::atof(argv[3]);
  const double seconds = std::atof(argv[4]);
  const int sender_cpu = std::atoi(argv[5]);
  const int client_cpu = std::atoi(argv[6]);
#if !LLMBENCH_HAVE_URING
  if (mode == "uring") {
    std::fprintf(stderr, "built without liburing: only `send`\n");
    return 2;
  }
#endif
  if ((mode != "send" && mode != "uring") || streams <= 0 || step_ms <= 0 || seconds <= 0) {
    std::fprintf(stderr, "bad arguments: MODE send|uring, STREAMS, STEP_MS, SECONDS > 0\n");
    return 2;
  }
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  limit.rlim_cur = limit.rlim_max;
  setrlimit(RLIMIT_NOFILE, &limit);

  sockaddr_in address{};
  const int listener = listen_loopback(address);
  int stop_pipe[2];
  int result_pipe[2];
  if (pipe(stop_pipe) != 0 || pipe(result_pipe) != 0)
    die("pipe");
  const pid_t client = fork();
  if (client < 0)
    die("fork");
  if (client == 0) {
    close(listener);
    close(stop_pipe[1]);
    close(result_pipe[0]);
    run_client(address, streams, client_cpu, stop_pipe[0], result_pipe[1]);
  }
  close(stop_pipe[0]);  // so that a client that dies leaves the result pipe at end of file
  close(result_pipe[1]);
  std::signal(SIGPIPE, SIG_IGN);  // a dead client then fails the stop write, not the process
  const std::vector<int> fds = accept_streams(listener, streams);
  pin_to(sender_cpu);
  std::string message(kMessageBytes, 'x');
  message.back() = '\n';
#if LLMBENCH_HAVE_URING
  io_uring ring{};
  if (mode == "uring" && io_uring_queue_init(4096, &ring, 0) < 0)
    die("io_uring_queue_init");
#endif

  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const double cpu_start = thread_cpu_seconds();
  Sent sent;
  long steps = 0;
  long late_steps = 0;
  for (;; ++steps) {
    const auto due =
        start +
        std::chrono::duration_cast<Clock::duration>(
            std::chrono::duration<double, std::milli>(static_cast<double>(steps) * step_ms));
    const auto now = Clock::now();
    if (now - start >= std::chrono::duration<double>(seconds))
      break;
    if (now < due)
      std::this_thread::sleep_until(due);
    else if (now - due > std::chrono::milliseconds(5))
      ++late_steps;
#if LLMBENCH_HAVE_URING
    if (mode == "uring") {
      uring_step(ring, fds, message, sent);
      continue;
    }
#endif
    send_step(fds, message, sent);
  }
  const double cpu = thread_cpu_seconds() - cpu_start;
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  long received = 0;
  if (sent.whole == 0) {
    std::fprintf(stderr, "no message was sent in full\n");
    return 1;
  }
  if (write(stop_pipe[1], "x", 1) != 1 ||
      read(result_pipe[0], &received, sizeof received) != static_cast<ssize_t>(sizeof received))
    die("client result");
  waitpid(client, nullptr, 0);
  std::printf(
      "%s: %d streams, a step every %.1f ms: %ld messages in %.2f s (%.0f k/s), %ld failed; "
      "sender CPU %.2f s = %.2f us per message (%.0f k messages per CPU-second); steps > 5 ms "
      "late: %ld of %ld; client read %.1f%% of the bytes\n",
      mode.c_str(), streams, step_ms, sent.whole, wall,
      static_cast<double>(sent.whole) / wall / 1e3, sent.failed, cpu,
      cpu / static_cast<double>(sent.whole) * 1e6, static_cast<double>(sent.whole) / cpu / 1e3,
      late_steps, steps,
      100.0 * static_cast<double>(received) /
          (static_cast<double>(sent.whole) * static_cast<double>(kMessageBytes)));
  return 0;
}

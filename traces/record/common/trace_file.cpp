#include "trace_file.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace collmc::recorder {
namespace {

enum State : int { kUntried = 0, kOpen = 1, kOff = 2 };

std::atomic<int> g_state{kUntried};
std::atomic<int> g_fd{-1};
std::atomic<uint64_t> g_seq{0};
pthread_mutex_t g_open_lock = PTHREAD_MUTEX_INITIALIZER;
thread_local long t_tid = 0;

uint64_t now_ns(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

long thread_id() {
  if (t_tid == 0) t_tid = syscall(SYS_gettid);
  return t_tid;
}

void say(const char* message) {
  // stderr, unbuffered, no allocation: this may run inside any program.
  ssize_t ignored = ::write(2, message, strlen(message));
  (void)ignored;
}

int64_t env_int(const char* name) {
  const char* v = getenv(name);
  if (v == nullptr || *v == '\0') return -1;
  char* end = nullptr;
  long long x = strtoll(v, &end, 10);
  return (end != nullptr && *end == '\0' && x >= 0) ? static_cast<int64_t>(x) : -1;
}

void write_all(int fd, const char* data, size_t length) {
  while (length > 0) {
    ssize_t n = ::write(fd, data, length);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // disk full or closed: the program matters more than its trace
    data += n;
    length -= static_cast<size_t>(n);
  }
}

void write_process_header(int fd) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  char exe[512] = {};
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) exe[n] = '\0';
  JsonLine line;
  line.str("ev", "process")
      .str("format", kTraceFormat)
      .u64("version", 1)
      .i64("pid", getpid())
      .i64("ppid", getppid())
      .str("host", host)
      .str("exe", exe)
      .u64("t_mono_ns", now_ns(CLOCK_MONOTONIC))
      .u64("t_wall_ns", now_ns(CLOCK_REALTIME))
      .i64("env_rank", env_int("RANK"))
      .i64("env_local_rank", env_int("LOCAL_RANK"))
      .i64("env_world_size", env_int("WORLD_SIZE"));
  size_t length = 0;
  const char* text = line.finish(&length);
  write_all(fd, text, length);
}

// Opens $COLLMC_TRACE_DIR/collmc-trace.<host>.<pid>.jsonl once per process (under a lock: the first
// calls may come from several threads at once).
bool open_trace_file() {
  pthread_mutex_lock(&g_open_lock);
  if (g_state.load(std::memory_order_acquire) == kUntried) {
    const char* dir = getenv("COLLMC_TRACE_DIR");
    int state = kOff;
    if (dir != nullptr && *dir != '\0') {
      char host[256] = {};
      gethostname(host, sizeof host - 1);
      char path[4096];
      int len = snprintf(path, sizeof path, "%s/collmc-trace.%s.%d.jsonl", dir, host, static_cast<int>(getpid()));
      int fd = -1;
      if (len > 0 && static_cast<size_t>(len) < sizeof path)
        fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
      if (fd >= 0) {
        write_process_header(fd);
        g_fd.store(fd, std::memory_order_release);
        state = kOpen;
      } else {
        say("collmc recorder: cannot open a trace file in $COLLMC_TRACE_DIR; this process is not recorded\n");
      }
    }
    g_state.store(state, std::memory_order_release);
  }
  pthread_mutex_unlock(&g_open_lock);
  return g_state.load(std::memory_order_acquire) == kOpen;
}

// A forked child is another process: it gets its own file (opened on its first call), its own thread id,
// and a fresh lock (the parent may have held it while forking).
void after_fork_in_child() {
  int fd = g_fd.exchange(-1);
  if (fd >= 0) ::close(fd);
  g_state.store(kUntried);
  t_tid = 0;
  g_open_lock = PTHREAD_MUTEX_INITIALIZER;
}

__attribute__((constructor)) void install_fork_handler() { pthread_atfork(nullptr, nullptr, after_fork_in_child); }

}  // namespace

bool recording() {
  int state = g_state.load(std::memory_order_acquire);
  if (state == kOpen) return true;
  if (state == kOff) return false;
  return open_trace_file();
}

uint64_t next_seq() { return g_seq.fetch_add(1, std::memory_order_relaxed) + 1; }

void write_line(JsonLine& line) {
  int fd = g_fd.load(std::memory_order_acquire);
  if (fd < 0) return;
  const int saved_errno = errno;
  size_t length = 0;
  const char* text = line.finish(&length);
  write_all(fd, text, length);
  errno = saved_errno;
}

void begin_event(JsonLine& line, const char* ev, uint64_t seq, const char* call) {
  line.str("ev", ev)
      .u64("seq", seq)
      .i64("tid", thread_id())
      .u64("t_mono_ns", now_ns(CLOCK_MONOTONIC))
      .u64("t_wall_ns", now_ns(CLOCK_REALTIME))
      .str("call", call);
}

}  // namespace collmc::recorder

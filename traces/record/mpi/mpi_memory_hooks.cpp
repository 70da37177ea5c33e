// The program's own loads and stores to memory it gave MPI (issue 32): a program compiled with
// `-fsanitize-coverage=trace-loads,trace-stores` (clang) calls __sanitizer_cov_loadN / __sanitizer_cov_storeN
// before each load and store; linked with this library (`-lcollmc_record_mpi`: outside `collmc record` it
// records nothing and passes every MPI call through), those calls land here. MPI 4.1 makes some of those accesses
// erroneous: a store to the origin buffer of an RMA transfer not yet completed, a load or store of window memory that a
// transfer of another rank reaches in the same epoch (sec. 12.7), an access to the buffer of a nonblocking call before
// it completes (sec. 3.7.2). The recorder writes the facts; the reader's rules decide (docs/TRACES.md, "Loads and
// stores").
//
// Only memory an MPI call named is watched (windows, RMA origin buffers, buffers of nonblocking calls): every
// other access costs one load and two compares. A thread's accesses between two of its MPI calls are folded
// into runs of adjacent bytes (one for a loop over a buffer) and written just before its next MPI call enters,
// so the trace keeps one line per run and the reader knows between which two calls each one came.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "mpi_hook_args.h"

namespace collmc::recorder::mpi_hooks {
namespace {

struct Range {
  uintptr_t lo = 0, hi = 0;
};
constexpr size_t kMaxRanges = 256;
// An immutable set of watched ranges: the hooks read the current one without a lock while a watch call
// publishes a new one; old sets are kept until the process ends (a hook may still be reading one).
struct Watched {
  size_t n = 0;
  uintptr_t min = UINTPTR_MAX, max = 0;
  Range ranges[kMaxRanges];
};
std::atomic<const Watched*> g_watched{nullptr};
std::mutex g_watch_mutex;
std::vector<std::unique_ptr<Watched>>* g_all_watched = nullptr;  // never freed: hooks run until exit
bool g_watch_full = false;                                       // a range was not watched: said once

struct Run {
  uintptr_t lo = 0, hi = 0;
  bool write = false;
};
constexpr size_t kMaxRuns = 32;
thread_local Run t_runs[kMaxRuns];
thread_local size_t t_run_count = 0;
thread_local uint64_t t_runs_left_out = 0;

inline void touched(const void* p, uintptr_t n, bool write) {
  const Watched* w = g_watched.load(std::memory_order_acquire);
  if (w == nullptr) return;
  const auto lo = reinterpret_cast<uintptr_t>(p);
  const uintptr_t hi = lo + n;
  if (lo >= w->max || hi <= w->min) return;
  bool hit = false;
  for (size_t i = 0; i < w->n && !hit; ++i) hit = lo < w->ranges[i].hi && hi > w->ranges[i].lo;
  if (!hit) return;
  for (size_t i = 0; i < t_run_count; ++i) {
    Run& r = t_runs[i];
    if (r.write == write && lo <= r.hi && hi >= r.lo) {  // overlapping or adjacent: one run
      r.lo = lo < r.lo ? lo : r.lo;
      r.hi = hi > r.hi ? hi : r.hi;
      return;
    }
  }
  if (t_run_count < kMaxRuns)
    t_runs[t_run_count++] = Run{lo, hi, write};
  else
    ++t_runs_left_out;
}

}  // namespace

void watch_memory(const void* buf, int64_t bytes) {
  if (buf == nullptr || bytes <= 0) return;
  const auto lo = reinterpret_cast<uintptr_t>(buf);
  const uintptr_t hi = lo + static_cast<uintptr_t>(bytes);
  const std::lock_guard<std::mutex> lock(g_watch_mutex);
  const Watched* now = g_watched.load(std::memory_order_relaxed);
  if (now != nullptr)
    for (size_t i = 0; i < now->n; ++i)
      if (now->ranges[i].lo <= lo && hi <= now->ranges[i].hi) return;  // already watched
  if (now != nullptr && now->n == kMaxRanges) {
    g_watch_full = true;
    return;
  }
  auto next = std::make_unique<Watched>(now != nullptr ? *now : Watched{});
  next->ranges[next->n++] = Range{lo, hi};
  next->min = lo < next->min ? lo : next->min;
  next->max = hi > next->max ? hi : next->max;
  if (g_all_watched == nullptr) g_all_watched = new std::vector<std::unique_ptr<Watched>>();
  g_watched.store(next.get(), std::memory_order_release);
  g_all_watched->push_back(std::move(next));
}

void write_memory_accesses() {
  if (t_run_count == 0 && t_runs_left_out == 0) return;
  const size_t count = t_run_count;
  t_run_count = 0;  // first: a hook that runs while the lines are written starts the next interval
  const uint64_t left_out = t_runs_left_out;
  t_runs_left_out = 0;
  if (!recording()) return;
  for (size_t i = 0; i < count; ++i) {
    JsonLine line;
    begin_event(line, "access", next_seq(), t_runs[i].write ? "store" : "load");
    line.hex("addr", t_runs[i].lo, 0).i64("bytes", static_cast<int64_t>(t_runs[i].hi - t_runs[i].lo));
    if (i + 1 == count && left_out > 0) line.u64("runs_left_out", left_out);
    if (i + 1 == count && g_watch_full) line.i64("watch_full", 1);
    write_line(line);
  }
}

}  // namespace collmc::recorder::mpi_hooks

using collmc::recorder::mpi_hooks::touched;

#pragma GCC visibility push(default)
// NOLINTBEGIN(bugprone-reserved-identifier): the names are SanitizerCoverage's ABI
extern "C" {
// SanitizerCoverage's callbacks (clang's -fsanitize-coverage=trace-loads,trace-stores): the address only (the
// 16-byte ones take an __int128*, which ISO C++ does not name: the pointer's bits are the same).
void __sanitizer_cov_load1(uint8_t* addr) { touched(addr, 1, false); }
void __sanitizer_cov_load2(uint16_t* addr) { touched(addr, 2, false); }
void __sanitizer_cov_load4(uint32_t* addr) { touched(addr, 4, false); }
void __sanitizer_cov_load8(uint64_t* addr) { touched(addr, 8, false); }
void __sanitizer_cov_load16(void* addr) { touched(addr, 16, false); }
void __sanitizer_cov_store1(uint8_t* addr) { touched(addr, 1, true); }
void __sanitizer_cov_store2(uint16_t* addr) { touched(addr, 2, true); }
void __sanitizer_cov_store4(uint32_t* addr) { touched(addr, 4, true); }
void __sanitizer_cov_store8(uint64_t* addr) { touched(addr, 8, true); }
void __sanitizer_cov_store16(void* addr) { touched(addr, 16, true); }
}
// NOLINTEND(bugprone-reserved-identifier)
#pragma GCC visibility pop

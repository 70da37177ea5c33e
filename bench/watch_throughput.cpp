// The live watch's throughput (docs/PERFORMANCE.md, "The live watch"): how fast the follower reads a job's
// trace folder (lines and bytes per second), and how long one check of the calls so far takes (import,
// emit, check, certain_hang), on traces already written (collmc_gen_hung_job --format recorder, or a run's).
//
//   collmc_bench_watch DIR [ROUNDS]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "collmc/watch/follower.h"
#include "collmc/watch/live_diagnosis.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: collmc_bench_watch DIR [ROUNDS]\n");
    return 2;
  }
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 1;
  using Clock = std::chrono::steady_clock;
  auto seconds = [](Clock::time_point a) { return std::chrono::duration<double>(Clock::now() - a).count(); };
  collmc::watch::TraceFollower follower(argv[1]);
  follower.list_every = 1;
  const auto t0 = Clock::now();
  uint64_t entries = 0;
  for (;;) {
    const auto p = follower.poll();
    entries += p.entries;
    if (p.lines == 0 && p.new_files == 0) break;
  }
  const double read_s = seconds(t0);
  std::printf("follow: %zu files, %llu lines (%llu calls entered), %.1f MB in %.3f s: %.0f lines/s, %.0f MB/s\n",
              follower.files(), static_cast<unsigned long long>(follower.lines()),
              static_cast<unsigned long long>(entries), static_cast<double>(follower.bytes()) / 1e6, read_s,
              static_cast<double>(follower.lines()) / read_s, static_cast<double>(follower.bytes()) / 1e6 / read_s);
  const auto idle = Clock::now();
  for (int i = 0; i < 100; ++i) follower.poll();
  std::printf("idle poll (nothing new): %.1f us\n", seconds(idle) / 100 * 1e6);
  for (int r = 0; r < rounds; ++r) {
    const auto t1 = Clock::now();
    const auto streams = follower.to_read();
    const double snap_s = seconds(t1);
    for (const auto& s : streams) {
      const auto t2 = Clock::now();
      const collmc::traces::Trace trace = s.format->read(s.files);
      const double import_s = seconds(t2);
      const auto d = collmc::watch::diagnose_calls_so_far(trace);
      std::printf("check %d: snapshot %.3f s, import %.3f s, emit+check+analysis %.3f s: %s%s\n", r, snap_s, import_s,
                  d.seconds, d.kind == collmc::watch::LiveDiagnosis::Kind::None ? "nothing named: " : "named: ",
                  d.kind == collmc::watch::LiveDiagnosis::Kind::None ? d.why_not.c_str() : d.headline.c_str());
    }
  }
  return 0;
}

// The live watch (collmc record --watch, collmc watch DIR): follows a job's trace folder, checks the calls
// so far whenever calls were entered (at most as often as the checks themselves allow: about half the CPU
// the watcher gets), and names a certain hang once (live_diagnosis.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "collmc/watch/follower.h"
#include "collmc/watch/live_diagnosis.h"

namespace collmc::watch {

struct WatchOptions {
  std::string trace_dir;
  std::set<std::string> skip;  // files of an earlier run, left alone
  std::string out_dir;         // where the named hang's files go; empty: <trace_dir>/watch
  LiveOptions live;
  double min_check_interval_s = 0.02;
};

struct WatchStats {
  uint64_t polls = 0, lines = 0, entries = 0, returns = 0, checks = 0;
  double check_seconds = 0, check_cpu_seconds = 0, max_check_seconds = 0;
  std::string last_error;  // the last import that failed (a trace cut mid-write is retried at the next line)
};

class Watcher {
 public:
  explicit Watcher(WatchOptions options);
  // Reads the lines appended since the last poll; checks when due. Returns the diagnosis the first time a
  // hang is named (then never checks again).
  std::optional<LiveDiagnosis> poll();
  const WatchStats& stats() const { return stats_; }
  const TraceFollower& follower() const { return follower_; }
  bool named() const { return named_; }
  // Writes hang.cmc (the scenario of the calls so far), hang.txt (what was printed) and, when rendered,
  // hang.html into the output folder; returns their paths.
  std::vector<std::string> write_outputs(const LiveDiagnosis& d, const std::string& printed) const;
  std::string out_dir() const;

 private:
  std::optional<LiveDiagnosis> check();
  WatchOptions options_;
  TraceFollower follower_;
  WatchStats stats_;
  uint64_t unchecked_entries_ = 0;
  bool named_ = false;
  std::chrono::steady_clock::time_point next_check_{};
};

// What the watch prints when it names a hang: the headline with how long after the last named rank's entry
// (`now_wall_ns`, CLOCK_REALTIME), each rank's certain wait, then the check's cycle-first report.
std::string describe_hang(const LiveDiagnosis& d, uint64_t now_wall_ns);

uint64_t wall_clock_ns();

}  // namespace collmc::watch

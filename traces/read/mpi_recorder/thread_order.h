// The order among a process's threads that its OpenMP synchronization gives (issue 32): the happens-before of
// the recorder's "omp" lines (the OMPT tool, docs/TRACES.md "OpenMP threads"), reduced to the edges between MPI
// calls of different threads that no other edge implies. The MPI reader makes each thread a `thread` of the rank
// and each edge a host store key (`store_set` after the earlier call, `store_wait` before the later one).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "collmc/traces/recorder_reader.h"

namespace collmc::traces {

// The calls of `to_thread` from process call `before_call` on come after process call `after_call` of
// `from_thread` (and so after every earlier call of it).
struct ThreadOrderEdge {
  int64_t from_thread = 0;
  size_t after_call = 0;
  int64_t to_thread = 0;
  size_t before_call = 0;
};

struct ThreadOrder {
  std::vector<int64_t> threads;  // the threads ("tid") that made MPI calls, in the order of their first call
  // True when the threads' synchronization was recorded and every thread that made MPI calls took part in it:
  // `edges` is then the whole order among them. False: `why_not` says why (one thread: empty).
  bool recorded = false;
  std::string why_not;
  std::vector<ThreadOrderEdge> edges;  // by to_thread's call, then from_thread
  // Where each call's entry and each access line (by seq) stands, for the race rules: its thread (an index),
  // its place among that thread's lines, and how many lines of each thread happened before it.
  struct LinePoint {
    uint32_t thread = 0, position = 0;
    std::vector<uint32_t> clock;
  };
  std::map<uint64_t, LinePoint> points;
  // Whether the line `earlier` (a seq) happens before the line `later` by the threads' own order and their
  // recorded synchronization; nullopt where either is not a point (or the order was not recorded).
  std::optional<bool> happens_before(uint64_t earlier, uint64_t later) const;
};

ThreadOrder order_threads(const RecordedProcess& process);

// One statement of a thread and the process call it came from (SIZE_MAX: none).
struct ThreadEntry {
  Call call;
  size_t source = SIZE_MAX;
};

// The threads of `order` (`lists`: each one's statements, by order.threads) as `thread`s of the rank, in the
// order of their first call (the first is the rank body, "main"; the others "omp1", ...), each cross-thread
// edge a host store key: `store_set` just after the earlier call, `store_wait` just before the later one (keys
// unique in the run: rank, thread, call). No other order is left between them: each thread starts where the
// rank does (ThreadTrace::starts_with_rank). nullopt when a key would fall inside a group (a thread's
// nonblocking calls and their wait: a group holds communication only).
std::optional<std::vector<ThreadTrace>> threads_with_keys(const ThreadOrder& order, int world_rank,
                                                          std::vector<std::vector<ThreadEntry>> lists);

}  // namespace collmc::traces

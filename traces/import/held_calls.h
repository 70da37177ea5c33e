// Calls held compactly between a reader's pass over its files and the trim (docs/TRACES.md, "What the import
// keeps"): a call is its shape (every field its neighbours share, interned per process: a training loop makes
// the same few calls thousands of times) and the few fields of its own (line, sequence number, time, state).
// The NCCL-log and recorder readers hold every call this way, plan the trim on them, and build a Call only
// for what is kept, so memory follows what is kept, not the input (16,384 ranks x 2,000 calls: 24 bytes a
// call instead of a Call's 500).
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/strings/string_view.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collmc/traces/trace.h"

namespace collmc::traces {

// What calls of one process share: the Call less its origin, seq, time and state, and a root or peer still
// named by its rank in the communicator (a reader learns the world ranks only once every file is read).
struct CallShape {
  Call call;
  std::optional<int64_t> root_in_comm, peer_in_comm;
};

// One call held: 24 bytes.
struct HeldCall {
  static constexpr uint32_t kMaxLine = (1u << 30) - 1;
  uint32_t shape = 0;      // index into its process's CallShapes
  uint32_t line : 30 = 0;  // 1-based line in its file (the origin), saturating
  uint32_t state : 2 = 0;  // CallState
  int64_t seq = 0;         // the source's sequence number (when its shape says it has one)
  uint64_t time_ns = 0;

  HeldCall() = default;
  HeldCall(uint32_t shape_index, uint64_t line_no, CallState call_state, int64_t sequence = 0, uint64_t time = 0)
      : shape(shape_index),
        line(static_cast<uint32_t>(std::min<uint64_t>(line_no, kMaxLine)) & kMaxLine),
        state(static_cast<uint32_t>(call_state) & 3u),
        seq(sequence),
        time_ns(time) {}
  CallState call_state() const { return static_cast<CallState>(state); }
};
static_assert(sizeof(HeldCall) == 24);

// The shapes of one process's calls, each made once and found again by the reader's key (the text of
// everything a shape holds, in whatever form the reader has it at hand).
class CallShapes {
 public:
  template <class Make>
  uint32_t intern(std::string_view key, Make&& make) {
    // absl::string_view: Debian's Abseil has its own, and its string hash takes no std::string_view.
    auto it = index_.find(absl::string_view(key.data(), key.size()));
    if (it != index_.end()) return it->second;
    const auto index = static_cast<uint32_t>(shapes_.size());
    shapes_.push_back(make());
    index_.emplace(std::string(key), index);
    return index;
  }
  // The shape made for `key`, if any (a reader that learns a shape and validates a call in one pass asks
  // first, then adds).
  std::optional<uint32_t> find(std::string_view key) const {
    auto it = index_.find(absl::string_view(key.data(), key.size()));
    return it == index_.end() ? std::nullopt : std::optional<uint32_t>(it->second);
  }
  // A new shape, found again by `key` (empty: by none, a shape no other call shares).
  uint32_t add(CallShape shape, std::string_view key = {}) {
    shapes_.push_back(std::move(shape));
    const auto index = static_cast<uint32_t>(shapes_.size() - 1);
    if (!key.empty()) index_.insert_or_assign(std::string(key), index);
    return index;
  }
  const CallShape& operator[](uint32_t i) const { return shapes_[i]; }
  CallShape& operator[](uint32_t i) { return shapes_[i]; }
  size_t size() const { return shapes_.size(); }
  // Forget the keys (shapes stay): a call that changes what later keys mean (a communicator destroyed and its
  // address reused, a buffer freed) makes the reader start again.
  void forget_keys() { index_.clear(); }

 private:
  std::deque<CallShape> shapes_;  // stable: readers keep references while adding
  absl::flat_hash_map<std::string, uint32_t> index_;
};

struct HeldThread {
  std::string name;
  std::vector<HeldCall> calls;
};

// One rank's held calls; `shapes` outlives it.
struct HeldRank {
  int rank = 0;
  const CallShapes* shapes = nullptr;
  std::vector<HeldThread> threads;
};

// trim_history's plan (trace.h) on held calls: per entry of `held` (same order), per call in thread order,
// whether it is left out (empty: nothing of that rank). `trace.comms` must hold every communicator with its
// members by world rank; their dropped_collectives are set and the summary line appended to `trace.dropped`.
std::vector<std::vector<bool>> trim_held(Trace& trace, const std::vector<HeldRank>& held, bool completion_seen);

}  // namespace collmc::traces

// The memory the launcher and the rank processes share: an anonymous MAP_SHARED mapping made before
// fork, so nothing of it can outlive the processes. Plain atomics only.
#pragma once

#include <atomic>
#include <cstdint>

namespace collmc::replay {

constexpr int kMaxRanks = 16;
constexpr int kMaxThreads = 8;
constexpr int kMaxComms = 256;
constexpr int kMaxTimings = 512;
constexpr int kUniqueIdBytes = 128;  // NCCL_UNIQUE_ID_BYTES

enum ThreadPhase : int32_t { kPhaseNotStarted = 0, kPhaseEntered = 1, kPhaseReturned = 2, kPhaseDone = 3 };
enum RankStatus : int32_t { kRunning = 0, kFinishedOk = 1, kError = 2, kAborted = 3 };

struct ThreadSlot {
  std::atomic<int32_t> call;
  std::atomic<int32_t> phase;
};

struct RankSlot {
  ThreadSlot threads[kMaxThreads];
  std::atomic<int32_t> status;
  std::atomic<int32_t> pid;
  std::atomic<int32_t> timings;
  int32_t timing_call[kMaxTimings];
  double timing_seconds[kMaxTimings];
  double setup_seconds;
  char error[512];
  char note[256];
};

struct SharedBlock {
  std::atomic<uint64_t> progress;  // bumped on every call entered or returned
  std::atomic<int32_t> turn;       // the sequencer's next turn
  std::atomic<int32_t> abort;      // the watchdog asks every rank to abort its communicators
  std::atomic<int32_t> release;    // every rank is done: finished ranks may exit
  std::atomic<int32_t> id_ready[kMaxComms];
  unsigned char ids[kMaxComms][kUniqueIdBytes];
  RankSlot ranks[kMaxRanks];
};

}  // namespace collmc::replay

// The memory the launcher and the rank processes share: the sequencer's turn, the progress counter
// the watchdog reads, and what every rank reports. Plain atomics only. It lives in a file in
// /dev/shm that the launcher creates (and unlinks once every rank has attached, or at the end), so
// forked ranks (NCCL) and ranks that mpirun starts (MPI) open it the same way.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace collmc::replay {

constexpr int kMaxRanks = 16;
constexpr int kMaxThreads = 8;
constexpr int kMaxComms = 256;
constexpr int kMaxTimings = 512;
constexpr int kUniqueIdBytes = 128;  // NCCL_UNIQUE_ID_BYTES
constexpr int kMaxStoreKeys = 256;
// After the abort a rank process exits on its own timer this long after it began aborting, so its
// exit never waits on an ncclCommAbort that does not return (a rank stuck in a kernel).
constexpr double kAbortExitSeconds = 1.0;

enum ThreadPhase : int32_t { kPhaseNotStarted = 0, kPhaseEntered = 1, kPhaseReturned = 2, kPhaseDone = 3 };
enum RankStatus : int32_t { kRunning = 0, kFinishedOk = 1, kError = 2, kAborted = 3 };

struct ThreadSlot {
  std::atomic<int32_t> call;
  std::atomic<int32_t> phase;
};

struct RankSlot {
  ThreadSlot threads[kMaxThreads];
  std::atomic<int32_t> status;
  std::atomic<int32_t> pid;       // the rank process (mpirun's child for MPI), 0 until it attached
  std::atomic<int32_t> attached;  // the rank opened the block and read its plan
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
  // Per parent comm, the grow ids ncclCommGetUniqueId handed out so far: the k-th goes to the k-th
  // comm grown from it (its slot in `ids`). With a TCP store each rank counts its own.
  std::atomic<int32_t> grow_ids_handed[kMaxComms];
  char library[256];  // the library a rank found ("Open MPI v4.1.4 ..."), written by rank 0
  // The host key-value store of `store_set`, `store_wait` and `host_barrier` (what c10d's TCPStore is to
  // a PyTorch job): per key, 0 while unset, else set (1) or the number of barrier arrivals.
  std::atomic<uint32_t> store[kMaxStoreKeys];
  RankSlot ranks[kMaxRanks];
};

// The launcher's side: creates the file (O_EXCL, mode 0600), maps it and unlinks it when destroyed.
class SharedMemory {
 public:
  SharedMemory();
  ~SharedMemory();
  SharedMemory(const SharedMemory&) = delete;
  SharedMemory& operator=(const SharedMemory&) = delete;

  SharedBlock* block() const { return block_; }
  // "/collmc-replay-<pid>-<n>", for shm_open; "" when /dev/shm was unusable (then the block is an
  // anonymous mapping that only forked children share).
  const std::string& name() const { return name_; }
  void unlink();  // once every rank has it mapped; idempotent

 private:
  std::string name_;
  SharedBlock* block_ = nullptr;
  bool linked_ = false;
};

// A rank's side: maps the block the launcher created. Throws std::runtime_error when it cannot.
SharedBlock* attach_shared_block(const std::string& name);

// The prefix every block's name starts with (tests look for leftovers by it).
std::string shared_block_prefix();

}  // namespace collmc::replay

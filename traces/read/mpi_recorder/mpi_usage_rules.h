// MPI usage errors that the MPI trace reader finds in the recorded calls themselves, without search
// (issue 26; docs/SEMANTICS_NOTES.md, "MPI usage errors"): a call MPI 4.1 makes erroneous, found in one rank's
// own calls where the language has no statement for the fact (MPI_DATATYPE_NULL on a call written as a
// comment, a root out of range, a color or dimension MPI rejects) or across ranks (two RMA accesses to the same
// bytes in one epoch, one of them a write). Each becomes an `mpi_error RULE "TEXT"` statement before the call it
// is about; the checker reports it as `usage_error` when the rank reaches it. The epochs and the requests left
// at MPI_Finalize are followed here for the race rules and the reader, and judged by the semantics.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "collmc/model/operations.h"
#include "collmc/traces/recorder_reader.h"
#include "mpi_calls.h"
#include "thread_order.h"

namespace collmc::traces {

// What the reader knows of one recorded call beyond its lines.
struct MpiCallContext {
  const MpiCallInfo* info = nullptr;  // the call's row of the call table (mpi_calls.def); never null in observe
  int world_rank = -1;
  bool inter = false;       // the call's "comm" is an intercommunicator (roots and ranks name the remote group)
  int comm_size = -1;       // the size of the call's "comm", when known
  bool comm_null = false;   // the call's "comm" is MPI_COMM_NULL
  bool world_comm = false;  // the call's "comm" (a window's: the comm it was made on) is MPI_COMM_WORLD
  std::string window;       // the call's window ("win", or the one a creation makes): one id on every rank
  // The reader writes the call as a statement with its communicator, datatype, op and tag as passed
  // (`barrier null`, `dtype=null`, `op=null`, `tag=-3`): the semantics judges those arguments
  // (model/mpi_rules.def, judged by Semantics), so these rules leave them alone.
  bool arguments_in_statement = false;
};

// One erroneous call: the rule it breaks (model/mpi_rules.def) and the message, with the call's particulars.
struct MpiUsageError {
  model::MpiRule rule;
  std::string message;
  bool operator==(const MpiUsageError&) const = default;
};

// The basic type of an accumulate's elements and its size in bytes (0: not fixed by MPI, such as MPI_LONG_DOUBLE).
struct MpiUsageRulesUnit {
  std::string name;
  int64_t bytes = 0;
};

class MpiUsageRules {
 public:
  // Call i of process p (in entry order); `ctx` as the reader resolved it. Calls of one process come in order.
  void observe(size_t p, size_t i, const RecordedCall& rc, const MpiCallContext& ctx);
  // The processes ran on several hosts: their times do not compare, the happens-before order is not followed.
  void several_hosts() { one_host_ = false; }
  // A load or store of the program itself (an "access" line), before call `a.before_call` of process p; the
  // calls before it were observed. Reported, when erroneous, at that call.
  void program_access(size_t p, const RecordedAccess& a, const std::string& file);
  // Process p's threads ordered by their recorded synchronization (thread_order.h; kept alive by the caller):
  // the program's access of one thread is then judged against another thread's transfer by that order.
  void thread_order(size_t p, const ThreadOrder* order) { thread_orders_[p] = order; }
  // What the rules could not judge (said in the import summary), once errors() ran.
  const std::vector<std::string>& notes() const { return notes_; }
  // The requests process p posted and has neither completed nor freed, as observed so far ("MPI_Isend
  // (0x...)"), for the reader's MPI_Finalize: it writes `mpi_finalize` inside a group while any is left, and the
  // semantics judges that (request_not_completed, model/mpi_rules.def). Empty when a completion listed more
  // requests than its line holds: which ones are left is then unknown, and nothing is reported.
  std::vector<std::string> pending_requests(size_t p) const;
  // MPI_TAG_UB as the run's processes reported it at MPI_Init (the least of them); nullopt: not recorded.
  std::optional<int64_t> tag_upper_bound() const;
  // The errors, by (process, call index), in the order found; the races across ranks are found here.
  std::map<std::pair<size_t, size_t>, std::vector<MpiUsageError>> errors();

 private:
  struct Epochs {             // one rank's synchronisation state on one window
    bool fence_open = false;  // after a fence without MPI_MODE_NOSUCCEED
    bool lock_all = false;
    std::map<int64_t, bool> locks;  // target -> exclusive
    bool access = false;            // MPI_Win_start .. MPI_Win_complete
    bool exposure = false;          // MPI_Win_post .. MPI_Win_wait
    int comm_size = -1;
    bool world_comm = false;  // made on MPI_COMM_WORLD: targets are world ranks (races are checked)
    bool freed = false;
    int created_syncs = 0;        // the rank's synchronisation count just after the window's creation
    std::vector<size_t> pending;  // this rank's RMA calls (indices into accesses_) not yet completed
    // Start/complete and post/wait epochs (MPI 4.1 sec. 12.5.2), with their groups as world ranks (empty: the
    // trace did not say): a transfer of the n-th start epoch that holds its target pairs with the target's n-th
    // post epoch that holds the origin, and is complete at that epoch's wait.
    std::vector<std::set<int64_t>> starts;
    struct Exposure {
      std::set<int64_t> group;
      size_t post_order = 0, wait_order = SIZE_MAX;  // Access::order of the post and of the wait (SIZE_MAX: none)
    };
    std::vector<Exposure> exposures;
  };
  struct Access {                 // bytes an MPI call reads or writes, for the race rules
    size_t p = 0, index = 0;      // the call
    int rank = -1;                // the world rank that made it
    int owner = -1;               // the world rank whose memory it is
    std::string window;           // for an RMA call's target bytes: its window; empty: origin/local bytes
    int64_t disp = 0, bytes = 0;  // target bytes: displacement (window units) and length
    uint64_t lo = 0, hi = 0;      // local bytes (the owner's addresses)
    bool write = false;
    bool accumulate = false;         // accumulates to the same bytes do not race with each other
    MpiUsageRulesUnit unit;          // an accumulate's basic type (element-wise atomicity, MPI 4.1 sec. 12.7.1)
    bool exclusive = false;          // made under an exclusive lock of `owner`
    std::string locked_window;       // a local access under its rank's exclusive lock of this window
    bool rma = false;                // an RMA call (its origin bytes stay in use until completed)
    bool in_epoch = false;           // a local access made while the rank held an epoch on a window
    int sync_from = 0, sync_to = 0;  // the rank's synchronisation count at issue and at completion
    size_t done = SIZE_MAX;          // the call index that completed it (RMA), else its own index
    size_t order = 0;                // where in the rank's run: 2 x its call index; a program access, 2 x index - 1
    bool program = false;            // a load or store of the program itself (program_access)
    int64_t tid = 0;                 // the thread of the call (or of the program's access)
    uint64_t seq = 0;                // the program's access: its line's seq (a call's: call_seqs_)
    // What it knows of the other ranks: the clock at this call's entry (entry_clocks_). Its own `index` but for a
    // program access of a thread ordered with the others by their recorded synchronization (thread_order.h):
    // then the call after the last one of the process that happens before it by that order.
    size_t knows_index = SIZE_MAX;  // SIZE_MAX: `index`
    bool pscw = false;              // an RMA transfer in a start/complete epoch (MPI_Win_start)
    int pscw_nth = -1;              // pscw: which of the origin's start epochs holding the target (0: the first)
    bool nonblocking = false;       // the buffer of a nonblocking send or receive, in use until its request completes
    std::string what;               // "MPI_Put to rank 1"
  };
  struct CollectiveCall {  // a collective call of one thread, for the rule on threads (MPI 4.1 sec. 11.6.2)
    int64_t tid = 0;
    std::string on;         // the communicator's or window's handle
    uint64_t returned = 0;  // t_mono_ns of its return; 0: it never returned
    std::string what;       // "MPI_Bcast (thread 12, line 40)"
  };
  struct ProcessRules {
    int rank = -1;
    std::vector<CollectiveCall> collectives_running;  // those whose return comes after the latest entry
    int64_t tag_ub = -1;
    int syncs = 0;  // collective synchronisations so far (fences, world collectives, ...)
    std::map<std::string, Epochs> windows;
    std::map<uint64_t, std::string> requests;  // posted, not yet completed: handle -> the call that posted it
    std::map<uint64_t, std::vector<size_t>> request_buffers;  // handle -> accesses (accesses_) it completes
    bool requests_unknown = false;                            // a completion listed more requests than its line holds
  };
  struct WindowMemory {
    uint64_t base = 0;
    int64_t size = 0, disp_unit = 1;
  };

  void error(size_t p, size_t i, model::MpiRule rule, const std::string& text);
  void observe_call(size_t p, size_t i, const RecordedCall& rc, const MpiCallContext& ctx);
  void rma_call(size_t p, size_t i, const RecorderLine* in, const RecorderLine* ret, const MpiCallContext& ctx,
                Epochs& e);
  static void complete(Access& a, size_t i, const ProcessRules& pr);
  void complete_pending(Epochs& e, size_t i, const ProcessRules& pr, int64_t target, bool local_only = false);
  void local_access(size_t p, size_t i, const RecorderLine* in, const char* addr, const char* bytes, bool write,
                    const std::string& what);
  void find_races();
  static bool in_epoch(const ProcessRules& pr);  // the rank holds an access or exposure epoch on a window
  // A pscw transfer `remote` and an access `local` of its target: whether the target's matching post epoch is
  // known, and then whether `local` came inside it (after the post, before the wait that completes the transfer).
  std::optional<bool> inside_exposure(const Access& remote, const Access& local) const;
  const Epochs::Exposure* matched_exposure(const Access& remote) const;  // null: not known
  // A local access made while the rank holds an exclusive lock of its own window: `exclusive`, that window.
  static void self_lock(const ProcessRules& pr, Access& a);
  void threads_in_collectives(size_t p, size_t i, const RecordedCall& rc, const MpiCallInfo& info);

  // The run's happens-before order (vector clocks over world ranks), for the races between ranks: messages on
  // MPI_COMM_WORLD (matched in order per sender, receiver and tag, MPI 4.1 sec. 3.5), and the synchronisations
  // the count above follows (world collectives, fences, window creation and free) as barriers of their members.
  struct SyncPoint {
    uint64_t entered = 0, returned = 0;             // t_mono_ns (returned 0: never returned)
    std::vector<std::pair<int, int64_t>> sends;     // (destination world rank, tag)
    std::vector<std::pair<int, int64_t>> receives;  // (source world rank, tag) completed here
    std::string barrier;                            // "world" or a window: a synchronisation of its members
  };
  void sync_point(size_t p, size_t i, const RecordedCall& rc, const MpiCallContext& ctx, bool synchronised);
  void compute_clocks();
  bool happens_before(const Access& x, const Access& y) const;
  bool issued_before(const Access& x, const Access& y) const;
  int64_t known_of(const Access& y, int rank) const;
  int created_syncs(size_t p, const std::string& window) const;
  std::map<size_t, std::vector<SyncPoint>> sync_points_;
  std::map<size_t, std::map<uint64_t, int64_t>> posted_receives_;     // process -> request -> the posted tag
  std::map<size_t, std::vector<std::vector<int32_t>>> entry_clocks_;  // process -> call -> clock at its entry
  bool clocks_known_ = false;
  // Two threads of one process: a transfer of one and the program's access of the other that nothing in the
  // threads' recorded synchronization orders (the access neither before the transfer's issue nor after its
  // completion); false where that order was not recorded (then such pairs are not judged).
  bool threads_unordered(const Access& transfer, const Access& local) const;
  std::map<size_t, const ThreadOrder*> thread_orders_;
  std::map<size_t, std::vector<uint64_t>> call_seqs_;  // process -> call index -> its entry's seq
  std::map<size_t, std::vector<int>> syncs_after_;     // process -> call index -> the sync count after it
  bool one_host_ = true;  // the processes' t_mono_ns compare (one machine's CLOCK_MONOTONIC)
  std::map<size_t, ProcessRules> processes_;
  std::map<std::pair<std::string, int>, WindowMemory> memory_;  // (window, world rank) -> its bytes
  std::vector<Access> accesses_;
  std::vector<std::string> notes_;
  std::map<std::pair<size_t, size_t>, std::vector<MpiUsageError>> errors_;
};

}  // namespace collmc::traces

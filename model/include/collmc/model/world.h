// The resolved scenario (the IR the checker and the replay engine consume): communicator families
// expanded into instances, every name resolved per rank, `when` decided and `repeat` unrolled.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collmc/model/ast.h"
#include "collmc/model/operations.h"
#include "collmc/model/source.h"

namespace collmc::model {

constexpr uint64_t kDefaultBufferSize = 4ull << 20;  // LANGUAGE.md: sizes default to 4MiB

// A rank list as the language writes it: "[0, 2, 4]" (reports, generators and printers share it).
inline std::string rank_list_text(const std::vector<int>& ranks) {
  std::string s = "[";
  for (size_t i = 0; i < ranks.size(); ++i) s += (i ? ", " : "") + std::to_string(ranks[i]);
  return s + "]";
}

// A sorted rank list written compactly for people, the one way every report, note and summary writes
// a set of ranks: runs of three or more consecutive ranks as "a..b", runs of four or more with one
// stride as "a..b step s" (the ranks of a data-parallel group: "7..1015 step 8"), the rest one by one,
// joined by `separator` ("0..3, 5" in reports, "0..3,5" in notes).
inline std::string rank_ranges_text(const std::vector<int>& ranks, const std::string& separator) {
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += separator;
    if (j >= i + 2) {
      out += std::to_string(ranks[i]) + ".." + std::to_string(ranks[j]);
      i = j + 1;
      continue;
    }
    if (i + 1 < ranks.size()) {
      const int step = ranks[i + 1] - ranks[i];
      size_t k = i + 1;
      while (k + 1 < ranks.size() && ranks[k + 1] - ranks[k] == step) ++k;
      if (k >= i + 3) {
        out += std::to_string(ranks[i]) + ".." + std::to_string(ranks[k]) + " step " + std::to_string(step);
        i = k + 1;
        continue;
      }
    }
    out += std::to_string(ranks[i]);
    ++i;
  }
  return out;
}

// One communicator: a plain comm, or one instance of a family.
struct CommInstance {
  int id = 0;
  std::string name;  // "A", or "dp{0,1}" for the instance of family dp holding ranks 0 and 1
  std::string decl_name;
  int instance = 0;          // index within its family
  std::vector<int> members;  // sorted world ranks
  CommMode mode = CommMode::Blocking;
  bool uninit = false;
  // `comm C = per_rank`: the members are every rank some rank's `init C [..]` names, where that rank
  // names itself (it joins); each init carries its own list (Call::members_view).
  bool per_rank = false;
  Profile profile = Profile::Nccl;  // the library this comm belongs to (SEMANTICS.md §2 or §6)
  // A comm a `grow` creates: its parent, and which of the parent's grows it is (0 for the first, in
  // the order the parent's first member grows them): the grow_id it needs is the parent's k-th.
  int grown_from = -1;
  int grow_index = -1;
  // `history` (ast.h CommHistory): the host and device slots every member completed before the scenario's
  // first call on it, and whether its connections are set up; the checker's initial state holds them.
  uint32_t start_host = 0;
  uint32_t start_device = 0;
  bool start_connected = false;
  // `serialized` (issue 36): a framework-level group (PyTorch's ProcessGroupNCCL) whose calls from several
  // host threads of a rank are serialised per group: no NCCL thread-safety error, a call waits while
  // another thread of the rank is inside a call on the group; what hangs is the order the threads' calls
  // reach the group on each rank (SEMANTICS_NOTES.md, "NCCL 2.31 and 2.32").
  bool serialized = false;
  // `launch_order_implicit` (NCCL 2.31+ ncclConfig_t.launchOrderImplicit = 1): its kernels must not
  // overlap with kernels of comms that have it off on the same GPU (a usage_error when they may).
  bool launch_order_implicit = false;
  SourceLoc loc;

  bool has_member(int rank) const;
  int member_index(int rank) const;  // -1 if not a member
};

// A process whose one host thread drives several ranks (one GPU each): it issues their calls in turn,
// one call or group of each rank in rank order (the `for (dev ...)` loop around each statement), and
// blocks in a rank's blocking call with every other rank of the process waiting behind it.
struct ProcessInstance {
  std::string name;
  std::vector<int> ranks;  // sorted world ranks, two or more
  SourceLoc loc;
};

// One operation of one rank, with every name resolved.
struct Call {
  int id = 0;
  int rank = 0;
  int thread = 0;
  OpKind kind = OpKind::Alloc;
  int comm = -1;    // communicator instance (the parent for split)
  int child = -1;   // split: the child instance this rank joins, -1 for `none`
  int buffer = -1;  // buffer id
  int buffer2 = -1;
  uint64_t size = kDefaultBufferSize;  // alloc, cuda_malloc
  RegFlag flag = RegFlag::Symmetric;
  int peer = -1;                      // send/recv, world rank
  bool any_source = false;            // recv from whichever member sends first (MPI_ANY_SOURCE); `peer` is -1
  int64_t tag = 0;                    // send/recv (mpi): the message tag; kAnyTag for a receive's MPI_ANY_TAG
  bool buffered = false;              // send mode=buffered (mpi): the message is copied out and the send returns
  WinMode win_mode = WinMode::Plain;  // MPI window calls: a shared lock, a local flush, a fence's NOSUCCEED
  int root = -1;                      // world rank, -1 when not given
  int64_t count = -1;                 // -1: derived from the buffer's size
  int dtype = 0;                      // index into World::dtypes
  int redop = 0;                      // index into World::redops
  int stream = 0;                     // index into World::streams; 0 is `main`
  std::string mpi_call;               // call=NAME: the MPI function of a collective (issue 26); empty: not said
  // config=NAME: the per-collective configuration (ncclCollConfig_t, NCCL 2.31+) of an nccl*Config call;
  // every rank must pass the same one (issue 36). Empty: the plain call (config == NULL).
  std::string coll_config;
  // init: the member list this rank passes (sorted world ranks); empty when it passes none (then the
  // comm's declared members). Members that pass different lists create no communicator: a mismatch.
  std::vector<int> members_view;  // also host_barrier: the ranks it waits for
  int key = -1;                   // store_set, store_wait, host_barrier: index into World::keys
  SourceLoc loc;
  std::string text;                 // the statement as written
  std::string usage_error;          // a problem found without search; the checker reports it when reached
  std::optional<MpiRule> mpi_rule;  // the MPI usage rule usage_error breaks (mpi_rules.def), when it is one
};

// A rank's program as a tree; the checker compiles it into a control automaton.
struct ProgramNode {
  enum class Kind : uint8_t { Call, Seq, Group, AnyOrder, Either, Spawn };
  Kind kind = Kind::Seq;
  int call = -1;                      // Kind::Call
  int thread = -1;                    // Kind::Spawn
  std::vector<ProgramNode> children;  // Seq, Group (calls), AnyOrder, Either (one per alternative)
};

struct ThreadProgram {
  std::string name;  // "main" for the rank body itself
  ProgramNode body;
};

struct RankProgram {
  int rank = 0;
  std::vector<ThreadProgram> threads;  // [0] is the main thread
};

struct Diagnostic {
  SourceLoc loc;
  std::string message;
};

struct World {
  std::shared_ptr<const SourceFile> source;
  std::string name;
  int ranks = 0;
  Knobs knobs;
  std::optional<Verdict> expect;
  std::optional<Observed> observed;  // the recorded run's outcome, for imported scenarios
  std::vector<CommInstance> comms;
  std::vector<ProcessInstance> processes;  // only processes of two or more ranks
  std::vector<int> rank_process;           // [rank] -> index into processes, or -1 (a process of its own)
  std::vector<std::string> buffers;        // names, one id space for every rank
  std::vector<std::string> streams;        // names; [0] = "main"
  std::vector<std::string> dtypes;         // [0] = "float32"
  std::vector<std::string> redops;         // [0] = "sum"
  std::vector<std::string> keys;           // host store keys
  std::vector<Call> calls;
  std::vector<RankProgram> programs;       // one per rank
  std::vector<Diagnostic> usage_problems;  // the static usage errors (also on their calls)
  // Input collmc accepts but that is likely a mistake or outside its rules: a buffer never allocated
  // whose name is one edit from one that is (the language makes it a cudaMalloc buffer), ranks with no
  // body, an NCCL release collmc has no rules for. check prints them; the verdict follows the input.
  std::vector<Diagnostic> warnings;
  std::vector<std::string> notes;  // assumptions the verdict depends on

  uint64_t dtype_size(int dtype) const;
  // `dtype=any` (issue 32): a type the trace could not say; no count or type is compared with it.
  bool dtype_unknown(int dtype) const { return dtypes[static_cast<size_t>(dtype)] == "any"; }
  // The profile a call follows: its communicator's, or the `profile` knob for calls without one.
  Profile profile_of(const Call& c) const {
    return c.comm >= 0 ? comms[static_cast<size_t>(c.comm)].profile : knobs.profile;
  }
  bool mixed_profiles() const;
  // The process (index into `processes`) whose host thread drives `rank` with other ranks, or -1.
  int process_of(int rank) const {
    return static_cast<size_t>(rank) < rank_process.size() ? rank_process[static_cast<size_t>(rank)] : -1;
  }  // some comm's profile differs from the knob
  std::string comm_name(int comm) const { return comm >= 0 ? comms[comm].name : std::string("-"); }
};

// Resolves a parsed scenario. Throws InputError for what makes the scenario meaningless (unknown
// communicator, `thread` nested in a block, unknown datatype); records usage errors that NCCL would
// reject (a comm the rank is not in, a peer or root outside the comm) on the call instead.
World resolve(const Scenario& scenario);

// Sets every comm's grown_from and grow_index from the world's grow calls (resolve does; a tool that
// edits a World's calls or comms, as shrink/ does, calls it again).
void number_grown_comms(World& w);

// parse + resolve.
World load_world(const std::string& path);

}  // namespace collmc::model

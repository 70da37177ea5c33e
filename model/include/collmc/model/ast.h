// The scenario as written: what the parser produces, names still unresolved (LANGUAGE.md).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collmc/model/operations.h"
#include "collmc/model/source.h"

namespace collmc::model {

// `[0, 1, 4..7]` or `all`.
struct RankSet {
  bool all = false;
  std::vector<std::pair<int, int>> ranges;  // inclusive
  SourceLoc loc;

  bool contains(int rank) const;
  std::vector<int> expand(int world) const;  // sorted, unique
};

enum class StmtKind : uint8_t { Op, Block, Group, AnyOrder, Either, Maybe, Repeat, Thread, When };

// Optional arguments of collectives and point-to-point calls.
// `tag=any` of a recv: MPI_ANY_TAG. Not -1: a written negative tag is the program's erroneous argument.
constexpr int64_t kAnyTag = std::numeric_limits<int64_t>::min();

struct CallArgs {
  std::optional<int64_t> count;
  std::optional<int> root;            // world rank
  std::string dtype;                  // empty: default (float32)
  std::string redop;                  // empty: default (sum)
  std::string stream;                 // empty: `main`
  std::string mpi_call;               // call=NAME (mpi profile): the MPI function of a collective; empty: not said
  std::string coll_config;            // config=NAME (NCCL 2.31+): the ncclCollConfig_t of an nccl*Config call
  std::optional<int64_t> tag;         // tag=N or tag=any (kAnyTag) of send/recv (mpi profile)
  bool buffered = false;              // send mode=buffered (mpi profile): MPI_Bsend, completes locally (issue 32)
  WinMode win_mode = WinMode::Plain;  // mode= of an MPI window call: shared, local, nosucceed (issue 32)
  SourceLoc root_loc;
  SourceLoc tag_loc;
  SourceLoc config_loc;
};

struct Stmt {
  StmtKind kind = StmtKind::Op;
  SourceLoc loc;
  std::string text;  // the statement as written (operations), for reports

  // StmtKind::Op
  OpKind op = OpKind::Alloc;
  std::string comm;  // comm name (the parent for split)
  SourceLoc comm_loc;
  std::string child;  // split child; empty for `none`
  SourceLoc child_loc;
  std::string buffer;   // alloc, free, register, collectives...
  std::string buffer2;  // `-> BUF2` of a collective
  std::optional<uint64_t> size;
  RegFlag flag = RegFlag::Symmetric;
  std::optional<int> peer;  // send/recv, world rank
  bool any_source = false;  // `recv COMM any BUF` (mpi profile): MPI_ANY_SOURCE, matched by any sender
  SourceLoc peer_loc;
  CallArgs args;
  std::optional<RankSet> members;   // `init COMM [RANKS]`: the member list this rank passes; host_barrier's ranks
  std::string key;                  // store_set, store_wait, host_barrier; mpi_error's text
  std::optional<MpiRule> mpi_rule;  // `mpi_error RULE "TEXT"`: the rule of mpi_rules.def the call breaks
  SourceLoc key_loc;

  // Compound statements
  std::vector<Stmt> body;                       // Block, Group, AnyOrder, Maybe, Repeat, Thread, When
  std::vector<std::vector<Stmt>> alternatives;  // Either
  int64_t repeat_count = 0;                     // Repeat
  std::string thread_name;                      // Thread
  RankSet when_ranks;                           // When
};

struct CommDecl {
  std::string name;
  SourceLoc loc;
  bool family = false;                      // `{[..], [..]}`
  std::vector<std::vector<int>> instances;  // one for a plain comm
  std::optional<CommMode> mode;
  bool uninit = false;
  // `comm C = per_rank`: no agreed member list; each rank's `init C [RANKS]` names the members it
  // passes (ncclCommInitRank's nranks, torch.distributed.new_group(ranks)). Implies uninit.
  bool per_rank = false;
  std::optional<Profile> profile;      // `comm W = all mpi`: this comm's library (default: the `profile` knob)
  bool serialized = false;             // `serialized`: CommInstance::serialized
  bool launch_order_implicit = false;  // `launch_order_implicit`: CommInstance::launch_order_implicit
};

// `process P = [0, 1]`: ranks whose programs one host thread of one process drives (one GPU each), as
// a program managing several GPUs from one thread does (NCCL user guide, "Management Of Multiple GPUs
// From One Thread").
struct ProcessDecl {
  std::string name;
  SourceLoc loc;
  RankSet ranks;
};

struct RankBody {
  SourceLoc loc;
  bool star = false;       // `rank *`
  std::vector<int> ranks;  // the ranks named by the header
  std::vector<Stmt> body;
};

// `observed OUTCOME "SOURCE"` (LANGUAGE_ADDITIONS.md): what the recorded run a scenario was imported from
// did, and the source that recorded it. `collmc check` does not answer a plain `safe` for a run that hung.
enum class ObservedOutcome { Completed, Hung, Killed };
std::optional<ObservedOutcome> observed_outcome_from_name(std::string_view name);
std::string_view observed_outcome_name(ObservedOutcome outcome);
struct Observed {
  ObservedOutcome outcome = ObservedOutcome::Hung;
  std::string source;  // "NCCL INFO logs", with what they cannot see
  SourceLoc loc;
};

// `history COMM [device=N] [host=N] [connected]` (LANGUAGE.md, "What an imported comm has behind it"): COMM
// starts (from the moment it is created) as after N device slots and N host slots that every member issued and
// completed, with its connections set up when `connected`: the state the calls an import left out leave behind,
// so that the calls kept carry the slot numbers of the whole run.
struct CommHistory {
  std::string comm;
  SourceLoc loc;
  SourceLoc comm_loc;
  uint32_t host = 0;
  uint32_t device = 0;
  bool connected = false;
};

struct Scenario {
  std::shared_ptr<const SourceFile> source;
  int ranks = 0;
  SourceLoc ranks_loc;
  std::string name;
  std::optional<Verdict> expect;
  SourceLoc expect_loc;
  std::optional<Observed> observed;
  Knobs knobs;
  std::optional<SourceLoc> nccl_version_loc;  // where `set nccl_version` was given
  std::vector<CommDecl> comms;
  std::vector<ProcessDecl> processes;
  std::vector<CommHistory> histories;
  std::vector<RankBody> bodies;
};

}  // namespace collmc::model

// The operations a scenario can name, the knobs, the verdicts, and the semantics table: which class
// (SEMANTICS.md §1) each operation belongs to under each profile. The checker's step relation reads
// this table; nothing else decides what kind of wait an operation is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace collmc::model {

// The operations, in operations.def's order.
enum class OpKind : uint8_t {
#define COLLMC_OP(kind, ...) kind,
#include "collmc/model/operations.def"
#undef COLLMC_OP
};

// How a statement is written (LANGUAGE.md statements): the parser and the printer switch on this.
enum class OpForm : uint8_t {
  BufferSize,    // KEYWORD BUF [SIZE]
  Buffer,        // KEYWORD BUF
  Window,        // KEYWORD COMM BUF [symmetric|default]
  CommBuffer,    // KEYWORD COMM BUF
  Comm,          // KEYWORD COMM
  Split,         // split PARENT -> CHILD|none
  Collective,    // KEYWORD COMM BUF [-> BUF2] [ARGS]
  PointToPoint,  // KEYWORD COMM PEER BUF [ARGS]
  Barrier,       // barrier COMM [ARGS]
  SyncStream,    // sync STREAM
  SyncDevice,    // sync device
  PutSignal,     // put_signal COMM PEER BUF -> WINDOW [ARGS]
  Signal,        // signal COMM PEER [ARGS] / wait_signal COMM PEER [count=N] [ARGS]
  Key,           // KEYWORD KEY (a name or "string")
  KeyRanks,      // KEYWORD KEY [RANKS] (default: every rank)
  WindowTarget,  // KEYWORD COMM PEER BUF [ARGS]: an MPI one-sided call on window COMM BUF at target PEER
  WindowSync,    // KEYWORD COMM BUF [ARGS]: an MPI window synchronization of every target (lock_all, fence, ...)
  Bare,          // KEYWORD
};

enum class Profile : uint8_t { Nccl, Mpi };
enum class CommMode : uint8_t { Blocking, Nonblocking };
enum class StreamProgress : uint8_t { Independent, Serialized };
// How an MPI library moves a rooted collective (MPI_Bcast, MPI_Reduce) whose early ranks (the
// broadcast's root, the reduce's other ranks) may leave before the others arrive (MPI 4.1 §6.14):
// - Sync: no rank leaves before every member arrived (what a portable program must allow for, and
//   what a rendezvous-sized message does);
// - Strong: the early ranks leave at once; the others complete without them (asynchronous progress:
//   a progress thread, offload, or an eager message already in the receiver's memory);
// - Weak: the early ranks leave at once; the others complete only once each early rank has entered
//   MPI again (any MPI call, or its end): a rank blocked outside MPI (an NCCL host-blocking call, a
//   host store wait) moves no MPI messages. SEMANTICS_NOTES.md, "MPI progress".
// - Portable (the default, issue 32): the check explores Sync, Strong and Weak and reports a hang that
//   any of them reaches, naming it (checker::progress_models). Never a model the semantics runs under.
enum class MpiProgress : uint8_t { Sync, Strong, Weak, Portable };
// GinOnly (NCCL 2.32+, NCCL_WIN_GIN_ONLY): a window registered for GIN only; no symmetric kernel, no CE RMA.
enum class RegFlag : uint8_t { Symmetric, Default, GinOnly };
// `mode=` of an MPI window call (issue 32): a lock's type (MPI_LOCK_EXCLUSIVE when not said), a flush that
// completes at the origin only (MPI_Win_flush_local), a fence's MPI_MODE_NOSUCCEED (no epoch after it).
enum class WinMode : uint8_t { Plain, Shared, Local, NoSucceed };

// NCCL_VERSION_CODE of a release (2.28.3 is 22803), as nccl.h computes it from 2.9 on.
constexpr uint32_t nccl_version_code(uint32_t major, uint32_t minor, uint32_t patch) {
  return major * 10000 + minor * 100 + patch;
}
// The release every rule was calibrated on (2x H200, docs/HARDWARE.md).
inline constexpr uint32_t kCalibratedNcclVersion = nccl_version_code(2, 28, 3);
std::string nccl_version_text(uint32_t code);  // "2.28.3"
// Version-dependent rules (docs/SEMANTICS_NOTES.md, "NCCL versions", has each with its source):
// - from 2.29 the one-sided calls exist (first_nccl_version below);
// - up to 2.23.x ncclCommAbort waits, like destroy, until every other member (on the node) has aborted
//   or destroyed the comm: the proxy service thread keeps serving its local peers until they close
//   (src/proxy.cc, ncclProxyService, v2.17.1-1 ... v2.23.4-1; NVIDIA/nccl#863, #1013, pytorch#118692).
//   From 2.24 (NCCL_CUMEM_HOST_ENABLE on by default) an abort closes those connections: it is local.
inline constexpr uint32_t kAbortIsLocal = nccl_version_code(2, 24, 0);
// - from 2.29 ncclCommWindowRegister with a NULL buffer or size 0 returns ncclInvalidArgument at once
//   (src/dev_runtime.cc, v2.29.2-1); up to 2.28.x it returned ncclSuccess without joining the
//   collective (the calibrated register_size_zero deadlock).
inline constexpr uint32_t kRegisterEmptyIsError = nccl_version_code(2, 29, 0);
// - from 2.29 the first one-sided call (put_signal, signal, wait_signal) a rank issues on a comm
//   registers NCCL's signal window at its group end: a symmetric registration over every member
//   (src/enqueue.cc rmaTaskAppend, src/group.cc, src/rma/rma_ce.cc ncclRmaCeInit, v2.29.2-1 ...
//   v2.30.7-1). It exists with the one-sided calls, so first_nccl_version covers it.
// - up to 2.29.x the members must register windows of one size; from 2.30 the sizes may differ
//   (src/dev_runtime.cc, v2.30.3-1: lsaMaxSize, "to support asymmetric sizes").
inline constexpr uint32_t kRegisterSizesMayDiffer = nccl_version_code(2, 30, 0);

// NCCL 2.31 and 2.32 (issue 36; docs/SEMANTICS_NOTES.md, "NCCL 2.31 and 2.32", has each rule with its
// file:line in the 2.31.0a16 source, the mirror STyGIANet/nccl branch dev, and its status). 2.31.0a16 was
// measured (one shared H200); 2.31.2 and 2.32 are taken from their release notes. Every 2.31.0 pre-release
// is modelled as a16 (the RMA setup moved in a14, the destroy barrier came in a9).
// - from 2.31 ncclCommDestroy of a comm that was not aborted, and ncclCommFinalize, run an intra-node
//   barrier over the comm's ranks on the host (src/init.cc commDestroySync); an abort never joins it, a
//   destroy after finalize does not run it again. Up to 2.30.x only a connected comm's destroy waited.
inline constexpr uint32_t kDestroyBarrier = nccl_version_code(2, 31, 0);
// - from 2.31 the RMA setup runs at a comm's first window registration, in its group end (the user's
//   window, then one symmetric signal window per RMA context: src/dev_runtime.cc, src/group.cc,
//   src/rma/rma_ce.cc), or at init with NCCL_RMA_EAGER_INIT; the first one-sided call is no longer a
//   rendezvous, and ncclSignal/ncclWaitSignal before it return ncclInvalidUsage (src/enqueue.cc).
inline constexpr uint32_t kRmaSetupAtRegister = nccl_version_code(2, 31, 0);
// - from 2.31 the nccl*Config collectives take a per-call ncclCollConfig_t (nccl.h: "the same
//   configuration must be set on every rank; NCCL validates it only locally"), and ncclConfig_t has
//   launchOrderImplicit ("since 2.31", docs/userguide api/types.rst).
inline constexpr uint32_t kCollConfig = nccl_version_code(2, 31, 0);
// - from 2.32 a window may be registered for GIN only (NCCL_WIN_GIN_ONLY, the v2.32.3-1 release notes).
inline constexpr uint32_t kGinOnlyWindows = nccl_version_code(2, 32, 0);

// The NCCL releases collmc knows: NVIDIA/nccl's tags v2.17.1-1 ... v2.30.7-1, the 2.31 development line's
// 2.31.0a16 (its version code is 2.31.0's: NCCL_VERSION_CODE has no pre-release part), and the 2.31.2,
// 2.32.3 and 2.32.6 releases (by their notes). A release in a minor line collmc knows without a patch
// number (`2.29`) is that line.
inline constexpr uint32_t kKnownNcclReleases[] = {
    21701, 21801, 21803, 21805, 21806, 21901, 21903, 21904, 22003, 22005, 22105, 22203,
    22304, 22403, 22501, 22602, 22603, 22605, 22606, 22703, 22705, 22706, 22707, 22803,
    22807, 22809, 22902, 22903, 22907, 23003, 23004, 23007, 23100, 23102, 23203, 23206,
};
// The one 2.31.0 collmc knows is the measured pre-release (nccl_version_text writes it so).
inline constexpr uint32_t kMeasuredPrerelease = nccl_version_code(2, 31, 0);
inline constexpr uint32_t kMeasuredPrereleaseNumber = 16;  // 2.31.0a16
// The known release nearest `code` (the one a warning names), and whether `code` is known.
uint32_t nearest_known_nccl_release(uint32_t code);
bool known_nccl_release(uint32_t code);

// The MPI usage rules (mpi_rules.def): who judges each, and the MPI 4.1 section that makes it erroneous.
enum class MpiRuleJudge : uint8_t { Semantics, Import };
enum class MpiRule : uint8_t {
#define COLLMC_MPI_RULE(kind, ...) kind,
#include "collmc/model/mpi_rules.def"
#undef COLLMC_MPI_RULE
};
inline constexpr MpiRule kAllMpiRules[] = {
#define COLLMC_MPI_RULE(kind, ...) MpiRule::kind,
#include "collmc/model/mpi_rules.def"
#undef COLLMC_MPI_RULE
};
inline constexpr size_t kMpiRuleCount = sizeof(kAllMpiRules) / sizeof(kAllMpiRules[0]);
struct MpiRuleInfo {
  MpiRule rule;
  std::string_view name;
  MpiRuleJudge judged_by;
  std::string_view section;
  std::string_view what;
};
const MpiRuleInfo& mpi_rule_info(MpiRule rule);
std::optional<MpiRule> mpi_rule_named(std::string_view name);
std::string mpi_rule_names();  // "null_communicator, null_datatype, ..." for messages
// "TEXT: WHAT (MPI 4.1 sec. SECTION)": a rule's message about one call.
std::string mpi_rule_message(MpiRule rule, const std::string& text);

inline constexpr int64_t kMpiTagUbGuaranteed = 32767;  // MPI 4.1 sec. 9.1.1

struct Knobs {
  Profile profile = Profile::Nccl;
  CommMode comm_mode = CommMode::Blocking;
  bool runtime_connect = true;
  StreamProgress stream_progress = StreamProgress::Independent;
  MpiProgress mpi_progress = MpiProgress::Portable;
  // `set nccl_version = 2.29`: the NCCL release whose version-dependent rules apply
  // (SEMANTICS_NOTES.md, "Issue 14"). A release without a patch number means its first (x.y.0).
  uint32_t nccl_version = kCalibratedNcclVersion;
  // Whether the scenario sets nccl_version: an NCCL replay checks a scenario that does not at the
  // version of the NCCL it loads (replay::model_loaded_nccl).
  bool nccl_version_set = false;
  // NCCL_RMA_EAGER_INIT=1 (ncclConfig_t.rmaEagerInit) on every comm: from 2.31 the RMA setup runs in
  // init, so one-sided calls need no window first (kRmaSetupAtRegister). No effect before 2.31.
  bool rma_eager_init = false;
  // `set mpi_tag_ub = N`: the largest tag the MPI library takes (MPI_TAG_UB). Default: 32767, the least
  // every library guarantees (MPI 4.1 sec. 9.1.1), so a larger tag is not portable; the import writes the
  // value the recorded run's library reported.
  int64_t mpi_tag_ub = kMpiTagUbGuaranteed;
};

// SEMANTICS.md §1, plus the two composite forms the table names.
enum class OpClass : uint8_t {
  HostBlocking,    // HBC: blocks until every member made the matching call
  StreamOrdered,   // SOC: enqueued on a stream; completes on the device
  Local,           // returns at once
  DeviceSync,      // DEVSYNC: waits until some of its own device work drained
  StreamThenSync,  // barrier (nccl): a SOC, then a DEVSYNC on it
  LocalAfterSync,  // cuda_free, destroy (nccl): a DEVSYNC, then local effect
  HostPair,        // send/recv (mpi): a synchronous pair
  HostStore,       // waits on the host key-value store (a key set, a barrier's count reached)
};

// One row of operations.def.
struct OpInfo {
  OpKind kind;
  std::string_view keyword;
  OpForm form;
  OpClass nccl_class;
  OpClass mpi_class;
  bool symmetric;  // eligible for NCCL's symmetric kernels
  bool reduction;  // takes `op=`
  bool rooted;     // takes `root=`
  std::string_view nccl_name;
  std::string_view mpi_name;
};

// The table, indexed by OpKind. Header-only and constexpr: the LD_PRELOAD recorder, which links no
// collmc library, reads its names from here too.
// clang-format off
inline constexpr OpInfo kOperations[] = {
#define COLLMC_OP(kind, keyword, form, nccl_class, mpi_class, symmetric, reduction, rooted, trace_kind, nccl_name, \
                  mpi_name)                                                                                        \
  {OpKind::kind, keyword, OpForm::form, OpClass::nccl_class, OpClass::mpi_class, symmetric, reduction, rooted,     \
   nccl_name, mpi_name},
#include "collmc/model/operations.def"
#undef COLLMC_OP
};
// clang-format on
inline constexpr size_t kOperationCount = sizeof kOperations / sizeof kOperations[0];

static_assert(
    [] {
      for (size_t i = 0; i < kOperationCount; ++i)
        if (static_cast<size_t>(kOperations[i].kind) != i) return false;
      return true;
    }(),
    "kOperations is indexed by OpKind");

constexpr const OpInfo& op_info(OpKind kind) { return kOperations[static_cast<size_t>(kind)]; }

std::string_view op_name(OpKind kind);                         // the scenario keyword ("register", "sync", ...)
std::optional<OpKind> op_from_keyword(std::string_view word);  // not for `sync` (two forms)
std::string op_keyword_list();                                 // "alloc, cuda_malloc, ..." for error messages

constexpr OpForm op_form(OpKind kind) { return op_info(kind).form; }
constexpr bool is_collective(OpKind kind) { return op_form(kind) == OpForm::Collective; }  // not p2p, not barrier
constexpr bool is_p2p(OpKind kind) { return op_form(kind) == OpForm::PointToPoint; }       // send, recv
constexpr bool symmetric_eligible(OpKind kind) { return op_info(kind).symmetric; }
constexpr bool takes_root(OpKind kind) { return op_info(kind).rooted; }
constexpr bool takes_redop(OpKind kind) { return op_info(kind).reduction; }
constexpr bool is_one_sided(OpKind kind) {
  return op_form(kind) == OpForm::PutSignal || op_form(kind) == OpForm::Signal;
}
// The first NCCL release that has the operation (0: every release collmc models).
constexpr uint32_t first_nccl_version(OpKind kind) {
  switch (kind) {
    case OpKind::Shrink:
      return nccl_version_code(2, 27, 0);
    case OpKind::Revoke:
      return nccl_version_code(2, 28, 7);
    case OpKind::Grow:
    case OpKind::GrowId:
      return nccl_version_code(2, 29, 0);
    default:
      return is_one_sided(kind) ? nccl_version_code(2, 29, 0) : 0;
  }
}
// NCCL calls MPI has no counterpart for: refused on an mpi comm.
constexpr bool nccl_only(OpKind kind) {
  return is_one_sided(kind) || kind == OpKind::Shrink || kind == OpKind::Grow || kind == OpKind::GrowId ||
         kind == OpKind::Revoke;
}

// MPI calls NCCL has no counterpart for: refused on an nccl comm.
constexpr bool mpi_only(OpKind kind) {
  return op_form(kind) == OpForm::WindowTarget || op_form(kind) == OpForm::WindowSync || kind == OpKind::MpiFinalize;
}
// An MPI one-sided transfer (put, get, accumulate): it must stand inside an access epoch of its target.
constexpr bool is_rma_transfer(OpKind kind) {
  return kind == OpKind::RmaPut || kind == OpKind::RmaGet || kind == OpKind::RmaAccumulate;
}
// The call's `mode=` values it takes (WinMode), none when it takes no mode= of a window call.
constexpr bool takes_win_mode(OpKind kind, WinMode mode) {
  switch (kind) {
    case OpKind::WinLock:
      return mode == WinMode::Shared;
    case OpKind::WinFlush:
    case OpKind::WinFlushAll:
      return mode == WinMode::Local;
    case OpKind::WinFence:
      return mode == WinMode::NoSucceed;
    default:
      return false;
  }
}

constexpr OpClass op_class(OpKind kind, Profile profile) {
  return profile == Profile::Mpi ? op_info(kind).mpi_class : op_info(kind).nccl_class;
}

enum class Verdict : uint8_t {
  Safe,
  Deadlock,
  Mismatch,
  DivergentKernel,
  UseAfterDeregister,
  UseAfterFree,
  UsageError,
  Inconclusive,
};

std::string_view verdict_name(Verdict v);
std::optional<Verdict> verdict_from_name(std::string_view name);

std::string_view profile_name(Profile p);
std::string_view comm_mode_name(CommMode m);
std::string_view mpi_progress_name(MpiProgress p);                 // "sync", "strong", "weak", "portable"
std::string_view win_mode_name(WinMode m);                         // "shared", "local", "nosucceed"; "" for Plain
std::optional<WinMode> win_mode_from_name(std::string_view name);  // not for Plain (no name)

}  // namespace collmc::model

// The operations a scenario can name, the knobs, the verdicts, and the semantics table: which class
// (SEMANTICS.md §1) each operation belongs to under each profile. The checker's step relation reads
// this table; nothing else decides what kind of wait an operation is.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace collmc::model {

enum class OpKind : uint8_t {
  Alloc,
  CudaMalloc,
  Free,
  CudaFree,
  Register,
  Deregister,
  RegisterLocal,
  DeregisterLocal,
  Init,
  Split,
  Finalize,
  Destroy,
  Abort,
  AllReduce,
  AllGather,
  ReduceScatter,
  Broadcast,
  Reduce,
  AllToAll,
  Send,
  Recv,
  Barrier,
  SyncStream,
  SyncDevice,
};

std::string_view op_name(OpKind kind);                         // the scenario keyword ("register", "sync", ...)
std::optional<OpKind> op_from_keyword(std::string_view word);  // not for `sync` (two forms)

bool is_collective(OpKind kind);  // all_reduce .. all_to_all (not send/recv, not barrier)
bool is_p2p(OpKind kind);         // send, recv
// Eligible for NCCL 2.28's symmetric kernels (src/scheduler/symmetric_sched.cc).
bool symmetric_eligible(OpKind kind);

enum class Profile : uint8_t { Nccl, Mpi };
enum class CommMode : uint8_t { Blocking, Nonblocking };
enum class StreamProgress : uint8_t { Independent, Serialized };
enum class RegFlag : uint8_t { Symmetric, Default };

struct Knobs {
  Profile profile = Profile::Nccl;
  CommMode comm_mode = CommMode::Blocking;
  bool runtime_connect = true;
  StreamProgress stream_progress = StreamProgress::Independent;
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
};

OpClass op_class(OpKind kind, Profile profile);

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

}  // namespace collmc::model

#include "collmc/model/operations.h"

#include <array>
#include <utility>

namespace collmc::model {

namespace {
constexpr std::array<std::pair<OpKind, std::string_view>, 24> kOpNames{{
    {OpKind::Alloc, "alloc"},
    {OpKind::CudaMalloc, "cuda_malloc"},
    {OpKind::Free, "free"},
    {OpKind::CudaFree, "cuda_free"},
    {OpKind::Register, "register"},
    {OpKind::Deregister, "deregister"},
    {OpKind::RegisterLocal, "register_local"},
    {OpKind::DeregisterLocal, "deregister_local"},
    {OpKind::Init, "init"},
    {OpKind::Split, "split"},
    {OpKind::Finalize, "finalize"},
    {OpKind::Destroy, "destroy"},
    {OpKind::Abort, "abort"},
    {OpKind::AllReduce, "all_reduce"},
    {OpKind::AllGather, "all_gather"},
    {OpKind::ReduceScatter, "reduce_scatter"},
    {OpKind::Broadcast, "broadcast"},
    {OpKind::Reduce, "reduce"},
    {OpKind::AllToAll, "all_to_all"},
    {OpKind::Send, "send"},
    {OpKind::Recv, "recv"},
    {OpKind::Barrier, "barrier"},
    {OpKind::SyncStream, "sync"},
    {OpKind::SyncDevice, "sync"},
}};

constexpr std::array<std::pair<Verdict, std::string_view>, 8> kVerdictNames{{
    {Verdict::Safe, "safe"},
    {Verdict::Deadlock, "deadlock"},
    {Verdict::Mismatch, "mismatch"},
    {Verdict::DivergentKernel, "divergent_kernel"},
    {Verdict::UseAfterDeregister, "use_after_deregister"},
    {Verdict::UseAfterFree, "use_after_free"},
    {Verdict::UsageError, "usage_error"},
    {Verdict::Inconclusive, "inconclusive"},
}};
}  // namespace

std::string_view op_name(OpKind kind) {
  for (const auto& [k, name] : kOpNames)
    if (k == kind) return name;
  return "?";
}

std::optional<OpKind> op_from_keyword(std::string_view word) {
  if (word == "sync") return std::nullopt;
  for (const auto& [k, name] : kOpNames)
    if (name == word) return k;
  return std::nullopt;
}

bool is_collective(OpKind kind) {
  switch (kind) {
    case OpKind::AllReduce:
    case OpKind::AllGather:
    case OpKind::ReduceScatter:
    case OpKind::Broadcast:
    case OpKind::Reduce:
    case OpKind::AllToAll:
      return true;
    default:
      return false;
  }
}

bool is_p2p(OpKind kind) { return kind == OpKind::Send || kind == OpKind::Recv; }

bool symmetric_eligible(OpKind kind) {
  return kind == OpKind::AllReduce || kind == OpKind::AllGather || kind == OpKind::ReduceScatter;
}

OpClass op_class(OpKind kind, Profile profile) {
  const bool mpi = profile == Profile::Mpi;
  switch (kind) {
    case OpKind::Register:
    case OpKind::Init:
    case OpKind::Split:
      return OpClass::HostBlocking;
    case OpKind::Deregister:
      return mpi ? OpClass::HostBlocking : OpClass::Local;  // MPI_Win_free is collective
    case OpKind::RegisterLocal:
    case OpKind::DeregisterLocal:
    case OpKind::Alloc:
    case OpKind::CudaMalloc:
    case OpKind::Free:
    case OpKind::Abort:
      return OpClass::Local;
    case OpKind::CudaFree:
      return mpi ? OpClass::Local : OpClass::LocalAfterSync;
    case OpKind::Finalize:
      return mpi ? OpClass::Local : OpClass::DeviceSync;
    case OpKind::Destroy:
      return mpi ? OpClass::Local : OpClass::LocalAfterSync;
    case OpKind::AllReduce:
    case OpKind::AllGather:
    case OpKind::ReduceScatter:
    case OpKind::Broadcast:
    case OpKind::Reduce:
    case OpKind::AllToAll:
      return mpi ? OpClass::HostBlocking : OpClass::StreamOrdered;
    case OpKind::Send:
    case OpKind::Recv:
      return mpi ? OpClass::HostPair : OpClass::StreamOrdered;
    case OpKind::Barrier:
      return mpi ? OpClass::HostBlocking : OpClass::StreamThenSync;
    case OpKind::SyncStream:
    case OpKind::SyncDevice:
      return mpi ? OpClass::Local : OpClass::DeviceSync;
  }
  return OpClass::Local;
}

std::string_view verdict_name(Verdict v) {
  for (const auto& [k, name] : kVerdictNames)
    if (k == v) return name;
  return "?";
}

std::optional<Verdict> verdict_from_name(std::string_view name) {
  for (const auto& [k, n] : kVerdictNames)
    if (n == name) return k;
  return std::nullopt;
}

std::string_view profile_name(Profile p) { return p == Profile::Mpi ? "mpi" : "nccl"; }
std::string_view comm_mode_name(CommMode m) { return m == CommMode::Nonblocking ? "nonblocking" : "blocking"; }

}  // namespace collmc::model

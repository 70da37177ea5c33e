// The scenario keyword for each call kind (LANGUAGE.md statements).
#include "collmc/traces/trace.h"

namespace collmc::traces {

const char* call_kind_name(CallKind kind) {
  switch (kind) {
    case CallKind::CommInit:
      return "init";
    case CallKind::CommSplit:
      return "split";
    case CallKind::CommFinalize:
      return "finalize";
    case CallKind::CommDestroy:
      return "destroy";
    case CallKind::CommAbort:
      return "abort";
    case CallKind::WindowRegister:
      return "register";
    case CallKind::WindowDeregister:
      return "deregister";
    case CallKind::LocalRegister:
      return "register_local";
    case CallKind::LocalDeregister:
      return "deregister_local";
    case CallKind::MemAlloc:
      return "alloc";
    case CallKind::MemFree:
      return "free";
    case CallKind::CudaMalloc:
      return "cuda_malloc";
    case CallKind::CudaFree:
      return "cuda_free";
    case CallKind::AllReduce:
      return "all_reduce";
    case CallKind::AllGather:
      return "all_gather";
    case CallKind::ReduceScatter:
      return "reduce_scatter";
    case CallKind::Broadcast:
      return "broadcast";
    case CallKind::Reduce:
      return "reduce";
    case CallKind::AllToAll:
      return "all_to_all";
    case CallKind::Barrier:
      return "barrier";
    case CallKind::Send:
      return "send";
    case CallKind::Recv:
      return "recv";
    case CallKind::GroupStart:
      return "group_start";
    case CallKind::GroupEnd:
      return "group_end";
    case CallKind::StreamSync:
      return "sync";
    case CallKind::DeviceSync:
      return "sync device";
    case CallKind::Other:
      return "other";
  }
  return "other";
}

}  // namespace collmc::traces

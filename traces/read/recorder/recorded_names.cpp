// The NCCL recorder format's call-name table (recorded_names.h).
#include "recorded_names.h"

#include "collmc/model/operations.h"

namespace collmc::traces {

// Every recorded name: operations.def's NCCL and CUDA names, then the entry points that are another
// form of an operation or none.
const std::map<std::string, RecordedName, std::less<>>& recorded_names() {
  static const auto names = [] {
    std::map<std::string, RecordedName, std::less<>> m;
    for (const model::OpInfo& op : model::kOperations)
      if (!op.nccl_name.empty())
        m.emplace(std::string(op.nccl_name), RecordedName{call_kind_of(op.kind), Recorded::Operation});
    m.emplace("ncclCommInitRankConfig", RecordedName{CallKind::CommInit, Recorded::Operation});
    m.emplace("ncclCommInitRankScalable", RecordedName{CallKind::CommInit, Recorded::Operation});
    m.emplace("ncclBcast", RecordedName{CallKind::Broadcast, Recorded::Operation});
    // NCCL 2.31's per-collective config variant (its config's name in the `config` field: `config=`).
    m.emplace("ncclAllReduceConfig", RecordedName{CallKind::AllReduce, Recorded::Operation});
    m.emplace("ncclGroupStart", RecordedName{CallKind::GroupStart, Recorded::GroupStart});
    m.emplace("ncclGroupEnd", RecordedName{CallKind::GroupEnd, Recorded::GroupEnd});
    m.emplace("ncclGetUniqueId", RecordedName{CallKind::Other, Recorded::Ignored});
    m.emplace(
        "ncclCommInitAll",
        RecordedName{CallKind::Other, Recorded::Unmodelled,
                     "ncclCommInitAll (several ranks in one process) is not modelled; its communicators are unknown"});
    // The scenario has shrink and grow (issue 23), but their children's members are not in the trace
    // yet (the excluded ranks, the new ranks): named, not read, until the reader learns them.
    m.insert_or_assign("ncclCommShrink",
                       RecordedName{CallKind::Other, Recorded::Unmodelled,
                                    "ncclCommShrink is not read yet; calls on the shrunk communicator name a "
                                    "communicator of its own"});
    m.insert_or_assign("ncclCommGrow",
                       RecordedName{CallKind::Other, Recorded::Unmodelled,
                                    "ncclCommGrow is not read yet; calls on the grown communicator name a "
                                    "communicator of its own"});
    return m;
  }();
  return names;
}

}  // namespace collmc::traces

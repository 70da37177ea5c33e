// Call kinds and scenario operations: the same rows of model/operations.def, in the same order.
#include "collmc/traces/trace.h"

namespace collmc::traces {

namespace {
constexpr size_t kOperationKinds = static_cast<size_t>(CallKind::GroupStart);
static_assert(kOperationKinds == model::kOperationCount, "one call kind per operation, then the group delimiters");
}  // namespace

std::optional<model::OpKind> op_kind_of(CallKind kind) {
  const auto index = static_cast<size_t>(kind);
  if (index >= kOperationKinds) return std::nullopt;
  return model::kOperations[index].kind;
}

CallKind call_kind_of(model::OpKind op) { return static_cast<CallKind>(static_cast<size_t>(op)); }

const char* call_kind_name(CallKind kind) {
  switch (kind) {
    case CallKind::GroupStart:
      return "group_start";
    case CallKind::GroupEnd:
      return "group_end";
    case CallKind::Other:
      return "other";
    case CallKind::DeviceSync:
      return "sync device";  // the one keyword written with its argument: `sync` alone is a stream
    default:
      break;
  }
  auto op = op_kind_of(kind);
  return op ? model::op_name(*op).data() : "other";
}

}  // namespace collmc::traces

// The NCCL recorder format's one table of call names (issue 33): every name libcollmc_record.so writes
// in a line's "call", mapped to the trace's CallKind and to what the reader does with it. The operations'
// names come from model/include/collmc/model/operations.def (nccl_name), so a new NCCL operation needs no
// entry here; only entry points that are another form of an operation, or none, are listed. Readers and
// rules switch on the CallKind, never on the name.
#pragma once

#include <map>
#include <string>

#include "collmc/traces/trace.h"

namespace collmc::traces {

// What the reader makes of a recorded function: the call kind, and for entry points that are no
// operation of their own, what becomes of them.
enum class Recorded {
  Operation,   // the call kind's operation (its arguments read by the kind)
  GroupStart,  // ncclGroupStart / ncclGroupEnd: delimit what is issued together
  GroupEnd,
  Ignored,     // local and naming nothing a scenario needs (ncclGetUniqueId)
  Unmodelled,  // no statement for it: an Other call, with a note said once
};

struct RecordedName {
  CallKind kind = CallKind::Other;
  Recorded what = Recorded::Unmodelled;
  const char* note = nullptr;  // Unmodelled: what the scenario then lacks
};

// Every recorded name: operations.def's NCCL and CUDA names, then the entry points that are another
// form of an operation or none.
const std::map<std::string, RecordedName, std::less<>>& recorded_names();

}  // namespace collmc::traces

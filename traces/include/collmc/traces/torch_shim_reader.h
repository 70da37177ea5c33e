// The torch shim's traces (python/collmc/record/torch_shim.py; docs/TRACES.md, "The torch shim"): what
// torch.distributed did, recorded from Python, one JSON-lines file per process in the recorder's line format
// ("format":"collmc-torch"), and the NCCL recorder's files of the same processes, correlated with them.
#pragma once

#include <string>
#include <vector>

#include "collmc/traces/recorder_reader.h"
#include "collmc/traces/trace.h"

namespace collmc::traces {

// True when the file's first line is a torch shim `process` line.
bool is_torch_shim_file(const std::string& path);

// The torch shim's files and any NCCL recorder files beside them, as one Trace (format "torch"):
// communicators are the process groups torch built (named as PyTorch names them; gloo groups are `mpi`
// comms, whose calls block the host), each call carries the user's source line. Where a process also has an
// NCCL recorder trace, its NCCL calls are the calls, each named after the torch call that made it (same thread,
// between its enter and return), and the torch calls that made no NCCL call (gloo groups) are merged in by time.
// Throws TraceInputError for bad input.
Trace read_torch_shim_traces(const std::vector<std::string>& files, bool full_history = true);
Trace read_torch_shim_buffers(const std::vector<std::pair<std::string, std::string>>& files, bool full_history = true);

}  // namespace collmc::traces

// `collmc trace import`: which files a path names, which format they are in, and the reader for it.
#pragma once

#include <string>
#include <vector>

#include "collmc/traces/trace.h"

namespace collmc::traces {

enum class TraceFormat { Auto, Recorder, FlightRecorder, NcclLog };

// "auto", "recorder", "flight-recorder", "nccl-log"; throws std::invalid_argument for anything else.
TraceFormat parse_trace_format(const std::string& name);
const char* trace_format_name(TraceFormat format);

// The files `paths` name: a directory stands for the regular files directly in it (sorted, hidden
// files skipped). Throws TraceInputError for a path that does not exist or an empty directory.
std::vector<std::string> expand_trace_paths(const std::vector<std::string>& paths);

// The format of one file from its first bytes: a pickle or a JSON object with `pg_config`/`entries`
// is a Flight Recorder dump, "NCCL INFO"/"NCCL WARN" lines an NCCL log, JSON objects one per line a
// recorder trace. Throws TraceInputError when it is none of them.
TraceFormat detect_trace_format(const std::string& file);

struct ImportOptions {
  // Keep every call, not only what a hang needs (trim_history, trace.h).
  bool full_history = false;
  // Workers that read files in parallel (0: one per core).
  unsigned threads = 0;
};

// Reads `paths` (files or directories) in `format` (Auto: detected, and every file must agree), leaves out
// the history no hang needs (unless options.full_history), and fills in what the source cannot see
// (Trace::cannot_see) and what the recorded run did (Trace::outcome: from the calls' states, and from an
// `outcome.txt` beside the traces, as the GPU fixtures keep: lines "rank N: ...: hung" / "exited 0").
Trace import_traces(const std::vector<std::string>& paths, TraceFormat format, const ImportOptions& options = {});

}  // namespace collmc::traces

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

// Reads `paths` (files or directories) in `format` (Auto: detected, and every file must agree).
Trace import_traces(const std::vector<std::string>& paths, TraceFormat format);

}  // namespace collmc::traces

// What --watch does once it names a hang (collmc record --watch, collmc watch): the --on-hang choice, and
// the steps of an abort. The logic is in watch/ (job_control.h, watcher.h); this is the CLI's wording.
#pragma once

#include <sys/types.h>

#include <set>
#include <string>

#include "collmc/watch/watcher.h"

namespace collmc::cli {

struct OnHang {
  enum class Kind { Report, Abort, Command };
  Kind kind = Kind::Report;
  std::string command;
};

// "report", "abort", or a shell command; throws po::error for an empty one.
OnHang parse_on_hang(const std::string& text);

// Prints the named hang (describe_hang) to stderr and writes its files; returns what it printed.
std::string name_hang(const watch::Watcher& watcher, const watch::LiveDiagnosis& d);

// --on-hang abort: notes the shared memory the job's processes hold (process group `pgid`, and the pids the
// traces of `trace_dir` name for this host), then sends them SIGTERM.
void abort_job(pid_t pgid, const std::string& trace_dir, std::set<std::string>& shared_memory);
// Once the job's leader has ended: kills what is left of the job, waits for it, removes the shared memory.
void finish_abort(pid_t pgid, const std::string& trace_dir, const std::set<std::string>& shared_memory);

}  // namespace collmc::cli

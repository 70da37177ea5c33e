// What `--on-hang` does to a job on this host (docs/TRACES.md, "Watching a job"): which processes are the
// job's, which shared-memory files they hold, a command run with the hang's files named in its
// environment. Nothing here knows MPI or NCCL: the job's processes say which /dev/shm files they map.
#pragma once

#include <sys/types.h>

#include <set>
#include <string>
#include <vector>

namespace collmc::watch {

// The processes of process group `pgid` (from /proc), and the processes of this host whose pids the trace
// files' `process` lines name (a rank a launcher put in a group of its own).
std::vector<pid_t> job_processes(pid_t pgid, const std::vector<pid_t>& traced);

// The processes the trace files of `dir` name (their `process` lines), and those of them on this host.
struct TracedProcess {
  std::string host;
  pid_t pid = 0;
};
std::vector<TracedProcess> traced_processes(const std::string& dir);
std::vector<pid_t> traced_pids_on_this_host(const std::string& dir);

// Whether the job whose traces are in `dir` has ended: its traces name processes of this host only, at
// least one, and none of them runs. (Processes of other hosts cannot be seen from here: never ended.)
bool job_ended(const std::string& dir);

// The files under /dev/shm that `pids` map or hold open (what MPI's and NCCL's shared-memory transports
// create), read from /proc/PID/maps and /proc/PID/fd.
std::set<std::string> shared_memory_of(const std::vector<pid_t>& pids);

// Removes those of `files` that still exist once their processes are gone; returns the ones removed.
std::vector<std::string> remove_left_behind(const std::set<std::string>& files);

// Starts `command` with /bin/sh -c, its environment naming the hang: COLLMC_HANG_DIR (the folder with
// hang.cmc, hang.txt), COLLMC_HANG_SCENARIO, COLLMC_HANG_TRACE_DIR and COLLMC_JOB_PGID. Returns its pid.
pid_t start_hang_command(const std::string& command, const std::string& hang_dir, const std::string& trace_dir,
                         pid_t job_pgid);

}  // namespace collmc::watch

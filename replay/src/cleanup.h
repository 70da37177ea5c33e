// What one replay leaves on this host, and how it goes. Every file a replay makes is named
// collmc-replay-<collmc's pid>-...: the shared block (/dev/shm) and a private run directory that
// holds the plan file and, for jobs mpirun starts, Open MPI's session directory and its
// shared-memory backing files (orte_tmpdir_base, btl_vader_backing_directory). The directory goes at
// the end of the run; after a SIGKILL of collmc, the next replay removes what the dead one left
// (names whose pid no longer runs, owned by this user; nothing else). Private to the replay library.
#pragma once

#include <string>
#include <vector>

namespace collmc::replay {

class RunDirectory {
 public:
  RunDirectory();   // creates <base>/collmc-replay-<pid>-d<n>, mode 0700; base: /dev/shm, else the temp dir
  ~RunDirectory();  // removes it with everything in it
  RunDirectory(const RunDirectory&) = delete;
  RunDirectory& operator=(const RunDirectory&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Removes the shared blocks and run directories of replays whose collmc is gone. Returns their paths.
std::vector<std::string> remove_dead_runs_leftovers();

}  // namespace collmc::replay

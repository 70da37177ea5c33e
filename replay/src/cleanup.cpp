#include "cleanup.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "shared_block.h"

namespace collmc::replay {

namespace {

namespace fs = std::filesystem;

std::atomic<int> next_directory{0};

// Where run directories go: /dev/shm (a tmpfs, where Open MPI puts its segments anyway), else the
// temp dir.
fs::path run_directory_base() {
  if (access("/dev/shm", W_OK | X_OK) == 0) return "/dev/shm";
  return fs::temp_directory_path();
}

// The collmc pid in "collmc-replay-<pid>-...", or 0.
pid_t owner_pid(const std::string& name) {
  const std::string prefix = shared_block_prefix().substr(1);  // without the leading '/'
  if (name.rfind(prefix, 0) != 0) return 0;
  const size_t start = prefix.size();
  const size_t end = name.find('-', start);
  if (end == std::string::npos || end == start) return 0;
  const std::string digits = name.substr(start, end - start);
  if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9) return 0;
  return static_cast<pid_t>(std::stol(digits));
}

bool process_exists(pid_t pid) { return kill(pid, 0) == 0 || errno == EPERM; }

}  // namespace

RunDirectory::RunDirectory() {
  const fs::path base = run_directory_base();
  path_ = (base / (shared_block_prefix().substr(1) + std::to_string(getpid()) + "-d" +
                   std::to_string(next_directory.fetch_add(1))))
              .string();
  if (mkdir(path_.c_str(), 0700) != 0)
    throw std::runtime_error("cannot create the run directory " + path_ + ": " + std::strerror(errno));
}

RunDirectory::~RunDirectory() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::vector<std::string> remove_dead_runs_leftovers() {
  std::vector<std::string> removed;
  std::vector<fs::path> bases = {"/dev/shm"};
  std::error_code ec;
  if (fs::path tmp = fs::temp_directory_path(ec); !ec && tmp != "/dev/shm") bases.push_back(tmp);
  std::vector<fs::path> dead;  // collected first: no removal while a directory is being read
  for (const auto& base : bases)
    for (fs::directory_iterator it(base, fs::directory_options::skip_permission_denied, ec), end; !ec && it != end;
         it.increment(ec)) {
      const pid_t pid = owner_pid(it->path().filename().string());
      if (pid <= 0 || pid == getpid() || process_exists(pid)) continue;
      struct stat st {};
      if (lstat(it->path().c_str(), &st) == 0 && st.st_uid == geteuid()) dead.push_back(it->path());
    }
  for (const auto& p : dead) {
    std::error_code rm;
    fs::remove_all(p, rm);
    if (!rm) removed.push_back(p.string());
  }
  return removed;
}

}  // namespace collmc::replay

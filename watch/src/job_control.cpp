// job_control.h: the job's processes and shared memory, from /proc.
#include "collmc/watch/job_control.h"

#include <signal.h>

#include <unistd.h>
#include <cerrno>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "collmc/watch/follower.h"

namespace collmc::watch {

namespace fs = std::filesystem;

namespace {

// The process group of `pid` (field 5 of /proc/PID/stat), or -1.
pid_t process_group(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  std::getline(in, stat);
  const size_t close = stat.rfind(')');  // the command name may hold spaces and parentheses
  if (close == std::string::npos) return -1;
  std::istringstream rest(stat.substr(close + 1));
  std::string state;
  long ppid = 0, pgrp = -1;
  rest >> state >> ppid >> pgrp;
  return rest ? static_cast<pid_t>(pgrp) : -1;
}

std::string this_host() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

// The string value of `key` in a flat JSON line, or "".
std::string string_member(const std::string& line, const std::string& key) {
  const size_t at = line.find("\"" + key + "\"");
  if (at == std::string::npos) return {};
  const size_t open = line.find('"', line.find(':', at) + 1);
  const size_t close = open == std::string::npos ? open : line.find('"', open + 1);
  return close == std::string::npos ? std::string() : line.substr(open + 1, close - open - 1);
}

long integer_member(const std::string& line, const std::string& key) {
  const size_t at = line.find("\"" + key + "\"");
  if (at == std::string::npos) return -1;
  const size_t colon = line.find(':', at);
  return colon == std::string::npos ? -1 : std::strtol(line.c_str() + colon + 1, nullptr, 10);
}

}  // namespace

std::vector<pid_t> job_processes(pid_t pgid, const std::vector<pid_t>& traced) {
  std::set<pid_t> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(name));
    if (pgid > 0 && process_group(pid) == pgid) out.insert(pid);
  }
  for (pid_t p : traced)
    if (p > 0 && kill(p, 0) == 0) out.insert(p);
  return {out.begin(), out.end()};
}

std::vector<TracedProcess> traced_processes(const std::string& dir) {
  std::vector<TracedProcess> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (!e.is_regular_file(ec)) continue;
    std::ifstream in(e.path());
    std::string first;
    std::getline(in, first);
    if (event_name(first) != "process") continue;
    const long pid = integer_member(first, "pid");
    if (pid > 0) out.push_back({string_member(first, "host"), static_cast<pid_t>(pid)});
  }
  return out;
}

std::vector<pid_t> traced_pids_on_this_host(const std::string& dir) {
  std::vector<pid_t> out;
  const std::string host = this_host();
  for (const auto& p : traced_processes(dir))
    if (p.host == host) out.push_back(p.pid);
  return out;
}

bool job_ended(const std::string& dir) {
  const auto processes = traced_processes(dir);
  const std::string host = this_host();
  if (processes.empty()) return false;
  for (const auto& p : processes)
    if (p.host != host || kill(p.pid, 0) == 0 || errno != ESRCH) return false;
  return true;
}

std::set<std::string> shared_memory_of(const std::vector<pid_t>& pids) {
  std::set<std::string> out;
  for (pid_t pid : pids) {
    const std::string proc = "/proc/" + std::to_string(pid);
    std::ifstream maps(proc + "/maps");
    for (std::string line; std::getline(maps, line);) {
      const size_t at = line.find("/dev/shm/");
      if (at == std::string::npos) continue;
      std::string path = line.substr(at);
      if (const size_t deleted = path.find(" (deleted)"); deleted != std::string::npos) continue;
      out.insert(path);
    }
    std::error_code ec;
    for (const auto& fd : fs::directory_iterator(proc + "/fd", ec)) {
      const fs::path target = fs::read_symlink(fd.path(), ec);
      if (!ec && target.string().rfind("/dev/shm/", 0) == 0) out.insert(target.string());
    }
  }
  return out;
}

std::vector<std::string> remove_left_behind(const std::set<std::string>& files) {
  std::vector<std::string> removed;
  for (const auto& f : files) {
    std::error_code ec;
    if (fs::is_regular_file(f, ec) && fs::remove(f, ec)) removed.push_back(f);
  }
  return removed;
}

pid_t start_hang_command(const std::string& command, const std::string& hang_dir, const std::string& trace_dir,
                         pid_t job_pgid) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  setenv("COLLMC_HANG_DIR", hang_dir.c_str(), 1);
  setenv("COLLMC_HANG_SCENARIO", (fs::path(hang_dir) / "hang.cmc").c_str(), 1);
  setenv("COLLMC_HANG_TRACE_DIR", trace_dir.c_str(), 1);
  setenv("COLLMC_JOB_PGID", std::to_string(job_pgid).c_str(), 1);
  unsetenv("LD_PRELOAD");
  execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
  _exit(127);
}

}  // namespace collmc::watch

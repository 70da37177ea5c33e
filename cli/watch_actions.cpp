// watch_actions.h: the CLI side of --on-hang.
#include "watch_actions.h"

#include <signal.h>
#include <unistd.h>

#include <iostream>

#include "cli_common.h"
#include "collmc/watch/job_control.h"

namespace collmc::cli {

OnHang parse_on_hang(const std::string& text) {
  if (text == "report") return {OnHang::Kind::Report, ""};
  if (text == "abort") return {OnHang::Kind::Abort, ""};
  if (text.empty()) throw po::error("--on-hang needs report, abort or a command");
  return {OnHang::Kind::Command, text};
}

std::string name_hang(const watch::Watcher& watcher, const watch::LiveDiagnosis& d) {
  std::string text = watch::describe_hang(d, watch::wall_clock_ns());
  std::cerr << text << std::flush;
  for (const auto& f : watcher.write_outputs(d, text)) std::cerr << "collmc watch: wrote " << f << "\n";
  return text;
}

void abort_job(pid_t pgid, const std::string& trace_dir, std::set<std::string>& shared_memory) {
  const auto pids = watch::job_processes(pgid, watch::traced_pids_on_this_host(trace_dir));
  shared_memory = watch::shared_memory_of(pids);
  std::cerr << "collmc watch: --on-hang abort: stopping the job (" << pids.size()
            << " processes: SIGTERM, SIGKILL 2 s later); the traces are kept\n";
  if (pgid > 0) kill(-pgid, SIGTERM);
  for (pid_t p : pids) kill(p, SIGTERM);
}

void finish_abort(pid_t pgid, const std::string& trace_dir, const std::set<std::string>& shared_memory) {
  // What outlived the SIGTERM and the group's SIGKILL (a rank in a group of its own): killed, and waited for,
  // so that the shared memory it held can go.
  for (int i = 0; i < 100; ++i) {
    const auto left = watch::job_processes(pgid, watch::traced_pids_on_this_host(trace_dir));
    if (left.empty()) break;
    for (pid_t p : left) kill(p, SIGKILL);
    usleep(20 * 1000);
  }
  const auto removed = watch::remove_left_behind(shared_memory);
  std::cerr << "collmc watch: the job is stopped; of the " << shared_memory.size() << " /dev/shm file"
            << (shared_memory.size() == 1 ? "" : "s") << " its processes held, " << removed.size()
            << " were left behind and removed\n";
}

}  // namespace collmc::cli

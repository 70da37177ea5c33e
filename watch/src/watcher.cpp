// watcher.h: follow, check when calls were entered, name a certain hang once.
#include "collmc/watch/watcher.h"

#include <time.h>

#include <filesystem>
#include <fstream>

#include "collmc/model/source.h"

namespace collmc::watch {

namespace fs = std::filesystem;

uint64_t wall_clock_ns() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

Watcher::Watcher(WatchOptions options) : options_(std::move(options)), follower_(options_.trace_dir, options_.skip) {
  options_.live.scenario_path = (fs::path(out_dir()) / "hang.cmc").string();
}

std::string Watcher::out_dir() const {
  return options_.out_dir.empty() ? (fs::path(options_.trace_dir) / "watch").string() : options_.out_dir;
}

std::optional<LiveDiagnosis> Watcher::poll() {
  ++stats_.polls;
  const TraceFollower::Poll p = follower_.poll();
  stats_.lines += p.lines;
  stats_.entries += p.entries;
  stats_.returns += p.returns;
  unchecked_entries_ += p.entries;
  if (named_ || unchecked_entries_ == 0 || follower_.open_calls() <= 0) return std::nullopt;
  if (std::chrono::steady_clock::now() < next_check_) return std::nullopt;
  return check();
}

namespace {

// The CPU time of the whole process (the importer reads on worker threads).
double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

}  // namespace

std::optional<LiveDiagnosis> Watcher::check() {
  unchecked_entries_ = 0;
  const auto start = std::chrono::steady_clock::now();
  const double cpu_start = process_cpu_seconds();
  std::optional<LiveDiagnosis> named;
  try {
    for (const auto& stream : follower_.to_read()) {
      const traces::Trace trace = stream.format->read(stream.files);
      LiveDiagnosis d = diagnose_calls_so_far(trace, options_.live);
      if (d.kind != LiveDiagnosis::Kind::None) {
        named = std::move(d);
        break;
      }
    }
  } catch (const traces::TraceInputError& e) {
    stats_.last_error = e.what();
  } catch (const model::InputError& e) {
    stats_.last_error = e.what();
  }
  const auto end = std::chrono::steady_clock::now();
  const double took = std::chrono::duration<double>(end - start).count();
  const double cpu = process_cpu_seconds() - cpu_start;
  ++stats_.checks;
  stats_.check_seconds += took;
  stats_.check_cpu_seconds += cpu;
  stats_.max_check_seconds = std::max(stats_.max_check_seconds, took);
  // The next check waits as long as this one used the CPU: checking takes at most about half the CPU the
  // watcher gets. (CPU, not wall time: on a machine the job oversubscribes, a check's wall time is mostly
  // waiting for a core, and waiting that long again would only add to the latency.)
  next_check_ = end + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                          std::chrono::duration<double>(std::max(options_.min_check_interval_s, cpu)));
  if (named) named_ = true;
  return named;
}

std::vector<std::string> Watcher::write_outputs(const LiveDiagnosis& d, const std::string& printed) const {
  std::vector<std::string> wrote;
  const fs::path dir = out_dir();
  std::error_code ec;
  fs::create_directories(dir, ec);
  auto put = [&](const char* name, const std::string& text) {
    if (text.empty()) return;
    const fs::path path = dir / name;
    std::ofstream out(path, std::ios::binary);
    out << text;
    if (out) wrote.push_back(path.string());
  };
  put("hang.cmc", d.scenario);
  put("hang.txt", printed);
  put("hang.html", d.html);
  return wrote;
}

std::string describe_hang(const LiveDiagnosis& d, uint64_t now_wall_ns) {
  std::string out = "collmc watch: " + d.headline;
  if (d.last_entry_wall_ns > 0 && now_wall_ns >= d.last_entry_wall_ns) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(now_wall_ns - d.last_entry_wall_ns) / 1e9);
    out += std::string(" (named ") + buf + " s after the last of them entered its call)";
  }
  out += "\n";
  for (const auto& r : d.reasons) out += "  " + r + "\n";
  out += d.report;
  return out;
}

}  // namespace collmc::watch

// Paths, formats and dispatch for `collmc trace import` (import.h).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>

#include "collmc/traces/import.h"
#include "collmc/traces/torch_shim_reader.h"

namespace collmc::traces {

TraceFormat parse_trace_format(const std::string& name) {
  if (name == "auto") return TraceFormat::Auto;
  if (name == "recorder") return TraceFormat::Recorder;
  if (name == "flight-recorder" || name == "fr") return TraceFormat::FlightRecorder;
  if (name == "nccl-log") return TraceFormat::NcclLog;
  throw std::invalid_argument("unknown trace format '" + name +
                              "': expected auto, recorder, flight-recorder or nccl-log");
}

const char* trace_format_name(TraceFormat format) {
  switch (format) {
    case TraceFormat::Auto:
      return "auto";
    case TraceFormat::Recorder:
      return "recorder";
    case TraceFormat::FlightRecorder:
      return "flight-recorder";
    case TraceFormat::NcclLog:
      return "nccl-log";
  }
  return "auto";
}

std::vector<std::string> expand_trace_paths(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> found;
      for (const auto& entry : fs::directory_iterator(p, ec)) {
        std::string name = entry.path().filename().string();
        if (name.empty() || name[0] == '.' || !entry.is_regular_file(ec)) continue;
        found.push_back(entry.path().string());
      }
      if (ec) throw TraceInputError(p, 0, 0, 0, "cannot list the directory: " + ec.message());
      if (found.empty()) throw TraceInputError(p, 0, 0, 0, "the directory holds no trace file");
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::exists(p, ec)) {
      files.push_back(p);
    } else {
      throw TraceInputError(p, 0, 0, 0, "no such file or directory");
    }
  }
  if (files.empty()) throw TraceInputError("", 0, 0, 0, "no trace file given");
  return files;
}

TraceFormat detect_trace_format(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw TraceInputError(file, 0, 0, 0, "cannot open the file");
  std::string head(size_t{64} * 1024, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  if (head.empty()) throw TraceInputError(file, 0, 0, 0, "the file is empty: expected a trace");
  if (static_cast<unsigned char>(head[0]) == 0x80) return TraceFormat::FlightRecorder;
  if (head.find("NCCL INFO") != std::string::npos || head.find("NCCL WARN") != std::string::npos)
    return TraceFormat::NcclLog;
  size_t first = head.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && head[first] == '{') {
    // One JSON object (a Flight Recorder dump is a single line) or many (a recorder trace).
    size_t end = head.find('\n', first);
    std::string line = head.substr(first, end == std::string::npos ? std::string::npos : end - first);
    bool fr_keys = line.find("\"pg_config\"") != std::string::npos || line.find("\"entries\"") != std::string::npos ||
                   line.find("\"version\"") != std::string::npos;
    if (fr_keys && line.find("\"pg_config\"") != std::string::npos) return TraceFormat::FlightRecorder;
    if (end != std::string::npos || !fr_keys) return TraceFormat::Recorder;
    return TraceFormat::FlightRecorder;
  }
  throw TraceInputError(file, 1, 1, 0,
                        "unknown trace format: expected a Flight Recorder dump (pickle or JSON), an NCCL log "
                        "(NCCL_DEBUG=INFO) or a collmc recorder trace (JSON lines)");
}

namespace {

// The run's outcome from an outcome file beside the traces (the directory named, or the one above it):
// "rank N: killed at the time limit (124): hung", "rank N: exited 0", "rank N: killed by signal 9".
void outcome_from_file(const std::vector<std::string>& paths, Trace& trace) {
  namespace fs = std::filesystem;
  std::set<fs::path> dirs;
  // The summary names the outcome file as the paths were given: relative paths stay relative, so that
  // machine paths do not leak into a pasted report.
  bool relative = true;
  for (const auto& p : paths) relative = relative && fs::path(p).is_relative();
  for (const auto& p : paths) {
    std::error_code ec;
    fs::path path = fs::absolute(p, ec);
    fs::path dir = fs::is_directory(path, ec) ? path : path.parent_path();
    dirs.insert(dir);
    dirs.insert(dir.parent_path());
  }
  for (const auto& dir : dirs) {
    std::ifstream in(dir / "outcome.txt");
    if (!in) continue;
    bool hung = false, killed = false, all_exited = true;
    std::string evidence;
    size_t ranks = 0;
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("rank ", 0) != 0) continue;
      ++ranks;
      const bool line_hung = line.ends_with(": hung");
      const bool line_killed = line.find("killed") != std::string::npos;
      hung = hung || line_hung;
      killed = killed || line_killed;
      all_exited = all_exited && line.find(": exited 0") != std::string::npos;
      if ((line_hung || line_killed) && evidence.empty()) evidence = line;
    }
    if (ranks == 0) continue;
    std::error_code cwd_error;
    const fs::path cwd = fs::current_path(cwd_error);
    const std::string file = relative && !cwd_error ? (dir / "outcome.txt").lexically_proximate(cwd).string()
                                                    : (dir / "outcome.txt").string();
    if (hung) {
      trace.outcome = RunOutcome::Hung;
      trace.outcome_evidence = file + ": " + evidence;
    } else if (killed) {
      trace.outcome = RunOutcome::Killed;
      trace.outcome_evidence = file + ": " + evidence;
    } else if (all_exited && trace.outcome == RunOutcome::Unknown) {
      trace.outcome = RunOutcome::Completed;
      trace.outcome_evidence = file + ": every rank exited 0";
    }
    return;
  }
}

// What the calls' own states say: a call entered and never returned (recorder), an entry started or
// scheduled and never completed (Flight Recorder), is where a process sat when the traces end.
void outcome_from_calls(Trace& trace) {
  std::vector<int> open;
  for (const auto& [r, rt] : trace.ranks) {
    bool any = false;
    for (const auto& t : rt.threads)
      for (const auto& c : t.calls) any = any || c.state != CallState::Completed;
    if (any) open.push_back(r);
  }
  if (open.empty()) return;
  trace.outcome = RunOutcome::Hung;
  std::string who = open.size() == 1 ? "rank " + std::to_string(open.front()) : std::to_string(open.size()) + " ranks";
  trace.outcome_evidence =
      who + (trace.format == "flight-recorder" ? " held entries started or scheduled and never completed when dumped"
                                               : " sat in a call entered and never returned when the trace ends");
}

// What a source cannot see, with the command that would.
std::vector<std::string> blind_spots(const Trace& trace) {
  if (trace.format == "flight-recorder")
    return {
        "Flight Recorder dumps hold the collectives and sends/recvs of torch process groups only: no "
        "ncclCommWindowRegister, no communicator creation, no allocation or host sync, and nothing after the "
        "dump was taken; a hang inside a registration or comm creation cannot be seen here: use collmc record"};
  if (trace.format == "nccl-log")
    return {
        "NCCL INFO logs carry no ncclCommWindowRegister, no allocation and no stream sync, and a logged call "
        "is one that was made, not one that finished; a hang inside a registration cannot be seen here: use "
        "collmc record"};
  if (trace.format == "mpi-recorder")
    return {
        "the MPI recorder records no buffer addresses: every call uses one buffer `buf` in the scenario, so "
        "--open-orders keeps the order of any two data calls (they may share a buffer)"};
  return {};
}

}  // namespace

Trace import_traces(const std::vector<std::string>& paths, TraceFormat format, const ImportOptions& options) {
  namespace fs = std::filesystem;
  // Files named on the command line must be traces; files found in a directory that are not (a job's
  // own log, a fault-injection record, a README) are skipped, one finding per file.
  std::vector<std::string> named, found;
  for (const auto& p : paths) {
    std::error_code ec;
    auto& into = fs::is_directory(p, ec) ? found : named;
    for (auto& f : expand_trace_paths({p})) into.push_back(std::move(f));
  }
  std::vector<std::string> skipped;
  std::map<std::string, TraceFormat> detected;
  for (const auto& f : named) detected[f] = detect_trace_format(f);
  std::map<TraceFormat, size_t> votes;
  std::vector<std::string> readable;
  for (const auto& f : found) {
    try {
      detected[f] = detect_trace_format(f);
      ++votes[detected[f]];
      readable.push_back(f);
    } catch (const TraceInputError& e) {
      skipped.push_back("skipped " + f + ": not a trace (" + e.message() + ")");
    }
  }
  if (format == TraceFormat::Auto) {
    if (!named.empty()) {
      format = detected[named.front()];
    } else if (!votes.empty()) {
      // The format most of the directory's files are in; a tie is not guessed.
      size_t best = 0, ties = 0;
      for (const auto& [f, n] : votes) {
        if (n > best) {
          best = n;
          format = f;
          ties = 1;
        } else if (n == best) {
          ++ties;
        }
      }
      if (ties > 1)
        throw TraceInputError(found.front(), 0, 0, 0,
                              "the directory holds as many traces of one format as of another: import one format "
                              "at a time (--format)");
    }
  }
  std::vector<std::string> files;
  for (const auto& f : named) {
    if (detected[f] != format)
      throw TraceInputError(f, 0, 0, 0,
                            std::string("is a ") + trace_format_name(detected[f]) + " trace but " +
                                (named.front() == f ? std::string("--format is ") : named.front() + " is a ") +
                                trace_format_name(format) + (named.front() == f ? "" : " trace") +
                                ": import one format at a time (--format)");
    files.push_back(f);
  }
  for (const auto& f : readable) {
    if (detected[f] != format) {
      skipped.push_back("skipped " + f + ": a " + std::string(trace_format_name(detected[f])) + " file among " +
                        trace_format_name(format) + " traces");
      continue;
    }
    files.push_back(f);
  }
  if (files.empty())
    throw TraceInputError(paths.empty() ? "" : paths.front(), 0, 0, 0,
                          "no trace file: " + std::to_string(skipped.size()) + " file(s) skipped as not traces");
  Trace trace;
  switch (format) {
    case TraceFormat::Recorder:
      // Trimmed as it reads unless the full history is asked, and never MPI traces: the mpi profile is stricter than
      // the run it was recorded from (a standard send may be synchronous, a broadcast synchronizes its members, a
      // wildcard receive may take any sender), so collectives the run completed can still take part in a hang the check
      // must find (MBI CallOrdering_Recv_Send_Bcast_nok: Open MPI's eager MPI_Bcast let the run complete). MPI traces
      // are small: nothing needs leaving out.
      // The torch shim's files (and the NCCL recorder's beside them, which its reader correlates) have their reader.
      if (std::any_of(files.begin(), files.end(), [](const std::string& f) { return is_torch_shim_file(f); }))
        trace = read_torch_shim_traces(files, options.full_history);
      else
        trace = read_recorder_traces(files, options.full_history, options.threads);
      break;
    case TraceFormat::FlightRecorder:
      trace = read_flight_recorder(files, options.full_history, options.threads);  // trims as it reads
      break;
    case TraceFormat::NcclLog:
      trace = read_nccl_logs(files, options.full_history, options.threads);  // trims as it reads
      break;
    case TraceFormat::Auto:
      throw TraceInputError(files.front(), 0, 0, 0, "no reader for this format");
  }
  trace.findings.insert(trace.findings.begin(), skipped.begin(), skipped.end());
  outcome_from_calls(trace);
  outcome_from_file(paths, trace);
  trace.cannot_see = blind_spots(trace);
  return trace;
}

}  // namespace collmc::traces

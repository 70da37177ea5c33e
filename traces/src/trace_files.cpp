// Paths, formats and dispatch for `collmc trace import` (import.h).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>

#include "collmc/traces/import.h"

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

Trace import_traces(const std::vector<std::string>& paths, TraceFormat format) {
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
      trace = read_recorder_traces(files);
      break;
    case TraceFormat::FlightRecorder:
      trace = read_flight_recorder(files);
      break;
    case TraceFormat::NcclLog:
      trace = read_nccl_logs(files);
      break;
    case TraceFormat::Auto:
      throw TraceInputError(files.front(), 0, 0, 0, "no reader for this format");
  }
  trace.findings.insert(trace.findings.begin(), skipped.begin(), skipped.end());
  return trace;
}

}  // namespace collmc::traces

// Paths, formats and dispatch for `collmc trace import` (import.h).
#include <algorithm>
#include <filesystem>
#include <fstream>
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
  std::string head(64 * 1024, '\0');
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
  std::vector<std::string> files = expand_trace_paths(paths);
  if (format == TraceFormat::Auto) {
    format = detect_trace_format(files.front());
    for (size_t i = 1; i < files.size(); ++i) {
      TraceFormat f = detect_trace_format(files[i]);
      if (f != format)
        throw TraceInputError(files[i], 0, 0, 0,
                              std::string("is a ") + trace_format_name(f) + " trace but " + files.front() + " is a " +
                                  trace_format_name(format) + " trace: import one format at a time (--format)");
    }
  }
  switch (format) {
    case TraceFormat::Recorder:
      return read_recorder_traces(files);
    case TraceFormat::FlightRecorder:
      return read_flight_recorder(files);
    case TraceFormat::NcclLog:
      return read_nccl_logs(files);
    case TraceFormat::Auto:
      break;
  }
  throw TraceInputError(files.front(), 0, 0, 0, "no reader for this format");
}

}  // namespace collmc::traces

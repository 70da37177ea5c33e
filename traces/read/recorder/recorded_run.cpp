// judge_recorded_run (recorder_reader.h): is a run being recorded hung? It reads the recorder's lines
// only: a process is "in a call" when its trace has an entry line without the return line.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "collmc/traces/recorder_reader.h"

namespace collmc::traces {

namespace {

// The world's size a process reports: MPI_Init's return (the MPI recorder), else $WORLD_SIZE (-1: none).
int64_t reported_world_size(const RecordedProcess& p) {
  for (const auto& c : p.calls) {
    const auto* size = recorder_field(c.ret, "world_size");
    if (size != nullptr && size->is_number_integer()) return size->get<int64_t>();
  }
  const auto* env = recorder_field(p.header, "env_world_size");
  return env != nullptr && env->is_number_integer() ? env->get<int64_t>() : -1;
}

std::string string_or(const RecorderLine* line, const char* key, const std::string& otherwise) {
  const auto* v = recorder_field(line, key);
  return v != nullptr && v->is_string() ? v->get<std::string>() : otherwise;
}

}  // namespace

RecordedRunJudgement judge_recorded_run(const std::vector<RecorderFile>& files,
                                        const std::function<bool(const std::string& host, int64_t pid)>& still_runs) {
  std::vector<std::string> notes;
  const std::vector<RecordedProcess> processes = split_recorded_processes(files, notes);
  if (processes.empty()) return {false, "no process has written its trace yet"};
  int64_t world = 0;
  for (const auto& p : processes) world = std::max(world, reported_world_size(p));
  // One program process may have several traces (the NCCL recorder's and the torch shim's, same host and pid):
  // it is in a call when any of them is.
  std::map<std::pair<std::string, int64_t>, std::string> open_call;  // "" : outside any call
  for (const auto& p : processes) {
    const std::string host = string_or(p.header, "host", "");
    const auto* pid_field = recorder_field(p.header, "pid");
    const int64_t pid = pid_field != nullptr && pid_field->is_number_integer() ? pid_field->get<int64_t>() : -1;
    std::string& call = open_call[{host, pid}];
    auto open = std::find_if(p.calls.rbegin(), p.calls.rend(), [](const RecordedCall& c) { return c.ret == nullptr; });
    if (open != p.calls.rend() && call.empty()) call = string_or(open->enter, "call", "a call");
  }
  if (world > static_cast<int64_t>(open_call.size()))
    return {false, std::to_string(open_call.size()) + " of the world's " + std::to_string(world) +
                       " processes have written their traces"};
  std::string why;
  for (const auto& [key, call] : open_call) {
    const auto& [host, pid] = key;
    const std::string who = "process " + std::to_string(pid) + (host.empty() ? "" : " on " + host);
    if (!still_runs(host, pid)) continue;
    if (call.empty()) return {false, who + " runs outside any recorded call"};
    why += (why.empty() ? "" : "; ") + who + " in " + call;
  }
  if (why.empty()) return {false, "every process has ended"};
  return {true, why};
}

}  // namespace collmc::traces

// The collmc recorder's traces (docs/TRACES.md, "Recorder format"): one JSON-lines file per process,
// written by libcollmc_record.so. This header gives the line level (parse, and write back byte for byte)
// and the in-memory variant of read_recorder_traces (trace.h), which turns the files into a Trace.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collmc/traces/trace.h"

namespace collmc::traces {

struct RecorderLine {
  int line = 0;                  // 1-based line number in its file
  nlohmann::ordered_json event;  // the object as written, members in file order
};

struct RecorderFile {
  std::string name;
  std::vector<RecorderLine> lines;  // every complete line, in file order ("process" lines included)
  // The last line was cut short (no newline and not a whole object: the process died while writing it).
  // It is left out of `lines`.
  bool truncated_tail = false;
};

// Typed access to the fields of one line (null: no line) of `file`: an absent or ill-typed field is a
// TraceInputError at that line saying what was expected. Both recorders' readers read through it.
class RecorderFields {
 public:
  RecorderFields(const RecorderFile& file, const RecorderLine* line) : file_(file), line_(line) {}
  int64_t integer(const char* key) const;
  std::string string(const char* key) const;
  // A "0x..." pointer, handle or hash, lowercase hex.
  uint64_t hex(const char* key) const;
  [[noreturn]] void fail(const std::string& message) const;

 private:
  const RecorderFile& file_;
  const RecorderLine* line_;
};

// The field `key` of `line`, or null when the line or the field is absent.
const nlohmann::ordered_json* recorder_field(const RecorderLine* line, const char* key);

// "0x" and 1 to 16 lowercase hex digits, else nullopt.
std::optional<uint64_t> parse_hex_field(const std::string& text);

// One process of a recorder trace: its "process" line and its calls in entry order, each an entry line and
// its return line (null: the call never returned, where that thread stopped).
struct RecordedCall {
  const RecorderLine* enter = nullptr;
  const RecorderLine* ret = nullptr;
};
// The program's own loads or stores to memory it gave MPI, between two MPI calls of one thread (an "access"
// line, docs/TRACES.md "Loads and stores"): written just before that thread's next call entered, which is call
// `before_call` of the process (calls.size(): after its last one).
struct RecordedAccess {
  const RecorderLine* line = nullptr;
  size_t before_call = 0;
};
// What the OpenMP runtime said of a thread's synchronization (an "omp" line of the MPI recorder's OMPT tool,
// docs/TRACES.md "OpenMP threads"): a barrier, a mutex, a fork or join, a task's creation or switch.
struct RecordedOmpEvent {
  const RecorderLine* line = nullptr;
  size_t before_call = 0;  // the number of the process's calls entered before it was written
};
struct RecordedProcess {
  const RecorderFile* file = nullptr;
  const RecorderLine* header = nullptr;
  std::vector<RecordedCall> calls;
  std::vector<RecordedAccess> accesses;           // in the order written
  std::vector<RecordedOmpEvent> omp_events = {};  // in the order written
};

// The processes of parsed files (a file holds one process per "process" line: exec keeps the file), entries
// and returns paired by seq. Throws TraceInputError for a return without its entry, a seq entered twice, an
// event before the first "process" line. A cut-short last line is said in `notes`.
std::vector<RecordedProcess> split_recorded_processes(const std::vector<RecorderFile>& files,
                                                      std::vector<std::string>& notes);

// Whether a run being recorded has hung (`collmc record --hang-after`), judged from its traces so far:
// every process of the world has written its trace (the world's size as MPI_Init returned it, else
// $WORLD_SIZE in the "process" line, else the processes seen), and every one that still runs sits in a
// call it entered and never returned from. `still_runs(host, pid)` says whether a process has not ended;
// a process that ended counts as done. `why` names each process's open call, or what keeps it from hung.
struct RecordedRunJudgement {
  bool hung = false;
  std::string why;
};
RecordedRunJudgement judge_recorded_run(const std::vector<RecorderFile>& files,
                                        const std::function<bool(const std::string& host, int64_t pid)>& still_runs);

// The MPI recorder's traces (libcollmc_record_mpi.so, "format":"collmc-mpi-recorder") as a Trace for the
// mpi profile (traces/read/mpi_recorder/mpi_recorder_reader.cpp). read_recorder_traces calls it for such files.
Trace read_mpi_recorder_files(const std::vector<RecorderFile>& files);

// The lines of one file. Throws TraceInputError (file:line:col, what was expected) for a line that is not
// a flat JSON object with the fields its event kind needs, for a file that does not start with a
// "process" line, and for an empty file.
RecorderFile parse_recorder_file(const std::string& name, const std::string& text);

// The lines back as text, as the recorder writes them: for a file the recorder wrote,
// write_recorder_file(parse_recorder_file(name, text)) == text (less a truncated tail).
std::string write_recorder_file(const RecorderFile& file);

// How the fast way (simdjson On-Demand, no tree) reads one line (no newline) against parse_line (nlohmann):
// Fallback where it leaves the line to parse_line, Same where it reads exactly the members, types and
// values parse_line's object holds, Different otherwise (a bug: the tests and the fuzz target look for it).
enum class FastLineRead { Fallback, Same, Different };
FastLineRead compare_fast_line(const std::string& file, int number, const std::string& line);

// read_recorder_traces on files already in memory: {name, bytes} per file. `slow_lines_only`: read every
// line with nlohmann (parse_recorder_file's way) even where the fast way (simdjson On-Demand) would: the
// tests and the fuzz target check that the two read every trace alike.
Trace read_recorder_buffers(const std::vector<std::pair<std::string, std::string>>& files, bool full_history = true,
                            bool slow_lines_only = false);

}  // namespace collmc::traces

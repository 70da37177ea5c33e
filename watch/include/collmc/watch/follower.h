// Following the line streams a job's recorders write while it runs (docs/TRACES.md, "Watching a job"):
// each file of a folder is read from where the last poll stopped, whole lines only, and what each line
// says about the live state (a call entered, a call returned) is counted as it arrives. A stream format is
// one row of stream_formats(): how its first line looks, what a line says, and the reader that turns the
// lines so far into a Trace (the importer's, so the watch has no semantics of its own).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collmc/traces/trace.h"

namespace collmc::watch {

enum class LineEvent { Enter, Return, Other };

struct StreamFormat {
  const char* name;
  // Whether a file whose first line is `first_line` is in this format.
  bool (*claims)(std::string_view first_line);
  // What one whole line (no newline) says about the live state.
  LineEvent (*classify)(std::string_view line);
  // The calls so far as a Trace: {file name, its whole lines} per file of this format. Throws
  // traces::TraceInputError for bad input, as the importer does.
  traces::Trace (*read)(const std::vector<std::pair<std::string, std::string>>& files);
  // Its reader also takes the other formats' files of the folder (the torch shim's correlates the NCCL
  // recorder's files of the same processes with its own).
  bool reads_the_others = false;
};

// The formats the watcher follows: the torch shim's lines ("format":"collmc-torch", with the NCCL recorder's
// files beside them), and the collmc recorders' (NCCL and MPI).
const std::vector<StreamFormat>& stream_formats();

// The value of the "ev" member of a JSON-lines event (`{"ev":"enter",...}`, spaces allowed), or "".
std::string_view event_name(std::string_view line);

class TraceFollower {
 public:
  // Follows the regular, non-hidden files directly in `dir`, except those named in `skip` (full paths:
  // the files of an earlier run).
  explicit TraceFollower(std::string dir, std::set<std::string> skip = {});
  TraceFollower(const TraceFollower&) = delete;
  TraceFollower& operator=(const TraceFollower&) = delete;
  ~TraceFollower();

  struct Poll {
    size_t lines = 0;    // whole lines read by this poll
    size_t entries = 0;  // of them, calls entered
    size_t returns = 0;  // and calls returned
    size_t new_files = 0;
  };
  // Reads what was appended to every file since the last poll (whole lines; a cut line waits for its
  // newline), and looks for new files every `list_every` polls.
  Poll poll();

  // The files of one format with their whole lines so far, for that format's reader.
  struct Stream {
    const StreamFormat* format = nullptr;
    std::vector<std::pair<std::string, std::string>> files;
  };
  std::vector<Stream> snapshot() const;
  // What to read: one stream per format, except that a format that reads the others takes every file.
  std::vector<Stream> to_read() const;

  size_t files() const { return files_.size(); }
  uint64_t bytes() const { return bytes_; }
  uint64_t lines() const { return lines_; }
  // Calls entered and not yet returned, over every file.
  int64_t open_calls() const { return open_calls_; }

  unsigned list_every = 10;

 private:
  struct File {
    std::string path;
    int fd = -1;
    uint64_t offset = 0;  // bytes read so far
    std::string text;     // the whole lines so far
    std::string partial;  // a line without its newline yet
    const StreamFormat* format = nullptr;
    bool refused = false;  // its first line is no format's: never read again
  };
  void list();
  void read_new(File& f, Poll& p);

  std::string dir_;
  std::set<std::string> skip_;
  std::map<std::string, File> files_;
  unsigned polls_ = 0;
  uint64_t bytes_ = 0, lines_ = 0;
  int64_t open_calls_ = 0;
};

}  // namespace collmc::watch

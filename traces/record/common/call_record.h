// One recorded call: the entry line before the real function runs, the return line after it.
#pragma once

#include <cstdint>

#include "json_line.h"
#include "trace_file.h"

namespace collmc::recorder {

class CallRecord {
 public:
  explicit CallRecord(const char* call) : call_(call), active_(recording()) {
    if (active_) {
      seq_ = next_seq();
      begin_event(line_, "enter", seq_, call_);
    }
  }
  bool active() const { return active_; }

  // The entry line, to add the call's arguments to; then `entered()` writes it.
  JsonLine& args() { return line_; }
  void entered() { write_line(line_); }

  // Starts the return line with the result code; add outputs, then `returned()` writes it.
  JsonLine& result(int64_t code) {
    line_ = JsonLine();
    begin_event(line_, "return", seq_, call_);
    line_.i64("result", code);
    return line_;
  }
  void returned() { write_line(line_); }

 private:
  const char* call_;
  bool active_;
  uint64_t seq_ = 0;
  JsonLine line_;
};

}  // namespace collmc::recorder

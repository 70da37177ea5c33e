// TraceInputError: "file:line:col: message" for text formats, "file: byte N: message" for binary ones.
#include <string>

#include "collmc/traces/trace.h"

namespace collmc::traces {
namespace {

std::string where(const std::string& file, int line, int column, uint64_t byte_offset) {
  std::string w = file.empty() ? std::string("<input>") : file;
  if (line > 0) {
    w += ":" + std::to_string(line);
    if (column > 0) w += ":" + std::to_string(column);
  } else if (byte_offset > 0 || column < 0) {
    w += ": byte " + std::to_string(byte_offset);
  }
  return w;
}

}  // namespace

TraceInputError::TraceInputError(std::string file, int line, int column, uint64_t byte_offset,
                                 const std::string& message)
    : std::runtime_error(where(file, line, column, byte_offset) + ": " + message),
      file_(std::move(file)),
      line_(line),
      column_(column),
      byte_offset_(byte_offset),
      message_(message) {}

}  // namespace collmc::traces

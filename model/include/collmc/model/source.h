// Source text and locations of a scenario, and the error raised for bad input.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace collmc::model {

// The text of one scenario file, shared by every location that points into it.
struct SourceFile {
  std::string path;
  std::string text;
  std::vector<size_t> line_starts;  // offset of the first character of each line

  SourceFile(std::string path, std::string text);
  std::string line_text(int line) const;  // 1-based, without the newline
};

struct SourceLoc {
  std::shared_ptr<const SourceFile> file;
  int line = 0;             // 1-based
  int column = 0;           // 1-based, in bytes
  std::string str() const;  // "file:line:col"
  std::string file_name() const;
};

// Bad input: a scenario that does not parse or does not make sense. Carries file, line, column, the
// offending text and what was expected; what() is the full diagnostic with the source line and caret.
class InputError : public std::runtime_error {
 public:
  InputError(SourceLoc loc, const std::string& message);
  const SourceLoc& loc() const { return loc_; }
  const std::string& message() const { return message_; }

 private:
  SourceLoc loc_;
  std::string message_;
};

// Reads a file; throws InputError (line 0) if it cannot be read.
std::shared_ptr<const SourceFile> read_source_file(const std::string& path);

}  // namespace collmc::model

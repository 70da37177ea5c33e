// Source text and locations of a scenario, and the error raised for bad input.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
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

// A secondary line of a diagnostic: `note:` at a location (the '{' a missing '}' leaves open), or a
// `help:` without one (a likely spelling).
struct DiagnosticNote {
  enum class Kind : uint8_t { Note, Help };
  Kind kind = Kind::Note;
  SourceLoc loc;  // line 0: no location
  std::string text;
};

// Bad input: a scenario that does not parse or does not make sense. Carries file, line, column, the
// offending text and what was expected; what() is the full diagnostic with the source line and caret,
// then its notes (rustc/clang style: the primary message first).
class InputError : public std::runtime_error {
 public:
  InputError(SourceLoc loc, const std::string& message, std::vector<DiagnosticNote> notes = {});
  // Several errors of one file (a parser that recovered): loc() and message() are the first one's;
  // what() lists every one and their count.
  explicit InputError(const std::vector<InputError>& errors);
  const SourceLoc& loc() const { return loc_; }
  const std::string& message() const { return message_; }

 private:
  SourceLoc loc_;
  std::string message_;
};

// The path `read_source_file` reads standard input for, and the name its diagnostics give it.
inline constexpr const char* kStdinPath = "-";
inline constexpr const char* kStdinName = "<stdin>";

// Reads a file ("-": standard input); throws InputError (line 0) with the system's reason ("No such file
// or directory", "Is a directory") if it cannot be read. A UTF-8 byte-order mark is dropped.
std::shared_ptr<const SourceFile> read_source_file(const std::string& path);

// The candidate closest to `word` in edit distance, if it is close enough to be a likely misspelling
// (for "did you mean ...?"); nullopt otherwise.
std::optional<std::string> closest_spelling(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace collmc::model

// The lines of a recorder trace as flat views (key -> integer or string), read either the fast way
// (simdjson On-Demand straight over the file's bytes, no tree) or from the nlohmann object parse_line makes.
// The NCCL recorder reader reads every call through these views, whichever way the line was read, so the
// two ways cannot read a line differently past the view; the fast way gives up on anything it cannot read
// exactly as parse_line would (see read_line_fast), and that line is read by parse_line, with its errors.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collmc/traces/recorder_reader.h"

namespace collmc::traces {

// A member's value, as far as the reader tells values apart.
struct FlatValue {
  enum class Type : uint8_t { Integer, String, Other };
  Type type = Type::Other;
  bool is_unsigned = false;  // Integer written without a minus sign (nlohmann's number_unsigned)
  uint64_t bits = 0;         // Integer: the value (two's complement when negative)
  std::string_view text;     // String: its characters; Other: its JSON text (only the shape keys use it)

  int64_t integer() const { return static_cast<int64_t>(bits); }  // nlohmann's get<int64_t>
};

struct FlatField {
  std::string_view key;
  FlatValue value;
};

// One line: its members in file order (no key twice), pointing into storage its FlatLines owns.
struct FlatLine {
  int number = 0;  // 1-based line number in its file
  const FlatField* fields = nullptr;
  uint32_t count = 0;

  // `hint`: where the recorder writes the key (docs/TRACES.md: its members come in a fixed order), looked
  // at first.
  const FlatValue* find(std::string_view key, uint32_t hint = UINT32_MAX) const {
    if (hint < count && fields[hint].key == key) return &fields[hint].value;
    for (uint32_t i = 0; i < count; ++i)
      if (fields[i].key == key) return &fields[i].value;
    return nullptr;
  }
  const FlatField* begin() const { return fields; }
  const FlatField* end() const { return fields + count; }
};

// The lines of one file. Views point into the file's text (kept by the caller) or into the nlohmann
// objects of the lines parse_line read, kept here.
class FlatLines {
 public:
  // Appends the line `text` (no newline) at `number`, read the fast way when it can be and else by
  // parse_line, which throws its TraceInputError. `capacity`: bytes readable from text.data() on (the
  // text's own and the buffer's after it; at least text.size() + 64, simdjson's padding), unused when
  // `slow_only`.
  void add(const std::string& file, int number, std::string_view text, size_t capacity, bool slow_only);
  // Appends a line parse_line already read (its object moved in).
  void add_parsed(RecorderLine&& line);

  // No lines, the memory kept for the next file's (a large file's is let go).
  void clear();

  size_t size() const { return lines_.size(); }
  FlatLine operator[](size_t i) const {
    const Line& l = lines_[i];
    return FlatLine{l.number, fields_.data() + l.first, l.count};
  }
  size_t slow_lines() const { return parsed_.size(); }

 private:
  struct Line {
    int number;
    uint32_t first, count;
  };
  std::vector<FlatField> fields_;
  std::vector<Line> lines_;
  std::deque<nlohmann::ordered_json> parsed_;  // lines read by parse_line
  std::deque<std::string> other_texts_;        // their values of other types, as JSON text
};

// The fields of `line` into `out` the fast way, checked as parse_line checks them; false (and `out` as it
// was) where the fast way cannot be sure to read it exactly as parse_line: a character outside printable
// ASCII, a backslash, a value that is not an integer or a string, "-0", an integer past 64 bits, a key
// twice, a field parse_line would reject. `capacity` as for FlatLines::add.
bool read_line_fast(std::string_view line, size_t capacity, std::vector<FlatField>& out);

// Typed access to one line's fields, with the errors of RecorderFields (recorder_reader.h; the tests check
// that both say the same): an absent or ill-typed field is a TraceInputError at that line saying what was
// expected.
class FlatFields {
 public:
  FlatFields(const std::string& file, const FlatLine& line) : file_(file), line_(line) {}
  const FlatValue* find(std::string_view key, uint32_t hint = UINT32_MAX) const { return line_.find(key, hint); }
  int64_t integer(const char* key) const;
  std::string_view string(const char* key) const;
  uint64_t hex(const char* key) const;
  [[noreturn]] void fail(const std::string& message) const;

 private:
  const std::string& file_;
  const FlatLine& line_;
};

// One line read by nlohmann, checked for the fields of its event kind (recorder_reader.cpp's parse_line:
// the errors of parse_recorder_file).
RecorderLine parse_recorder_line(const std::string& file, int number, const std::string& text);

// "0x" and 1 to 16 lowercase hex digits, else nullopt (parse_hex_field on a view).
std::optional<uint64_t> parse_hex_view(std::string_view text);

// The lines of a recorder file, as both line readers take them: add(number, line, bytes of `text`'s capacity
// from the line's start) for each. An empty line is an error, but at the very end. A last line without its
// newline that `add` rejects was cut short by a process killed in the middle of write(2): the file is
// accepted without it, and the function returns true (said in Trace::notes).
template <class Add>
bool for_each_recorder_line(const std::string& name, std::string_view text, size_t capacity, Add&& add) {
  size_t start = 0;
  int number = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    ++number;
    const bool last = end == std::string_view::npos;
    const std::string_view line = text.substr(start, (last ? text.size() : end) - start);
    const size_t room = capacity - start;
    start = last ? text.size() : end + 1;
    if (line.empty()) {
      if (last) break;
      throw TraceInputError(name, number, 1, 0, "expected a JSON object, found an empty line");
    }
    if (last) {
      try {
        add(number, line, room);
      } catch (const TraceInputError&) {
        return true;
      }
      break;
    }
    add(number, line, room);
  }
  return false;
}

}  // namespace collmc::traces

#include "collmc/model/source.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

namespace collmc::model {

SourceFile::SourceFile(std::string p, std::string t) : path(std::move(p)), text(std::move(t)) {
  line_starts.push_back(0);
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') line_starts.push_back(i + 1);
}

std::string SourceFile::line_text(int line) const {
  if (line < 1 || static_cast<size_t>(line) > line_starts.size()) return {};
  size_t begin = line_starts[static_cast<size_t>(line) - 1];
  size_t end = text.find('\n', begin);
  if (end == std::string::npos) end = text.size();
  std::string s = text.substr(begin, end - begin);
  if (!s.empty() && s.back() == '\r') s.pop_back();
  return s;
}

std::string SourceLoc::file_name() const { return file ? file->path : std::string("<input>"); }

std::string SourceLoc::str() const { return file_name() + ":" + std::to_string(line) + ":" + std::to_string(column); }

namespace {

// The length of the UTF-8 sequence starting at `at` when it is a whole, valid one; 0 otherwise.
size_t utf8_length(const std::string& text, size_t at) {
  const auto c = static_cast<unsigned char>(text[at]);
  const size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
  if (n == 0 || at + n > text.size()) return 0;
  for (size_t i = 1; i < n; ++i)
    if ((static_cast<unsigned char>(text[at + i]) & 0xC0) != 0x80) return 0;
  return n;
}

// A source line as a diagnostic shows it, as clang does: at most kExcerpt bytes around the column
// ("..." where it is cut), control bytes and bytes that are not UTF-8 written as <XX>, so that a
// 1 MB line or a binary file gives a line a terminal can show. `caret` is the excerpt's column
// (in characters shown) of the byte at `column`.
constexpr size_t kExcerpt = 100;

std::string excerpt(const std::string& text, int column, size_t& caret) {
  const size_t at = column > 0 ? static_cast<size_t>(column) - 1 : 0;
  size_t begin = 0;
  size_t end = text.size();
  if (text.size() > kExcerpt) {
    begin = at > kExcerpt / 2 ? at - kExcerpt / 2 : 0;
    end = std::min(text.size(), begin + kExcerpt);
    if (end - begin < kExcerpt) begin = end > kExcerpt ? end - kExcerpt : 0;
    // Start at a character, not inside a UTF-8 sequence.
    while (begin > 0 && begin < text.size() && (static_cast<unsigned char>(text[begin]) & 0xC0) == 0x80) --begin;
  }
  std::string shown = begin > 0 ? "..." : "";
  caret = shown.size();
  for (size_t i = begin; i < end;) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::string piece;
    size_t n = 1;
    if (c == '\t' || (c >= 0x20 && c < 0x7F)) {
      piece = std::string(1, static_cast<char>(c));
    } else if (const size_t len = c >= 0x80 ? utf8_length(text, i) : 0; len > 0) {
      piece = text.substr(i, len);
      n = len;
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "<%02X>", c);
      piece = hex;
    }
    if (i + n <= at) caret += n > 1 ? 1 : piece.size();  // a UTF-8 character is one column, <XX> four
    shown += piece;
    i += n;
  }
  if (end < text.size()) shown += "...";
  return shown;
}

// "FILE:L:C: LEVEL: message", then the source line (an excerpt) and a caret under the column.
void format_located(std::ostream& out, const SourceLoc& loc, const char* level, const std::string& message) {
  if (loc.line > 0)
    out << loc.str() << ": " << level << ": " << message;
  else
    out << loc.file_name() << ": " << level << ": " << message;
  if (loc.file && loc.line > 0) {
    size_t caret = 0;
    const std::string text = excerpt(loc.file->line_text(loc.line), loc.column, caret);
    out << "\n  " << text << "\n  ";
    // Tabs are kept under tabs, so the caret lines up in a terminal.
    size_t col = 0;
    for (size_t i = 0; i < text.size() && col < caret; ++i) {
      const auto c = static_cast<unsigned char>(text[i]);
      if ((c & 0xC0) == 0x80) continue;  // a UTF-8 continuation byte: one column with its lead byte
      out << (c == '\t' ? '\t' : ' ');
      ++col;
    }
    out << '^';
  }
}

// `notes` is the constructor's own copy, handed over.
std::string format_diagnostic(const SourceLoc& loc, const std::string& message, std::vector<DiagnosticNote>&& notes) {
  std::ostringstream out;
  format_located(out, loc, "error", message);
  for (const auto& n : notes) {
    out << "\n";
    if (n.kind == DiagnosticNote::Kind::Help)
      out << "help: " << n.text;
    else if (n.loc.line > 0)
      format_located(out, n.loc, "note", n.text);
    else
      out << "note: " << n.text;
  }
  return out.str();
}

std::string format_several(const std::vector<InputError>& errors) {
  std::ostringstream out;
  for (const auto& e : errors) out << e.what() << "\n";
  out << (errors.empty() ? std::string("<input>") : errors.front().loc().file_name()) << ": " << errors.size()
      << " errors";
  return out.str();
}

}  // namespace

InputError::InputError(SourceLoc loc, const std::string& message, std::vector<DiagnosticNote> notes)
    : std::runtime_error(format_diagnostic(loc, message, std::move(notes))), loc_(std::move(loc)), message_(message) {}

InputError::InputError(const std::vector<InputError>& errors)
    : std::runtime_error(errors.size() == 1 ? std::string(errors.front().what()) : format_several(errors)),
      loc_(errors.empty() ? SourceLoc{} : errors.front().loc()),
      message_(errors.empty() ? std::string() : errors.front().message()) {}

std::shared_ptr<const SourceFile> read_source_file(const std::string& path) {
  const bool from_stdin = path == kStdinPath;
  const std::string name = from_stdin ? kStdinName : path;
  auto fail = [&](const std::string& reason) {
    SourceLoc loc;
    loc.file = std::make_shared<SourceFile>(name, "");
    throw InputError(loc, "cannot read file: " + reason);
  };
  std::ostringstream buf;
  if (from_stdin) {
    buf << std::cin.rdbuf();
  } else {
    // ifstream opens a directory without complaint and then reads nothing: ask first.
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) fail(std::strerror(errno));
    if (S_ISDIR(st.st_mode)) fail(std::strerror(EISDIR));
    errno = 0;
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(std::strerror(errno != 0 ? errno : EACCES));
    buf << in.rdbuf();
  }
  std::string text = buf.str();
  // Editors on Windows start UTF-8 files with a byte-order mark; it carries no meaning here.
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);
  return std::make_shared<SourceFile>(name, std::move(text));
}

std::optional<std::string> closest_spelling(const std::string& word, const std::vector<std::string>& candidates) {
  // Levenshtein distance, one row at a time.
  auto distance = [](const std::string& a, const std::string& b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
      size_t diagonal = row[0];
      row[0] = i;
      for (size_t j = 1; j <= b.size(); ++j) {
        const size_t above = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
        diagonal = above;
      }
    }
    return row[b.size()];
  };
  // A third of the word, at least one edit: `regster` -> `register`, `jsn` -> `json`, not `x` -> `sync`.
  const size_t limit = std::max<size_t>(1, word.size() / 3);
  std::optional<std::string> best;
  size_t best_distance = limit + 1;
  for (const auto& c : candidates) {
    if (c == word) continue;
    const size_t d = distance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

}  // namespace collmc::model

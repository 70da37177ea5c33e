#include "collmc/model/source.h"

#include <fstream>
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
std::string format_diagnostic(const SourceLoc& loc, const std::string& message) {
  std::ostringstream out;
  if (loc.line > 0)
    out << loc.str() << ": error: " << message;
  else
    out << loc.file_name() << ": error: " << message;
  if (loc.file && loc.line > 0) {
    std::string text = loc.file->line_text(loc.line);
    out << "\n  " << text << "\n  ";
    for (int i = 1; i < loc.column && static_cast<size_t>(i) <= text.size(); ++i)
      out << (text[static_cast<size_t>(i) - 1] == '\t' ? '\t' : ' ');
    out << '^';
  }
  return out.str();
}
}  // namespace

InputError::InputError(SourceLoc loc, const std::string& message)
    : std::runtime_error(format_diagnostic(loc, message)), loc_(std::move(loc)), message_(message) {}

std::shared_ptr<const SourceFile> read_source_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    SourceLoc loc;
    loc.file = std::make_shared<SourceFile>(path, "");
    throw InputError(loc, "cannot read file");
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  return std::make_shared<SourceFile>(path, buf.str());
}

}  // namespace collmc::model

#include "lexer.h"

#include <cctype>
#include <cstdio>
#include <limits>

namespace collmc::model {

const char* token_kind_name(TokKind kind) {
  switch (kind) {
    case TokKind::Name:
      return "a name";
    case TokKind::Integer:
      return "an integer";
    case TokKind::Size:
      return "a size";
    case TokKind::Version:
      return "a version";
    case TokKind::String:
      return "a string";
    case TokKind::LBrace:
      return "'{'";
    case TokKind::RBrace:
      return "'}'";
    case TokKind::LBracket:
      return "'['";
    case TokKind::RBracket:
      return "']'";
    case TokKind::Comma:
      return "','";
    case TokKind::Semicolon:
      return "';'";
    case TokKind::Equals:
      return "'='";
    case TokKind::Arrow:
      return "'->'";
    case TokKind::Minus:
      return "'-'";
    case TokKind::DotDot:
      return "'..'";
    case TokKind::Star:
      return "'*'";
    case TokKind::Newline:
      return "end of line";
    case TokKind::End:
      return "end of file";
  }
  return "?";
}

namespace {

// A token's text as a message quotes it: at most 40 bytes ("..." past them), control bytes and bytes
// above ASCII as \xNN, so that a 1 MB word or a binary file gives a message of one short line.
std::string quoted_text(const std::string& text) {
  constexpr size_t kShown = 40;
  std::string out;
  for (size_t i = 0; i < text.size() && i < kShown; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (text.size() > kShown) out += "...";
  return out;
}

}  // namespace

std::string describe(const Token& tok) {
  switch (tok.kind) {
    case TokKind::Newline:
    case TokKind::End:
      return token_kind_name(tok.kind);
    case TokKind::String:
      return "\"" + quoted_text(tok.text) + "\"";
    default:
      return "'" + quoted_text(tok.text) + "'";
  }
}

namespace {

bool name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }

class Lexer {
 public:
  explicit Lexer(const std::shared_ptr<const SourceFile>& file) : file_(file), s_(file->text) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    while (true) {
      skip_blanks();
      if (pos_ >= s_.size()) break;
      out.push_back(next());
    }
    Token end;
    end.kind = TokKind::End;
    end.offset = s_.size();
    end.line = line_;
    end.column = static_cast<int>(pos_ - line_start_) + 1;
    out.push_back(end);
    return out;
  }

 private:
  [[noreturn]] void fail(size_t at, int line, int col, const std::string& msg) const {
    (void)at;
    SourceLoc loc{file_, line, col};
    throw InputError(loc, msg);
  }

  void skip_blanks() {
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == ' ' || c == '\t' || c == '\r') {
        ++pos_;
      } else if (c == '#') {
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
  }

  Token make(TokKind kind, size_t begin, size_t end) {
    Token t;
    t.kind = kind;
    t.offset = begin;
    t.length = end - begin;
    t.text = s_.substr(begin, end - begin);
    t.line = line_;
    t.column = static_cast<int>(begin - line_start_) + 1;
    return t;
  }

  Token next() {
    size_t begin = pos_;
    char c = s_[pos_];
    if (c == '\n') {
      Token t = make(TokKind::Newline, begin, begin + 1);
      t.text = "\\n";
      ++pos_;
      ++line_;
      line_start_ = pos_;
      return t;
    }
    if (name_start(c)) {
      // LANGUAGE.md: [A-Za-z_][A-Za-z0-9_.]*, dots anywhere (ranges `a..b` hold integers, never names).
      while (pos_ < s_.size() && name_char(s_[pos_])) ++pos_;
      return make(TokKind::Name, begin, pos_);
    }
    if (std::isdigit(static_cast<unsigned char>(c))) return number(begin);
    if (c == '"') return string(begin);
    auto single = [&](TokKind k) {
      ++pos_;
      return make(k, begin, pos_);
    };
    switch (c) {
      case '{':
        return single(TokKind::LBrace);
      case '}':
        return single(TokKind::RBrace);
      case '[':
        return single(TokKind::LBracket);
      case ']':
        return single(TokKind::RBracket);
      case ',':
        return single(TokKind::Comma);
      case ';':
        return single(TokKind::Semicolon);
      case '=':
        return single(TokKind::Equals);
      case '*':
        return single(TokKind::Star);
      default:
        break;
    }
    if (c == '-' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '>') {
      pos_ += 2;
      return make(TokKind::Arrow, begin, pos_);
    }
    if (c == '-') {
      ++pos_;
      return make(TokKind::Minus, begin, pos_);
    }
    if (c == '.' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '.') {
      pos_ += 2;
      return make(TokKind::DotDot, begin, pos_);
    }
    std::string shown;
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
      shown = buf;
    } else {
      shown = std::string(1, c);
    }
    fail(begin, line_, static_cast<int>(begin - line_start_) + 1,
         "unexpected character '" + shown +
             "': expected a name, a number, a string, a bracket, ',', ';', '=', '->', '-', '..' or '*'");
  }

  Token number(size_t begin) {
    uint64_t value = 0;
    const uint64_t max = std::numeric_limits<uint64_t>::max();
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      uint64_t d = static_cast<uint64_t>(s_[pos_] - '0');
      if (value > (max - d) / 10) fail(begin, line_, static_cast<int>(begin - line_start_) + 1, "number too large");
      value = value * 10 + d;
      ++pos_;
    }
    // `2.29`, `2.30.7`: a release number (not `0..3`, a rank range).
    if (pos_ + 1 < s_.size() && s_[pos_] == '.' && std::isdigit(static_cast<unsigned char>(s_[pos_ + 1]))) {
      while (pos_ < s_.size() &&
             (std::isdigit(static_cast<unsigned char>(s_[pos_])) ||
              (s_[pos_] == '.' && pos_ + 1 < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_ + 1])))))
        ++pos_;
      // A development pre-release (`2.31.0a16`): its suffix belongs to the release number.
      if (pos_ + 1 < s_.size() && s_[pos_] == 'a' && std::isdigit(static_cast<unsigned char>(s_[pos_ + 1]))) {
        ++pos_;
        while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
      }
      return make(TokKind::Version, begin, pos_);
    }
    size_t suffix_begin = pos_;
    while (pos_ < s_.size() && std::isalpha(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    if (suffix_begin == pos_) {
      Token t = make(TokKind::Integer, begin, pos_);
      t.value = value;
      return t;
    }
    std::string suffix = s_.substr(suffix_begin, pos_ - suffix_begin);
    uint64_t mult = 0;
    if (suffix == "B")
      mult = 1;
    else if (suffix == "KiB")
      mult = 1ull << 10;
    else if (suffix == "MiB")
      mult = 1ull << 20;
    else if (suffix == "GiB")
      mult = 1ull << 30;
    else if (suffix == "KB")
      mult = 1000ull;
    else if (suffix == "MB")
      mult = 1000ull * 1000;
    else if (suffix == "GB")
      mult = 1000ull * 1000 * 1000;
    if (mult == 0)
      fail(suffix_begin, line_, static_cast<int>(suffix_begin - line_start_) + 1,
           "unknown size unit '" + suffix + "': expected KiB, MiB, GiB, KB, MB, GB or B");
    if (value != 0 && mult > max / value)
      fail(begin, line_, static_cast<int>(begin - line_start_) + 1, "size too large");
    Token t = make(TokKind::Size, begin, pos_);
    t.value = value * mult;
    return t;
  }

  Token string(size_t begin) {
    ++pos_;
    std::string value;
    while (pos_ < s_.size() && s_[pos_] != '"' && s_[pos_] != '\n') {
      if (s_[pos_] == '\\' && pos_ + 1 < s_.size() && (s_[pos_ + 1] == '"' || s_[pos_ + 1] == '\\')) {
        value += s_[pos_ + 1];
        pos_ += 2;
      } else {
        value += s_[pos_++];
      }
    }
    if (pos_ >= s_.size() || s_[pos_] != '"')
      fail(begin, line_, static_cast<int>(begin - line_start_) + 1,
           "unterminated string: expected '\"' before the end of the line");
    ++pos_;
    Token t = make(TokKind::String, begin, pos_);
    t.text = value;
    return t;
  }

  std::shared_ptr<const SourceFile> file_;
  const std::string& s_;
  size_t pos_ = 0;
  int line_ = 1;
  size_t line_start_ = 0;
};

}  // namespace

std::vector<Token> tokenize(const std::shared_ptr<const SourceFile>& file) { return Lexer(file).run(); }

}  // namespace collmc::model

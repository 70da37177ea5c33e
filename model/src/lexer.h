// Tokens of the scenario language (LANGUAGE.md, lexical rules). Private to the model library.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collmc/model/source.h"

namespace collmc::model {

enum class TokKind : uint8_t {
  Name,     // [A-Za-z_][A-Za-z0-9_.]*
  Integer,  // 12
  Size,     // 64KiB (value holds the bytes)
  Version,  // 2.29 or 2.30.7 (a release number: digits and dots, a dot followed by a digit)
  String,   // "..."
  LBrace,
  RBrace,
  LBracket,
  RBracket,
  Comma,
  Semicolon,
  Equals,
  Arrow,   // ->
  Minus,   // '-' not followed by '>': the sign of a negative number (`tag=-5`, an erroneous MPI tag)
  DotDot,  // ..
  Star,
  Newline,
  End,
};

struct Token {
  TokKind kind = TokKind::End;
  std::string text;  // as written (string contents without quotes for String)
  uint64_t value = 0;
  size_t offset = 0;  // byte offset in the file
  size_t length = 0;
  int line = 0;
  int column = 0;
};

std::string describe(const Token& tok);  // for "found ..." in errors
const char* token_kind_name(TokKind kind);

// Splits the whole file into tokens; throws InputError on a character that starts no token,
// an unterminated string, or a number that does not fit.
std::vector<Token> tokenize(const std::shared_ptr<const SourceFile>& file);

}  // namespace collmc::model

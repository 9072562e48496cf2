// Tokenizer of the IR text form (private to kiln_ir). Tracks line and column for errors.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::ir {

enum class TokenKind {
  End,
  Identifier,  // keywords, op names, dtypes, attribute names, inf, nan, true, false
  ValueName,   // %name (text holds the name without '%')
  GraphName,   // @name
  String,      // "text" (text holds the unescaped contents)
  Integer,     // -?[0-9]+
  Float,       // -?[0-9]+(.[0-9]*)?(e[+-]?[0-9]+)? with '.' or 'e', or -inf / -nan
  Punct,       // one of { } ( ) [ ] , : = < >
};

struct Token {
  TokenKind kind = TokenKind::End;
  std::string text;
  int line = 1;
  int column = 1;
};

class Lexer {
 public:
  Lexer(std::string_view text, std::string_view fileName) : text_(text), fileName_(fileName) {}

  // The next token; throws CompileError "FILE:LINE:COL: ..." on a malformed token.
  Token next();
  // "FILE:LINE:COL: " prefix for a token.
  std::string where(const Token& token) const;

 private:
  char peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  char advance();
  void skipSpaceAndComments();
  std::string quotedString(const Token& start);
  [[noreturn]] void fail(int line, int column, const std::string& message) const;

  std::string_view text_;
  std::string_view fileName_;
  size_t pos_ = 0;
  int line_ = 1;
  int column_ = 1;
};

}  // namespace kiln::ir

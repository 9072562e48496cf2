// Tokenizer of the IR text form.
#include "lexer.h"

#include <cctype>

#include "kiln/support/diagnostics.h"

namespace kiln::ir {
namespace {

bool isNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '$' ||
         c == '/' || c == '-';
}

}  // namespace

char Lexer::advance() {
  char c = text_[pos_++];
  if (c == '\n') {
    ++line_;
    column_ = 1;
  } else {
    ++column_;
  }
  return c;
}

void Lexer::fail(int line, int column, const std::string& message) const {
  throw CompileError(std::string(fileName_) + ":" + std::to_string(line) + ":" +
                     std::to_string(column) + ": " + message);
}

std::string Lexer::where(const Token& token) const {
  return std::string(fileName_) + ":" + std::to_string(token.line) + ":" +
         std::to_string(token.column) + ": ";
}

void Lexer::skipSpaceAndComments() {
  while (pos_ < text_.size()) {
    char c = peek();
    if (c == '#') {
      while (pos_ < text_.size() && peek() != '\n') advance();
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      advance();
    } else {
      break;
    }
  }
}

std::string Lexer::quotedString(const Token& start) {
  advance();  // opening quote
  std::string out;
  while (true) {
    if (pos_ >= text_.size() || peek() == '\n')
      fail(start.line, start.column, "unterminated string");
    char c = advance();
    if (c == '"') return out;
    if (c == '\\') {
      if (pos_ >= text_.size()) fail(start.line, start.column, "unterminated string");
      char e = advance();
      if (e == 'n')
        out += '\n';
      else if (e == '"' || e == '\\')
        out += e;
      else
        fail(line_, column_ - 2, std::string("unknown escape \\") + e + " in string");
    } else {
      out += c;
    }
  }
}

Token Lexer::next() {
  skipSpaceAndComments();
  Token t;
  t.line = line_;
  t.column = column_;
  if (pos_ >= text_.size()) return t;
  char c = peek();
  if (c == '%' || c == '@') {
    advance();
    t.kind = c == '%' ? TokenKind::ValueName : TokenKind::GraphName;
    if (peek() == '"') {
      t.text = quotedString(t);
    } else {
      while (isNameChar(peek())) t.text += advance();
    }
    if (t.text.empty()) fail(t.line, t.column, std::string("expected a name after '") + c + "'");
    return t;
  }
  if (c == '"') {
    t.kind = TokenKind::String;
    t.text = quotedString(t);
    return t;
  }
  bool negative = c == '-';
  char first = negative ? peek(1) : c;
  if (std::isdigit(static_cast<unsigned char>(first))) {
    if (negative) t.text += advance();
    bool isFloat = false;
    while (std::isdigit(static_cast<unsigned char>(peek()))) t.text += advance();
    if (peek() == '.') {
      isFloat = true;
      t.text += advance();
      while (std::isdigit(static_cast<unsigned char>(peek()))) t.text += advance();
    }
    if (peek() == 'e' || peek() == 'E') {
      isFloat = true;
      t.text += advance();
      if (peek() == '+' || peek() == '-') t.text += advance();
      if (!std::isdigit(static_cast<unsigned char>(peek())))
        fail(line_, column_, "malformed number exponent");
      while (std::isdigit(static_cast<unsigned char>(peek()))) t.text += advance();
    }
    t.kind = isFloat ? TokenKind::Float : TokenKind::Integer;
    return t;
  }
  if (negative && (text_.substr(pos_, 4) == "-inf" || text_.substr(pos_, 4) == "-nan")) {
    for (int i = 0; i < 4; ++i) t.text += advance();
    t.kind = TokenKind::Float;
    return t;
  }
  if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
    t.kind = TokenKind::Identifier;
    while (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '_') t.text += advance();
    return t;
  }
  if (std::string_view("{}()[],:=<>").find(c) != std::string_view::npos) {
    t.kind = TokenKind::Punct;
    t.text = std::string(1, advance());
    return t;
  }
  fail(t.line, t.column, std::string("unexpected character '") + c + "'");
}

}  // namespace kiln::ir

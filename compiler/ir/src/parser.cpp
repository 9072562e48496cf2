// Recursive-descent parser of the IR text form (grammar in printer.h).
#include "kiln/ir/parser.h"

#include <cmath>
#include <limits>

#include "kiln/ir/constant_data.h"
#include "kiln/ir/printer.h"
#include "kiln/support/diagnostics.h"
#include "kiln/support/half.h"
#include "lexer.h"

namespace kiln::ir {
namespace {

std::string describe(const Token& t) {
  switch (t.kind) {
    case TokenKind::End:
      return "end of input";
    case TokenKind::ValueName:
      return "'" + valueRef(t.text) + "'";
    case TokenKind::GraphName:
      return "'@" + t.text + "'";
    case TokenKind::String:
      return "string \"" + t.text + "\"";
    default:
      return "'" + t.text + "'";
  }
}

class Parser {
 public:
  Parser(std::string_view text, std::string_view fileName) : lexer_(text, fileName) {
    token_ = lexer_.next();
  }

  std::unique_ptr<Graph> parse() {
    expectKeyword("graph");
    if (token_.kind != TokenKind::GraphName)
      error("expected a graph name like @main, got " + describe(token_));
    graph_ = std::make_unique<Graph>(take().text);
    expectPunct("{");
    while (!isPunct("}")) {
      if (token_.kind == TokenKind::End) error("expected '}' to close the graph, got end of input");
      parseItem();
    }
    take();
    if (token_.kind != TokenKind::End) error("unexpected " + describe(token_) + " after the graph");
    return std::move(graph_);
  }

 private:
  // ---- token helpers ----
  [[noreturn]] void error(const std::string& message) const { errorAt(token_, message); }
  [[noreturn]] void errorAt(const Token& t, const std::string& message) const {
    throw CompileError(lexer_.where(t) + message);
  }
  Token take() {
    Token t = std::move(token_);
    token_ = lexer_.next();
    return t;
  }
  bool isPunct(const char* p) const { return token_.kind == TokenKind::Punct && token_.text == p; }
  bool isKeyword(const char* k) const {
    return token_.kind == TokenKind::Identifier && token_.text == k;
  }
  void expectPunct(const char* p) {
    if (!isPunct(p)) error(std::string("expected '") + p + "', got " + describe(token_));
    take();
  }
  void expectKeyword(const char* k) {
    if (!isKeyword(k)) error(std::string("expected '") + k + "', got " + describe(token_));
    take();
  }
  std::string expectString(const char* what) {
    if (token_.kind != TokenKind::String)
      error(std::string("expected ") + what + " string, got " + describe(token_));
    return take().text;
  }

  int64_t parseInt(const char* what) {
    if (token_.kind != TokenKind::Integer)
      error(std::string("expected ") + what + ", got " + describe(token_));
    Token t = take();
    try {
      return std::stoll(t.text);
    } catch (const std::exception&) {
      errorAt(t, "integer " + t.text + " is out of range");
    }
  }

  double parseNumber(const char* what, bool asDouble = false) {
    if (token_.kind == TokenKind::Integer) return double(parseInt(what));
    if (token_.kind == TokenKind::Identifier && (token_.text == "inf" || token_.text == "nan")) {
      return take().text == "inf" ? INFINITY : std::numeric_limits<double>::quiet_NaN();
    }
    if (token_.kind != TokenKind::Float)
      error(std::string("expected ") + what + ", got " + describe(token_));
    Token t = take();
    if (t.text == "-inf") return -INFINITY;
    if (t.text == "-nan") return -std::numeric_limits<double>::quiet_NaN();
    // strtof, not strtod: the text is the shortest form of a float and must round to it (f64
    // elements are the shortest form of a double).
    if (asDouble) return std::strtod(t.text.c_str(), nullptr);
    return double(std::strtof(t.text.c_str(), nullptr));
  }

  // ---- types ----
  TensorType parseType() {
    if (token_.kind != TokenKind::Identifier)
      error("expected a type like f32[1,4], got " + describe(token_));
    Token t = take();
    auto dtype = parseDType(t.text);
    if (!dtype)
      errorAt(t,
              "unknown dtype '" + t.text + "' (expected f32, f16, i8, u8, i16, i32, i64 or bool)");
    TensorType type;
    type.dtype = *dtype;
    expectPunct("[");
    while (!isPunct("]")) {
      if (!type.shape.empty()) expectPunct(",");
      Token dimToken = token_;
      int64_t dim = parseInt("a dimension");
      if (dim < 0) errorAt(dimToken, "dimension " + std::to_string(dim) + " is negative");
      type.shape.push_back(dim);
    }
    take();
    if (isKeyword("quant")) type.quant = parseQuant();
    return type;
  }

  QuantParams parseQuant() {
    take();
    expectPunct("(");
    QuantParams q;
    bool first = true;
    while (!isPunct(")")) {
      if (!first) expectPunct(",");
      first = false;
      if (token_.kind != TokenKind::Identifier)
        error("expected axis, scale or zero_point, got " + describe(token_));
      Token key = take();
      expectPunct("=");
      if (key.text == "axis") {
        q.axis = parseInt("a quantization axis");
      } else if (key.text == "scale") {
        if (isPunct("[")) {
          take();
          while (!isPunct("]")) {
            if (!q.scales.empty()) expectPunct(",");
            q.scales.push_back(float(parseNumber("a scale")));
          }
          take();
        } else {
          q.scales.push_back(float(parseNumber("a scale")));
        }
      } else if (key.text == "zero_point") {
        if (isPunct("[")) {
          take();
          while (!isPunct("]")) {
            if (!q.zeroPoints.empty()) expectPunct(",");
            q.zeroPoints.push_back(parseInt("a zero point"));
          }
          take();
        } else {
          q.zeroPoints.push_back(parseInt("a zero point"));
        }
      } else {
        errorAt(key, "unknown quantization parameter '" + key.text + "'");
      }
    }
    take();
    return q;
  }

  // ---- items ----
  void parseItem() {
    if (isKeyword("input")) return parseInput();
    if (isKeyword("const")) return parseConst();
    if (isKeyword("output")) return parseOutput();
    if (token_.kind == TokenKind::ValueName) return parseOp();
    error("expected 'input', 'const', 'output' or an op like %y = Relu(%x), got " +
          describe(token_));
  }

  Token expectNewName() {
    if (token_.kind != TokenKind::ValueName)
      error("expected a value name like %x, got " + describe(token_));
    Token t = take();
    if (graph_->findValue(t.text)) errorAt(t, "redefinition of " + valueRef(t.text));
    return t;
  }

  void parseInput() {
    take();
    Token name = expectNewName();
    expectPunct(":");
    graph_->addInput(name.text, parseType());
  }

  void parseOutput() {
    take();
    std::string name = expectString("an output name");
    expectPunct("=");
    graph_->addOutput(name, useValue());
  }

  Value* useValue() {
    if (token_.kind != TokenKind::ValueName)
      error("expected a value like %x, got " + describe(token_));
    Token t = take();
    Value* v = graph_->findValue(t.text);
    if (!v) errorAt(t, "use of undefined value " + valueRef(t.text));
    return v;
  }

  void parseConst() {
    take();
    Token name = expectNewName();
    expectPunct(":");
    TensorType type = parseType();
    expectPunct("=");
    Token bodyStart = token_;
    std::vector<uint8_t> bytes;
    if (isKeyword("hex")) {
      take();
      Token hex = token_;
      std::string digits = expectString("a hex");
      if (digits.size() != 2 * type.byteSize())
        errorAt(hex, "hex constant has " + std::to_string(digits.size() / 2) + " bytes, type " +
                         type.toString() + " needs " + std::to_string(type.byteSize()));
      bytes.resize(type.byteSize());
      for (size_t i = 0; i < bytes.size(); ++i) {
        int hi = hexDigit(digits[2 * i]), lo = hexDigit(digits[2 * i + 1]);
        if (hi < 0 || lo < 0) errorAt(hex, "invalid hex digit in constant");
        bytes[i] = uint8_t(hi * 16 + lo);
      }
    } else if (isKeyword("elided")) {
      take();
      expectPunct("(");
      expectString("an elided-constant hash");
      expectPunct(")");
      bytes.assign(type.byteSize(), 0);
    } else if (isKeyword("splat")) {
      take();
      expectPunct("(");
      bytes.resize(type.byteSize());
      storeLiteral(type.dtype, bytes.data(), 0);
      size_t elem = dtypeSize(type.dtype);
      for (size_t i = elem; i < bytes.size(); i += elem)
        std::copy(bytes.begin(), bytes.begin() + long(elem), bytes.begin() + long(i));
      expectPunct(")");
    } else if (isPunct("[")) {
      take();
      bytes.resize(type.byteSize());
      int64_t count = 0;
      while (!isPunct("]")) {
        if (count) expectPunct(",");
        if (count == type.numElements())
          errorAt(bodyStart, "constant has more than the " + std::to_string(count) +
                                 " elements of " + type.toString());
        storeLiteral(type.dtype, bytes.data(), count++);
      }
      take();
      if (count != type.numElements())
        errorAt(bodyStart, "constant has " + std::to_string(count) + " elements, type " +
                               type.toString() + " needs " + std::to_string(type.numElements()));
    } else {
      error("expected constant contents ([...], splat(v), hex\"...\" or elided(\"...\")), got " +
            describe(token_));
    }
    graph_->addConstant(name.text, std::move(type), std::move(bytes));
  }

  static int hexDigit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  void storeLiteral(DType dtype, uint8_t* data, int64_t index) {
    if (dtype == DType::Bool && (isKeyword("true") || isKeyword("false"))) {
      writeElementInt(dtype, data, index, take().text == "true" ? 1 : 0);
    } else if (isFloat(dtype)) {
      writeElementDouble(dtype, data, index, parseNumber("a number", dtype == DType::F64));
    } else {
      Token t = token_;
      if (t.kind == TokenKind::Float)
        errorAt(t, "expected an integer element for " + std::string(dtypeName(dtype)) + ", got " +
                       describe(t));
      writeElementInt(dtype, data, index, parseInt("an integer element"));
    }
  }

  void parseOp() {
    std::vector<Token> names;
    names.push_back(expectNewName());
    while (isPunct(",")) {
      take();
      names.push_back(expectNewName());
    }
    expectPunct("=");
    if (token_.kind != TokenKind::Identifier) error("expected an op name, got " + describe(token_));
    Token opToken = take();
    auto kind = parseOpKind(opToken.text);
    if (!kind) errorAt(opToken, "unknown op '" + opToken.text + "'");
    expectPunct("(");
    std::vector<Value*> operands;
    while (!isPunct(")")) {
      if (!operands.empty()) expectPunct(",");
      if (isKeyword("none")) {
        take();
        operands.push_back(nullptr);
      } else {
        operands.push_back(useValue());
      }
    }
    take();
    AttributeMap attrs;
    if (isPunct("{")) attrs = parseAttributes();
    expectPunct(":");
    std::vector<TensorType> types;
    types.push_back(parseType());
    while (isPunct(",")) {
      take();
      types.push_back(parseType());
    }
    if (types.size() != names.size())
      errorAt(opToken, std::to_string(names.size()) + " result names but " +
                           std::to_string(types.size()) + " result types");
    SourceInfo source;
    if (isKeyword("loc")) {
      take();
      expectPunct("(");
      source.nodeName = expectString("a node name");
      expectPunct(",");
      source.opType = expectString("an op type");
      expectPunct(")");
    }
    std::vector<std::string> resultNames;
    for (const Token& n : names) resultNames.push_back(n.text);
    // Names were checked unused by expectNewName; a repeat within one op is caught here.
    for (size_t i = 0; i < names.size(); ++i)
      for (size_t j = 0; j < i; ++j)
        if (names[i].text == names[j].text)
          errorAt(names[i], "redefinition of " + valueRef(names[i].text));
    graph_->createOp(*kind, std::move(operands), std::move(types), std::move(attrs),
                     std::move(source), nullptr, std::move(resultNames));
  }

  AttributeMap parseAttributes() {
    take();
    AttributeMap attrs;
    while (!isPunct("}")) {
      if (!attrs.empty()) expectPunct(",");
      if (token_.kind != TokenKind::Identifier)
        error("expected an attribute name, got " + describe(token_));
      Token name = take();
      if (attrs.has(name.text)) errorAt(name, "attribute '" + name.text + "' is given twice");
      expectPunct("=");
      attrs.set(name.text, parseAttributeValue());
    }
    take();
    return attrs;
  }

  Attribute parseAttributeValue() {
    if (token_.kind == TokenKind::Integer) return parseInt("an integer");
    if (token_.kind == TokenKind::Float || isKeyword("inf") || isKeyword("nan"))
      return float(parseNumber("a number"));
    if (token_.kind == TokenKind::String) return take().text;
    if (isKeyword("floats")) {
      take();
      expectPunct("[");
      expectPunct("]");
      return std::vector<float>{};
    }
    if (!isPunct("["))
      error("expected an attribute value (int, float, string or list), got " + describe(token_));
    take();
    std::vector<int64_t> ints;
    std::vector<float> floats;
    bool isFloatList = false;
    while (!isPunct("]")) {
      if (!ints.empty() || !floats.empty()) expectPunct(",");
      bool floatToken = token_.kind == TokenKind::Float || isKeyword("inf") || isKeyword("nan");
      if (floatToken && !isFloatList) {
        isFloatList = true;
        for (int64_t i : ints) floats.push_back(float(i));
        ints.clear();
      }
      if (isFloatList)
        floats.push_back(float(parseNumber("a number")));
      else
        ints.push_back(parseInt("an integer"));
    }
    take();
    if (isFloatList) return floats;
    return ints;
  }

  Lexer lexer_;
  Token token_;
  std::unique_ptr<Graph> graph_;
};

}  // namespace

std::unique_ptr<Graph> parseGraph(std::string_view text, std::string_view fileName) {
  return Parser(text, fileName).parse();
}

}  // namespace kiln::ir

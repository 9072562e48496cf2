// Prints a Graph in the IR text form described in printer.h.
#include "kiln/ir/printer.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "kiln/ir/constant_data.h"
#include "kiln/ir/graph.h"
#include "kiln/support/strings.h"

namespace kiln::ir {
namespace {

bool isBareNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '$' || c == '/' || c == '-';
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string nameText(char sigil, const std::string& name) {
  bool bare = !name.empty();
  for (char c : name) bare = bare && isBareNameChar(c);
  return std::string(1, sigil) + (bare ? name : quoted(name));
}

// Shortest text that parses back to the same double (formatFloat's rule for f64 elements).
std::string formatDouble(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  std::string text(buffer, result.ptr);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

std::string elementText(DType dtype, const uint8_t* data, int64_t i) {
  if (dtype == DType::Bool) return readElementInt(dtype, data, i) ? "true" : "false";
  if (dtype == DType::F64) return formatDouble(readElementDouble(dtype, data, i));
  if (isFloat(dtype)) return formatFloat(float(readElementDouble(dtype, data, i)));
  return std::to_string(readElementInt(dtype, data, i));
}

// Literal lists must parse back to the same bytes: NaNs (payloads) and -0.0 are fine through
// formatFloat except NaN payloads, so NaN-holding float constants use hex.
bool literalIsExact(const Value* c) {
  if (!isFloat(c->dtype())) return true;
  const auto& bytes = c->constantBytes();
  for (int64_t i = 0; i < c->type().numElements(); ++i)
    if (std::isnan(readElementDouble(c->dtype(), bytes.data(), i))) return false;
  return true;
}

std::string hexText(const std::vector<uint8_t>& bytes) {
  static const char* kDigits = "0123456789abcdef";
  std::string out = "hex\"";
  out.reserve(bytes.size() * 2 + 5);
  for (uint8_t b : bytes) {
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out + "\"";
}

std::string constantBody(const Value* c, const PrintOptions& options) {
  const auto& bytes = c->constantBytes();
  int64_t n = c->type().numElements();
  if (bytes.size() > options.elideConstantsOver) {
    char hash[40];
    std::snprintf(hash, sizeof(hash), "%016llx",
                  static_cast<unsigned long long>(fnv1a64(bytes.data(), bytes.size())));
    return std::string("elided(\"fnv1a64:") + hash + "\")";
  }
  bool exact = literalIsExact(c);
  if (exact && n > 1 && isSplatConstant(c))
    return "splat(" + elementText(c->dtype(), bytes.data(), 0) + ")";
  if (exact && size_t(n) <= options.maxLiteralElements) {
    std::string out = "[";
    for (int64_t i = 0; i < n; ++i)
      out += (i ? ", " : "") + elementText(c->dtype(), bytes.data(), i);
    return out + "]";
  }
  return hexText(bytes);
}

}  // namespace

std::string valueRef(const std::string& name) { return nameText('%', name); }

void printGraph(std::ostream& out, const Graph& graph, const PrintOptions& options) {
  out << "graph " << nameText('@', graph.name()) << " {\n";
  for (const Value* v : graph.inputs())
    out << "  input " << valueRef(v->name()) << " : " << v->type().toString() << "\n";
  for (const Value* c : graph.constants())
    out << "  const " << valueRef(c->name()) << " : " << c->type().toString() << " = "
        << constantBody(c, options) << "\n";
  for (const auto& owned : graph.ops()) {
    const Op& op = *owned;
    out << "  ";
    for (size_t i = 0; i < op.numResults(); ++i)
      out << (i ? ", " : "") << valueRef(op.result(i)->name());
    out << " = " << op.kindName() << "(";
    for (size_t i = 0; i < op.numOperands(); ++i) {
      const Value* v = op.operand(i);
      out << (i ? ", " : "") << (v ? valueRef(v->name()) : std::string("none"));
    }
    out << ")";
    if (!op.attrs().empty()) {
      out << " {";
      bool first = true;
      for (const auto& [name, value] : op.attrs().entries()) {
        out << (first ? "" : ", ") << name << " = " << attributeToString(value);
        first = false;
      }
      out << "}";
    }
    out << " : ";
    for (size_t i = 0; i < op.numResults(); ++i)
      out << (i ? ", " : "") << op.result(i)->type().toString();
    if (options.printLocations && !op.source().empty())
      out << " loc(" << quoted(op.source().nodeName) << ", " << quoted(op.source().opType) << ")";
    out << "\n";
  }
  for (const GraphOutput& o : graph.outputs())
    out << "  output " << quoted(o.name) << " = " << valueRef(o.value->name()) << "\n";
  out << "}\n";
}

std::string printGraph(const Graph& graph, const PrintOptions& options) {
  std::ostringstream out;
  printGraph(out, graph, options);
  return out.str();
}

}  // namespace kiln::ir

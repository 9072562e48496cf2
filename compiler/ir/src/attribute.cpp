// AttributeMap typed getters and the text form of attribute values.
#include "kiln/ir/attribute.h"

#include "kiln/support/diagnostics.h"
#include "kiln/support/strings.h"

namespace kiln::ir {
namespace {

const char* kindName(const Attribute& a) {
  switch (a.index()) {
    case 0:
      return "int";
    case 1:
      return "float";
    case 2:
      return "ints";
    case 3:
      return "floats";
    default:
      return "string";
  }
}

template <typename T>
const T& getTyped(const std::map<std::string, Attribute>& values, const std::string& name,
                  const char* wanted) {
  auto it = values.find(name);
  if (it == values.end()) throw CompileError("missing attribute '" + name + "'");
  if (const T* v = std::get_if<T>(&it->second)) return *v;
  throw CompileError("attribute '" + name + "' is " + kindName(it->second) + ", expected " +
                     wanted);
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string attributeToString(const Attribute& value) {
  switch (value.index()) {
    case 0:
      return std::to_string(std::get<int64_t>(value));
    case 1:
      return formatFloat(std::get<float>(value));
    case 2:
      return "[" + joinInts(std::get<std::vector<int64_t>>(value), ", ") + "]";
    case 3: {
      const auto& fs = std::get<std::vector<float>>(value);
      if (fs.empty()) return "floats[]";
      std::string out = "[";
      for (size_t i = 0; i < fs.size(); ++i) out += (i ? ", " : "") + formatFloat(fs[i]);
      return out + "]";
    }
    default:
      return quote(std::get<std::string>(value));
  }
}

int64_t AttributeMap::getInt(const std::string& name) const {
  return getTyped<int64_t>(values_, name, "int");
}
int64_t AttributeMap::getInt(const std::string& name, int64_t fallback) const {
  return has(name) ? getInt(name) : fallback;
}
float AttributeMap::getFloat(const std::string& name) const {
  auto it = values_.find(name);
  // An integer literal is accepted where a float is expected (e.g. "alpha = 1").
  if (it != values_.end())
    if (const int64_t* i = std::get_if<int64_t>(&it->second)) return float(*i);
  return getTyped<float>(values_, name, "float");
}
float AttributeMap::getFloat(const std::string& name, float fallback) const {
  return has(name) ? getFloat(name) : fallback;
}
const std::vector<int64_t>& AttributeMap::getInts(const std::string& name) const {
  return getTyped<std::vector<int64_t>>(values_, name, "ints");
}
std::vector<int64_t> AttributeMap::getInts(const std::string& name,
                                           std::vector<int64_t> fallback) const {
  return has(name) ? getInts(name) : fallback;
}
const std::vector<float>& AttributeMap::getFloats(const std::string& name) const {
  return getTyped<std::vector<float>>(values_, name, "floats");
}
const std::string& AttributeMap::getString(const std::string& name) const {
  return getTyped<std::string>(values_, name, "string");
}
std::string AttributeMap::getString(const std::string& name, std::string fallback) const {
  return has(name) ? getString(name) : fallback;
}

}  // namespace kiln::ir

// Op attributes: a small typed map from name to int, float, ints, floats or string.
// Names and meanings follow ONNX (opset 17) for ONNX-derived ops; absent attributes take the
// ONNX default, which the getters with a default argument express.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace kiln::ir {

using Attribute =
    std::variant<int64_t, float, std::vector<int64_t>, std::vector<float>, std::string>;

// Text form of one attribute value ("3", "1.5", "[1, 2]", "[0.5]", "floats[]", "\"NOTSET\"").
std::string attributeToString(const Attribute& value);

class AttributeMap {
 public:
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  void set(const std::string& name, Attribute value) { values_[name] = std::move(value); }
  void erase(const std::string& name) { values_.erase(name); }

  // Typed getters. Without a default, a missing or differently typed attribute throws
  // kiln::CompileError("attribute 'NAME' ..."); the verifier adds the op's context.
  int64_t getInt(const std::string& name) const;
  int64_t getInt(const std::string& name, int64_t fallback) const;
  float getFloat(const std::string& name) const;
  float getFloat(const std::string& name, float fallback) const;
  const std::vector<int64_t>& getInts(const std::string& name) const;
  std::vector<int64_t> getInts(const std::string& name, std::vector<int64_t> fallback) const;
  const std::vector<float>& getFloats(const std::string& name) const;
  const std::string& getString(const std::string& name) const;
  std::string getString(const std::string& name, std::string fallback) const;

  // Sorted by name: printing is deterministic.
  const std::map<std::string, Attribute>& entries() const { return values_; }
  bool empty() const { return values_.empty(); }
  bool operator==(const AttributeMap&) const = default;

 private:
  std::map<std::string, Attribute> values_;
};

}  // namespace kiln::ir

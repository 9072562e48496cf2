// Parsing command-line tensors (see tensor_spec.h for the accepted forms).
#include "tensor_spec.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "cli_error.h"
#include "half.h"
#include "npy.h"

namespace kiln::cli {
namespace {

std::vector<std::string_view> splitValues(std::string_view text) {
  std::vector<std::string_view> values;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == ',' || text[i] == '\t' ||
                               text[i] == '\n' || text[i] == '[' || text[i] == ']'))
      ++i;
    size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != ',' && text[i] != '\t' &&
           text[i] != '\n' && text[i] != '[' && text[i] != ']')
      ++i;
    if (i > start) values.push_back(text.substr(start, i - start));
  }
  return values;
}

void storeValue(ElementType type, std::string_view text, uint8_t* out, std::string_view spec) {
  auto bad = [&]() {
    throw CliError("invalid " + std::string(elementTypeName(type)) + " value '" +
                   std::string(text) + "' in tensor '" + std::string(spec) + "'");
  };
  if (type == ElementType::F64) {
    std::string copy(text);
    char* end = nullptr;
    double value = std::strtod(copy.c_str(), &end);
    if (end != copy.c_str() + copy.size() || copy.empty()) bad();
    std::memcpy(out, &value, 8);
    return;
  }
  if (isFloatingPoint(type)) {
    std::string copy(text);
    char* end = nullptr;
    errno = 0;
    float value = std::strtof(copy.c_str(), &end);
    if (end != copy.c_str() + copy.size() || copy.empty()) bad();
    if (type == ElementType::F32) {
      std::memcpy(out, &value, 4);
    } else {
      uint16_t half = floatToHalf(value);
      std::memcpy(out, &half, 2);
    }
    return;
  }
  if (type == ElementType::Bool) {
    if (text == "1" || text == "true" || text == "True") *out = 1;
    else if (text == "0" || text == "false" || text == "False") *out = 0;
    else bad();
    return;
  }
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) bad();
  auto checkRange = [&](int64_t lo, int64_t hi) {
    if (value < lo || value > hi)
      throw CliError("value " + std::string(text) + " out of range for " +
                     std::string(elementTypeName(type)) + " in tensor '" + std::string(spec) +
                     "'");
  };
  switch (type) {
    case ElementType::I8: checkRange(-128, 127); { int8_t v = static_cast<int8_t>(value); std::memcpy(out, &v, 1); } break;
    case ElementType::U8: checkRange(0, 255); { uint8_t v = static_cast<uint8_t>(value); std::memcpy(out, &v, 1); } break;
    case ElementType::I16: checkRange(-32768, 32767); { int16_t v = static_cast<int16_t>(value); std::memcpy(out, &v, 2); } break;
    case ElementType::I32: checkRange(INT32_MIN, INT32_MAX); { int32_t v = static_cast<int32_t>(value); std::memcpy(out, &v, 4); } break;
    case ElementType::I64: std::memcpy(out, &value, 8); break;
    default: bad();
  }
}

HostTensor loadFileWithType(const std::string& path, ElementType type,
                            const std::vector<int64_t>& shape, std::string_view spec) {
  HostTensor wanted;
  wanted.type = type;
  wanted.shape = shape;
  std::vector<uint8_t> bytes = readFileBytes(path);
  if (bytes.size() >= 6 && std::memcmp(bytes.data(), "\x93NUMPY", 6) == 0) {
    HostTensor loaded = decodeNpy(bytes, path);
    if (loaded.type != type)
      throw CliError("'" + path + "' holds " + std::string(elementTypeName(loaded.type)) +
                     " values but '" + std::string(spec) + "' asks for " +
                     std::string(elementTypeName(type)));
    if (loaded.elementCount() != wanted.elementCount())
      throw CliError("'" + path + "' holds " + describeTensorType(loaded.type, loaded.shape) +
                     " (" + std::to_string(loaded.elementCount()) + " elements), not " +
                     describeTensorType(type, shape) + " (" +
                     std::to_string(wanted.elementCount()) + " elements)");
    wanted.data = std::move(loaded.data);
    return wanted;
  }
  size_t expected = wanted.elementCount() * elementSize(type);
  if (bytes.size() != expected)
    throw CliError("raw file '" + path + "' has " + std::to_string(bytes.size()) +
                   " bytes, " + describeTensorType(type, shape) + " needs " +
                   std::to_string(expected));
  wanted.data = std::move(bytes);
  return wanted;
}

}  // namespace

bool parseTensorType(std::string_view text, ElementType& type, std::vector<int64_t>& shape) {
  shape.clear();
  while (true) {
    size_t x = text.find('x');
    if (x == std::string_view::npos) break;
    std::string_view dim = text.substr(0, x);
    int64_t value = 0;
    auto [ptr, ec] = std::from_chars(dim.data(), dim.data() + dim.size(), value);
    if (dim.empty() || ec != std::errc() || ptr != dim.data() + dim.size() || value < 0)
      return false;
    shape.push_back(value);
    text.remove_prefix(x + 1);
  }
  auto parsed = parseElementType(text);
  if (!parsed) return false;
  type = *parsed;
  return true;
}

HostTensor parseTensorSpec(std::string_view spec) {
  if (spec.empty()) throw CliError("empty tensor value");
  if (spec.front() == '@') {
    std::string path(spec.substr(1));
    if (path.empty()) throw CliError("'@' must be followed by a file name");
    return readNpyFile(path);
  }
  size_t equals = spec.find('=');
  std::string_view typeText = spec.substr(0, equals);
  HostTensor tensor;
  if (!parseTensorType(typeText, tensor.type, tensor.shape))
    throw CliError("cannot parse tensor '" + std::string(spec) +
                   "': expected SHAPExTYPE=VALUES (e.g. 2x2xf32=1 2 3 4), @FILE.npy or "
                   "SHAPExTYPE=@FILE");
  std::string_view valueText = equals == std::string_view::npos ? "" : spec.substr(equals + 1);
  if (!valueText.empty() && valueText.front() == '@')
    return loadFileWithType(std::string(valueText.substr(1)), tensor.type, tensor.shape, spec);

  size_t count = tensor.elementCount();
  size_t size = elementSize(tensor.type);
  tensor.data.assign(count * size, 0);
  std::vector<std::string_view> values = splitValues(valueText);
  if (values.size() == 1) {
    std::vector<uint8_t> one(size);
    storeValue(tensor.type, values[0], one.data(), spec);
    for (size_t i = 0; i < count; ++i) std::memcpy(tensor.data.data() + i * size, one.data(), size);
  } else if (!values.empty()) {
    if (values.size() != count)
      throw CliError("tensor '" + std::string(typeText) + "' needs " + std::to_string(count) +
                     " values, got " + std::to_string(values.size()));
    for (size_t i = 0; i < count; ++i)
      storeValue(tensor.type, values[i], tensor.data.data() + i * size, spec);
  }
  return tensor;
}

}  // namespace kiln::cli

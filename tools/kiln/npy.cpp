// Reading and writing NumPy .npy files (see npy.h for what is supported).
#include "npy.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <string_view>

#include "cli_error.h"

namespace kiln::cli {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

[[noreturn]] void fail(const std::string& name, const std::string& what) {
  throw CliError("'" + name + "': " + what);
}

// Finds `'key':` in the header dictionary and returns the text after the colon.
std::optional<std::string_view> findKey(std::string_view header, std::string_view key) {
  for (char quote : {'\'', '"'}) {
    std::string pattern = std::string(1, quote) + std::string(key) + std::string(1, quote);
    size_t pos = header.find(pattern);
    if (pos == std::string_view::npos) continue;
    pos = header.find(':', pos + pattern.size());
    if (pos == std::string_view::npos) return std::nullopt;
    std::string_view rest = header.substr(pos + 1);
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    return rest;
  }
  return std::nullopt;
}

std::string parseDescr(std::string_view header, const std::string& name) {
  auto value = findKey(header, "descr");
  if (!value || value->empty() || (value->front() != '\'' && value->front() != '"'))
    fail(name, "malformed .npy header: no 'descr' string");
  char quote = value->front();
  size_t end = value->find(quote, 1);
  if (end == std::string_view::npos) fail(name, "malformed .npy header: unterminated 'descr'");
  return std::string(value->substr(1, end - 1));
}

bool parseFortranOrder(std::string_view header, const std::string& name) {
  auto value = findKey(header, "fortran_order");
  if (!value) fail(name, "malformed .npy header: no 'fortran_order'");
  if (value->starts_with("False")) return false;
  if (value->starts_with("True")) return true;
  fail(name, "malformed .npy header: 'fortran_order' is neither True nor False");
}

std::vector<int64_t> parseShape(std::string_view header, const std::string& name) {
  auto value = findKey(header, "shape");
  if (!value || value->empty() || value->front() != '(')
    fail(name, "malformed .npy header: no 'shape' tuple");
  size_t end = value->find(')');
  if (end == std::string_view::npos) fail(name, "malformed .npy header: unterminated 'shape'");
  std::string_view body = value->substr(1, end - 1);
  std::vector<int64_t> shape;
  size_t i = 0;
  while (i < body.size()) {
    while (i < body.size() && (body[i] == ' ' || body[i] == ',')) ++i;
    if (i >= body.size()) break;
    int64_t dim = 0;
    size_t digits = 0;
    while (i < body.size() && body[i] >= '0' && body[i] <= '9') {
      dim = dim * 10 + (body[i] - '0');
      if (dim > (int64_t{1} << 40)) fail(name, "malformed .npy header: dimension too large");
      ++i;
      ++digits;
    }
    if (digits == 0) fail(name, "malformed .npy header: bad 'shape' " + std::string(body));
    if (i < body.size() && body[i] == 'L') ++i;  // Python 2 long suffix
    shape.push_back(dim);
  }
  return shape;
}

// Maps a numpy type string such as "<f4" to an element type.
ElementType parseDtype(const std::string& descr, const std::string& name) {
  if (descr.size() < 3) fail(name, "unsupported dtype '" + descr + "'");
  char order = descr[0];
  std::string kind = descr.substr(1);
  bool singleByte = kind == "i1" || kind == "u1" || kind == "b1";
  if (order == '>' && !singleByte)
    fail(name, "big-endian dtype '" + descr + "' is not supported; convert it with "
               "arr.astype(arr.dtype.newbyteorder('<'))");
  if (order != '<' && order != '|' && order != '=' && order != '>')
    fail(name, "unsupported dtype '" + descr + "'");
  if (kind == "f4") return ElementType::F32;
  if (kind == "f2") return ElementType::F16;
  if (kind == "f8") return ElementType::F64;
  if (kind == "i1") return ElementType::I8;
  if (kind == "u1") return ElementType::U8;
  if (kind == "i2") return ElementType::I16;
  if (kind == "i4") return ElementType::I32;
  if (kind == "i8") return ElementType::I64;
  if (kind == "b1") return ElementType::Bool;
  fail(name, "unsupported dtype '" + descr +
                 "'; supported: float32, float16, float64, int8, uint8, int16, int32, int64, bool");
}

std::string dtypeDescr(ElementType type) {
  switch (type) {
    case ElementType::F32: return "<f4";
    case ElementType::F16: return "<f2";
    case ElementType::I8: return "|i1";
    case ElementType::U8: return "|u1";
    case ElementType::I16: return "<i2";
    case ElementType::I32: return "<i4";
    case ElementType::I64: return "<i8";
    case ElementType::Bool: return "|b1";
    case ElementType::F64: return "<f8";
  }
  return "";
}

}  // namespace

HostTensor decodeNpy(std::span<const uint8_t> bytes, const std::string& name) {
  if (bytes.size() < kMagicSize + 4 || std::memcmp(bytes.data(), kMagic, kMagicSize) != 0)
    fail(name, "not a .npy file (no \\x93NUMPY magic)");
  uint8_t major = bytes[6];
  size_t headerLength = 0;
  size_t headerStart = 0;
  if (major == 1) {
    headerLength = bytes[8] | (size_t{bytes[9]} << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) fail(name, "truncated .npy header");
    headerLength = bytes[8] | (size_t{bytes[9]} << 8) | (size_t{bytes[10]} << 16) |
                   (size_t{bytes[11]} << 24);
    headerStart = 12;
  } else {
    fail(name, "unsupported .npy format version " + std::to_string(major) + "." +
                   std::to_string(bytes[7]));
  }
  if (bytes.size() < headerStart + headerLength) fail(name, "truncated .npy header");
  std::string_view header(reinterpret_cast<const char*>(bytes.data()) + headerStart,
                          headerLength);

  HostTensor tensor;
  tensor.type = parseDtype(parseDescr(header, name), name);
  if (parseFortranOrder(header, name))
    fail(name, "Fortran-order arrays are not supported; save np.ascontiguousarray(arr)");
  tensor.shape = parseShape(header, name);

  size_t dataStart = headerStart + headerLength;
  size_t expected = tensor.elementCount() * elementSize(tensor.type);
  size_t available = bytes.size() - dataStart;
  if (available < expected)
    fail(name, "truncated .npy data: the header says " + std::to_string(expected) +
                   " bytes, the file holds " + std::to_string(available));
  tensor.data.assign(bytes.begin() + dataStart, bytes.begin() + dataStart + expected);
  return tensor;
}

HostTensor readNpyFile(const std::string& path) {
  std::vector<uint8_t> bytes = readFileBytes(path);
  return decodeNpy(bytes, path);
}

namespace {

// The header bytes (magic, version, length, dictionary padded so that the data starts on a
// 64-byte boundary).
std::vector<uint8_t> encodeNpyHeader(const HostTensor& tensor) {
  std::string header = "{'descr': '" + dtypeDescr(tensor.type) +
                       "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < tensor.shape.size(); ++i) {
    header += std::to_string(tensor.shape[i]);
    if (tensor.shape.size() == 1 || i + 1 < tensor.shape.size()) header += ",";
    if (i + 1 < tensor.shape.size()) header += " ";
  }
  header += "), }";
  bool version2 = header.size() + 1 + 10 > 65535;
  size_t prefix = version2 ? 12 : 10;
  size_t total = prefix + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';

  std::vector<uint8_t> bytes(kMagic, kMagic + kMagicSize);
  bytes.push_back(version2 ? 2 : 1);
  bytes.push_back(0);
  size_t length = header.size();
  bytes.push_back(static_cast<uint8_t>(length));
  bytes.push_back(static_cast<uint8_t>(length >> 8));
  if (version2) {
    bytes.push_back(static_cast<uint8_t>(length >> 16));
    bytes.push_back(static_cast<uint8_t>(length >> 24));
  }
  bytes.insert(bytes.end(), header.begin(), header.end());
  return bytes;
}

}  // namespace

std::vector<uint8_t> encodeNpy(const HostTensor& tensor) {
  std::vector<uint8_t> bytes = encodeNpyHeader(tensor);
  bytes.insert(bytes.end(), tensor.data.begin(), tensor.data.end());
  return bytes;
}

void writeNpyFile(const std::string& path, const HostTensor& tensor) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) throw CliError("cannot write '" + path + "': " + std::strerror(errno));
  std::vector<uint8_t> header = encodeNpyHeader(tensor);
  file.write(reinterpret_cast<const char*>(header.data()),
             static_cast<std::streamsize>(header.size()));
  file.write(reinterpret_cast<const char*>(tensor.data.data()),
             static_cast<std::streamsize>(tensor.data.size()));
  if (!file) throw CliError("cannot write '" + path + "'");
}

std::vector<uint8_t> readFileBytes(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw CliError("cannot open '" + path + "': " + std::strerror(errno));
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)),
                             std::istreambuf_iterator<char>());
  if (file.bad()) throw CliError("cannot read '" + path + "'");
  return bytes;
}

void writeFileBytes(const std::string& path, std::span<const uint8_t> bytes) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) throw CliError("cannot write '" + path + "': " + std::strerror(errno));
  file.write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  if (!file) throw CliError("cannot write '" + path + "'");
}

}  // namespace kiln::cli

// JsonWriter (see json_writer.h).
#include "json_writer.h"

#include <cmath>
#include <cstdio>

namespace kiln::cli {

void JsonWriter::separate() {
  if (afterKey_) {
    afterKey_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_ += ',';
    first_.back() = false;
  }
}

void JsonWriter::open(char bracket) {
  separate();
  out_ += bracket;
  first_.push_back(true);
}

void JsonWriter::close(char bracket) {
  out_ += bracket;
  first_.pop_back();
}

void JsonWriter::key(std::string_view name) {
  value(name);
  out_ += ':';
  afterKey_ = true;
}

void JsonWriter::value(std::string_view text) {
  separate();
  out_ += '"';
  for (char c : text) {
    switch (c) {
      case '"': out_ += "\\\""; break;
      case '\\': out_ += "\\\\"; break;
      case '\n': out_ += "\\n"; break;
      case '\t': out_ += "\\t"; break;
      case '\r': out_ += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
          out_ += buffer;
        } else {
          out_ += c;
        }
    }
  }
  out_ += '"';
}

void JsonWriter::value(double number) {
  separate();
  if (!std::isfinite(number)) {
    out_ += "null";
    return;
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", number);
  out_ += buffer;
}

void JsonWriter::value(uint64_t number) {
  separate();
  out_ += std::to_string(number);
}

void JsonWriter::value(int64_t number) {
  separate();
  out_ += std::to_string(number);
}

void JsonWriter::value(bool flag) {
  separate();
  out_ += flag ? "true" : "false";
}

}  // namespace kiln::cli

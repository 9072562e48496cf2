// A small streaming JSON writer for `kiln dump --json` and `kiln bench --json`: objects,
// arrays, strings (escaped), numbers and booleans, written compactly in call order.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::cli {

class JsonWriter {
 public:
  void beginObject() { open('{'); }
  void endObject() { close('}'); }
  void beginArray() { open('['); }
  void endArray() { close(']'); }
  // Inside an object: the key of the next value.
  void key(std::string_view name);

  void value(std::string_view text);
  void value(const char* text) { value(std::string_view(text)); }
  void value(double number);
  void value(uint64_t number);
  void value(int64_t number);
  void value(uint32_t number) { value(uint64_t{number}); }
  void value(int number) { value(int64_t{number}); }
  void value(bool flag);

  template <typename T>
  void field(std::string_view name, const T& v) {
    key(name);
    value(v);
  }

  const std::string& text() const { return out_; }

 private:
  void open(char bracket);
  void close(char bracket);
  void separate();

  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool afterKey_ = false;
};

}  // namespace kiln::cli

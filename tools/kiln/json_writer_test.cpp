// Tests for JsonWriter output.
#include "json_writer.h"

#include <gtest/gtest.h>

namespace kiln::cli {
namespace {

TEST(JsonWriter, NestedValuesAndEscapes) {
  JsonWriter j;
  j.beginObject();
  j.field("name", "a\"b\\c\n");
  j.field("n", uint64_t{3});
  j.field("x", 0.5);
  j.key("list");
  j.beginArray();
  j.value(1);
  j.beginObject();
  j.field("ok", true);
  j.endObject();
  j.endArray();
  j.endObject();
  EXPECT_EQ(j.text(), R"({"name":"a\"b\\c\n","n":3,"x":0.5,"list":[1,{"ok":true}]})");
}

}  // namespace
}  // namespace kiln::cli

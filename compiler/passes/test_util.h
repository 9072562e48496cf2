// Helpers for the pass tests: parse IR text, run a pass, print the result.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "kiln/ir/parser.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/verifier.h"

namespace kiln::passes::testing {

inline std::unique_ptr<ir::Graph> parseVerified(const std::string& text) {
  auto graph = ir::parseGraph(text, "test.kir");
  ir::verifyGraph(*graph);
  return graph;
}

// Parses `text`, runs `pass`, verifies and returns the printed graph.
template <typename Pass>
std::string runPass(const std::string& text, Pass pass, bool expectChange = true) {
  auto graph = parseVerified(text);
  bool changed = pass(*graph);
  EXPECT_EQ(changed, expectChange);
  ir::verifyGraph(*graph);
  return ir::printGraph(*graph);
}

}  // namespace kiln::passes::testing

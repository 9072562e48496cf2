// Matching two artifacts' dispatches by the first node each runs and the first op of its
// name (dispatch_pairs.h).
#include "dispatch_pairs.h"

#include <gtest/gtest.h>

namespace kiln::cli {
namespace {

DispatchInfo named(const std::string& nodes, const std::string& name = "Op") {
  DispatchInfo info;
  info.node = nodes;
  info.name = name;
  return info;
}

// "a0-b1 ..." for the pairs, "-" where a side has none.
std::string text(const DispatchPairing& p) {
  std::string s;
  for (const DispatchPair& pair : p.pairs) {
    if (!s.empty()) s += " ";
    s += pair.a ? "a" + std::to_string(*pair.a) : "-";
    s += pair.b ? "b" + std::to_string(*pair.b) : "-";
  }
  return s;
}

TEST(DispatchPairs, FirstNodeName) {
  EXPECT_EQ(firstNodeName("/conv1/Conv (Conv), /relu/Relu (Relu)"), "/conv1/Conv");
  EXPECT_EQ(firstNodeName("node_2"), "node_2");
  EXPECT_EQ(firstNodeName(""), "");
}

// B fused A's expand and depthwise convolutions (one dispatch starting at the expand): the
// depthwise one is A's alone; the rest match by their first node.
TEST(DispatchPairs, MatchesByFirstNodeAcrossFusions) {
  std::vector<DispatchInfo> a = {named("stem (Conv), clip (Clip)", "Conv+Clip"),
                                 named("expand (Conv)", "Conv"), named("dw (Conv)", "Conv"),
                                 named("project (Conv)", "Conv")};
  std::vector<DispatchInfo> b = {named("stem (Conv), clip (Clip)", "Conv+Clip"),
                                 named("expand (Conv), dw (Conv)", "Conv+Conv"),
                                 named("project (Conv)", "Conv")};
  DispatchPairing p = pairDispatches(a, b);
  EXPECT_TRUE(p.error.empty());
  EXPECT_FALSE(p.byPosition);
  EXPECT_EQ(text(p), "a0b0 a1b1 a2- a3b2");
  // And the other way round: B's lone dispatch sits where B runs it.
  EXPECT_EQ(text(pairDispatches(b, a)), "a0b0 a1b1 -b2 a2b3");
}

TEST(DispatchPairs, UnmatchedAtTheEndsAndRepeatedNames) {
  std::vector<DispatchInfo> a = {named("x (Conv)"), named("y (Relu)")};
  std::vector<DispatchInfo> b = {named("pre (Transpose)"), named("y (Relu)"), named("y (Relu)"),
                                 named("post (Softmax)")};
  // B's two dispatches starting at y: the first pairs with A's, the second is B's alone.
  EXPECT_EQ(text(pairDispatches(a, b)), "a0- -b0 a1b1 -b2 -b3");
}

// A TFLite operator imported as several IR ops names the same node in each of their
// dispatches ("operator #0"): the first op of the dispatch name tells them apart, so A's fused
// Conv+Relu pairs with B's Conv, not with B's Transpose that comes first.
TEST(DispatchPairs, OneNodeSeveralDispatches) {
  EXPECT_EQ(matchKey(named("operator #0 (CONV_2D), operator #0 (CONV_2D)", "Conv+Relu")),
            "operator #0 Conv");
  std::vector<DispatchInfo> a = {named("operator #0 (CONV_2D)", "Conv+Relu")};
  std::vector<DispatchInfo> b = {named("operator #0 (CONV_2D)", "Transpose"),
                                 named("operator #0 (CONV_2D)", "Conv"),
                                 named("operator #0 (CONV_2D)", "Relu")};
  EXPECT_EQ(text(pairDispatches(a, b)), "-b0 a0b1 -b2");
}

TEST(DispatchPairs, StrippedArtifactsPairByPosition) {
  std::vector<DispatchInfo> a(3), b(3);
  DispatchPairing p = pairDispatches(a, b);
  EXPECT_TRUE(p.error.empty());
  EXPECT_TRUE(p.byPosition);
  EXPECT_EQ(text(p), "a0b0 a1b1 a2b2");
  b.resize(2);
  p = pairDispatches(a, b);
  EXPECT_TRUE(p.pairs.empty());
  EXPECT_EQ(p.error,
            "a dispatch has no node name (an artifact compiled with --strip?) and A has 3 "
            "dispatches, B 2: they cannot be matched");
}

}  // namespace
}  // namespace kiln::cli

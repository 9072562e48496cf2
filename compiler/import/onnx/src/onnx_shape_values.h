// Internal: tracks the contents of small integer tensors computed from static shapes — the
// Shape -> Gather -> Unsqueeze -> Concat chains torch exports for `x.view(x.size(0), -1)`.
// ONNX 1.12's data propagation cannot carry scalars (a scalar Gather index stops it), so
// such a Reshape keeps an unknown dim after shape inference. The translator then gives the
// op a constant operand with the tracked contents and lets the IR's rule compute the static
// result type; the shape chain itself stays in the graph for the passes to fold or drop.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "kiln/ir/graph.h"

namespace kiln::import::detail {

struct OnnxNode;

class ShapeValues {
 public:
  // The contents of `value` if it is a small integer constant or a tracked result.
  std::optional<std::vector<int64_t>> get(const ir::Value* value) const;

  // Evaluates a translated node when it is shape arithmetic over known contents (Shape,
  // Gather, Unsqueeze, Squeeze, Reshape, Identity, Concat, Cast, Slice, Transpose, Add, Sub,
  // Mul, Div, Equal, Where, ConstantOfShape; small tensors of any rank, e.g. torch's Pad
  // exports reshape their pads to [n, 2], reverse and transpose them) and records the
  // contents of its results.
  void track(const OnnxNode& node, const std::vector<ir::Value*>& results);

 private:
  std::unordered_map<const ir::Value*, std::vector<int64_t>> known_;
};

}  // namespace kiln::import::detail

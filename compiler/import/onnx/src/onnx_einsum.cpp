// Einsum imported as Transpose / Reshape / ReduceSum / MatMul, the classic way: operands are
// combined left to right; for each pair the letters split into batch (both operands, kept),
// contracted (both, summed), left-only and right-only kept ones; each operand is transposed
// to [batch, kept, contracted] (left) or [batch, contracted, kept] (right), its kept and
// contracted letters merged by a Reshape, and one batched MatMul does the work. Letters only
// one operand has and nothing later needs are summed first. "..." stands for the leading
// dims an operand has beyond its letters. Not supported: a letter repeated within one
// operand (diagonals, traces).
#include <algorithm>
#include <map>

#include "onnx_translators.h"

namespace kiln::import::detail {

namespace {

// An operand while the equation is evaluated: its value and one letter per dim.
struct Term {
  ir::Value* value;
  std::string letters;
};

class EinsumBuilder {
 public:
  EinsumBuilder(OnnxTranslation& t, const OnnxNode& node) : t_(t), node_(node) {}

  // Sums the dims whose letters are not in `keep`.
  Term sumOut(Term term, const std::string& keep) {
    std::vector<int64_t> axes;
    std::string rest;
    for (size_t i = 0; i < term.letters.size(); ++i) {
      if (keep.find(term.letters[i]) == std::string::npos)
        axes.push_back(static_cast<int64_t>(i));
      else
        rest += term.letters[i];
    }
    if (axes.empty()) return term;
    ir::AttributeMap attrs;
    attrs.set("keepdims", int64_t(0));
    ir::Value* v = buildOp(t_, node_, ir::OpKind::ReduceSum,
                           {term.value, constantI64(t_, name() + ".axes", axes)}, attrs);
    return {v, rest};
  }

  // Puts the dims in the order of `letters` (a permutation of the term's).
  Term transpose(Term term, const std::string& letters) {
    if (term.letters == letters) return term;
    std::vector<int64_t> perm;
    for (char c : letters) perm.push_back(static_cast<int64_t>(term.letters.find(c)));
    ir::AttributeMap attrs;
    attrs.set("perm", perm);
    return {buildOp(t_, node_, ir::OpKind::Transpose, {term.value}, attrs), letters};
  }

  ir::Value* reshape(ir::Value* v, const std::vector<int64_t>& shape) {
    if (v->shape() == shape) return v;
    return buildOp(t_, node_, ir::OpKind::Reshape, {v, constantI64(t_, name() + ".shape", shape)});
  }

  int64_t dimOf(const Term& term, char c) const {
    return term.value->shape()[term.letters.find(c)];
  }

  // a x b keeping the letters in `keep` (in the order batch, a-only, b-only).
  Term pair(Term a, Term b, const std::string& keep) {
    std::string batch, contracted, aOnly, bOnly;
    auto has = [](const std::string& s, char c) { return s.find(c) != std::string::npos; };
    a = sumOut(a, b.letters + keep);
    b = sumOut(b, a.letters + keep);
    for (char c : a.letters) {
      if (has(b.letters, c))
        (has(keep, c) ? batch : contracted) += c;
      else
        aOnly += c;
    }
    for (char c : b.letters)
      if (!has(a.letters, c)) bOnly += c;
    a = transpose(a, batch + aOnly + contracted);
    b = transpose(b, batch + contracted + bOnly);
    std::vector<int64_t> aShape, bShape, outShape;
    int64_t m = 1, n = 1, k = 1;
    for (char c : batch) {
      aShape.push_back(dimOf(a, c));
      bShape.push_back(dimOf(b, c));
      int64_t da = dimOf(a, c), db = dimOf(b, c);
      if (da != db && da != 1 && db != 1)
        t_.fail(node_, std::string("letter '") + c + "' has sizes " + std::to_string(da) + " and " +
                           std::to_string(db));
      outShape.push_back(std::max(da, db));
    }
    for (char c : aOnly) m *= dimOf(a, c), outShape.push_back(dimOf(a, c));
    for (char c : bOnly) n *= dimOf(b, c), outShape.push_back(dimOf(b, c));
    for (char c : contracted) {
      if (dimOf(a, c) != dimOf(b, c))
        t_.fail(node_, std::string("contracted letter '") + c + "' has sizes " +
                           std::to_string(dimOf(a, c)) + " and " + std::to_string(dimOf(b, c)));
      k *= dimOf(a, c);
    }
    aShape.push_back(m), aShape.push_back(k);
    bShape.push_back(k), bShape.push_back(n);
    ir::Value* product = buildOp(t_, node_, ir::OpKind::MatMul,
                                 {reshape(a.value, aShape), reshape(b.value, bShape)});
    return {reshape(product, outShape), batch + aOnly + bOnly};
  }

  std::string name() const { return node_.outputNames.at(0) + ".einsum"; }

 private:
  OnnxTranslation& t_;
  const OnnxNode& node_;
};

}  // namespace

std::vector<ir::Value*> translateEinsum(OnnxTranslation& t, const OnnxNode& node,
                                        std::optional<ir::OpKind>) {
  std::string equation;
  for (char c : node.attrs.getString("equation", ""))
    if (c != ' ') equation += c;
  size_t arrow = equation.find("->");
  std::string lhs = equation.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string::npos ? comma : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != node.inputs.size())
    t.fail(node, "equation '" + equation + "' has " + std::to_string(terms.size()) +
                     " operands, the node " + std::to_string(node.inputs.size()));
  // "..." becomes upper-case letters for the leading dims it covers (the same per position
  // from the right, as numpy broadcasts them).
  size_t ellipsisRank = 0;
  std::vector<Term> operands;
  for (size_t i = 0; i < terms.size(); ++i) {
    std::string letters = terms[i];
    size_t dots = letters.find("...");
    int64_t rank = node.inputs[i]->type().rank();
    if (dots != std::string::npos) {
      size_t covered = size_t(rank) - (letters.size() - 3);
      ellipsisRank = std::max(ellipsisRank, covered);
      std::string fill;
      for (size_t j = 0; j < covered; ++j) fill += char('Z' - (covered - 1 - j));
      letters = letters.substr(0, dots) + fill + letters.substr(dots + 3);
    }
    if (letters.size() != size_t(rank))
      t.fail(node, "operand " + std::to_string(i) + " has rank " + std::to_string(rank) +
                       " but its term '" + terms[i] + "' has " + std::to_string(letters.size()) +
                       " letters");
    for (size_t j = 0; j < letters.size(); ++j)
      if (letters.find(letters[j], j + 1) != std::string::npos)
        t.fail(node, std::string("letter '") + letters[j] + "' repeats within operand " +
                         std::to_string(i) + " (a diagonal), which is not supported");
    operands.push_back({node.inputs[i], letters});
  }
  std::string ellipsis;
  for (size_t j = 0; j < ellipsisRank; ++j) ellipsis += char('Z' - (ellipsisRank - 1 - j));
  std::string output;
  if (arrow != std::string::npos) {
    output = equation.substr(arrow + 2);
    size_t dots = output.find("...");
    if (dots != std::string::npos)
      output = output.substr(0, dots) + ellipsis + output.substr(dots + 3);
  } else {  // implicit: the letters that appear once, sorted, after the ellipsis dims
    std::map<char, int> counts;
    for (const Term& term : operands)
      for (char c : term.letters)
        if (ellipsis.find(c) == std::string::npos) ++counts[c];
    output = ellipsis;
    for (const auto& [c, n] : counts)
      if (n == 1) output += c;
  }
  EinsumBuilder builder(t, node);
  Term result = operands[0];
  for (size_t i = 1; i < operands.size(); ++i) {
    std::string later = output;
    for (size_t j = i + 1; j < operands.size(); ++j) later += operands[j].letters;
    result = builder.pair(result, operands[i], later);
  }
  result = builder.sumOut(result, output);
  for (char c : output)
    if (result.letters.find(c) == std::string::npos)
      t.fail(node, std::string("output letter '") + c + "' appears in no operand");
  result = builder.transpose(result, output);
  ir::Value* y = buildOp(t, node, ir::OpKind::Identity, {result.value}, {}, node.outputNames.at(0));
  checkDecomposedResult(t, node, y);
  return {y};
}

}  // namespace kiln::import::detail

// Internal: the translators the op table (onnx_op_table.cpp) refers to. translateDirect covers
// every ONNX op whose opset-17 form equals an IR op (same operands, attributes and results);
// the others adapt a node whose ONNX form differs (Constant, Cast's dtype numbers,
// ConstantOfShape's tensor attribute, old-opset PRelu slopes...).
#pragma once

#include "onnx_translation.h"

namespace kiln::import::detail {

std::vector<ir::Value*> translateDirect(OnnxTranslation&, const OnnxNode&,
                                        std::optional<ir::OpKind>);
std::vector<ir::Value*> translateConstant(OnnxTranslation&, const OnnxNode&,
                                          std::optional<ir::OpKind>);
std::vector<ir::Value*> translateCast(OnnxTranslation&, const OnnxNode&,
                                      std::optional<ir::OpKind>);
std::vector<ir::Value*> translateConstantOfShape(OnnxTranslation&, const OnnxNode&,
                                                 std::optional<ir::OpKind>);
std::vector<ir::Value*> translateClip(OnnxTranslation&, const OnnxNode&,
                                      std::optional<ir::OpKind>);
std::vector<ir::Value*> translateBatchNorm(OnnxTranslation&, const OnnxNode&,
                                           std::optional<ir::OpKind>);
std::vector<ir::Value*> translatePRelu(OnnxTranslation&, const OnnxNode&,
                                       std::optional<ir::OpKind>);

std::vector<ir::Value*> translateDepthToSpace(OnnxTranslation&, const OnnxNode&,
                                              std::optional<ir::OpKind>);
std::vector<ir::Value*> translateSpaceToDepth(OnnxTranslation&, const OnnxNode&,
                                              std::optional<ir::OpKind>);
std::vector<ir::Value*> translateTopK(OnnxTranslation&, const OnnxNode&,
                                      std::optional<ir::OpKind>);
std::vector<ir::Value*> translateTrilu(OnnxTranslation&, const OnnxNode&,
                                       std::optional<ir::OpKind>);
std::vector<ir::Value*> translateOneHot(OnnxTranslation&, const OnnxNode&,
                                        std::optional<ir::OpKind>);
std::vector<ir::Value*> translateEinsum(OnnxTranslation&, const OnnxNode&,  // onnx_einsum.cpp
                                       std::optional<ir::OpKind>);
std::vector<ir::Value*> translateResize(OnnxTranslation&, const OnnxNode&,  // onnx_resize.cpp
                                       std::optional<ir::OpKind>);

// Decomposition helpers (onnx_decompositions.cpp): one IR op typed by its rule, its result
// named `name` ("" = fresh; rule errors name the node); an i64 constant vector; the final
// value checked against ONNX's inferred output type.
ir::Value* buildOp(OnnxTranslation& t, const OnnxNode& node, ir::OpKind kind,
                   std::vector<ir::Value*> operands, ir::AttributeMap attrs = {},
                   const std::string& name = "");
ir::Value* constantI64(OnnxTranslation& t, const std::string& hint,
                       const std::vector<int64_t>& values);
void checkDecomposedResult(OnnxTranslation& t, const OnnxNode& node, const ir::Value* result);

// Builds one IR op of `kind` from the node's outputs after checking operand and result
// counts against the IR op and its type rule against ONNX's inferred types.
std::vector<ir::Value*> emitOp(OnnxTranslation& t, const OnnxNode& node, ir::OpKind kind,
                               std::vector<ir::Value*> operands, ir::AttributeMap attrs);

}  // namespace kiln::import::detail

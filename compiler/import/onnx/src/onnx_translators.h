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

// Builds one IR op of `kind` from the node's outputs after checking operand and result
// counts against the IR op and its type rule against ONNX's inferred types.
std::vector<ir::Value*> emitOp(OnnxTranslation& t, const OnnxNode& node, ir::OpKind kind,
                               std::vector<ir::Value*> operands, ir::AttributeMap attrs);

}  // namespace kiln::import::detail

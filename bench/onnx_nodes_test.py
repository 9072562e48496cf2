#!/usr/bin/env python3
"""Test of bench/onnx_nodes.py on the shipped digits model (examples/digits/model.onnx): the
node list and the attributes bench/performance.py relies on, checked against the model's
definition in scripts/train_digits.py (Conv 3x3 pad 1, MaxPool 2x2, Gemm with transB)."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import onnx_nodes  # noqa: E402


def main():
    model = os.path.join(os.path.dirname(HERE), "examples", "digits", "model.onnx")
    nodes = onnx_nodes.nodes(model)
    types = [n["op_type"] for n in nodes]
    assert types == ["Conv", "Relu", "Conv", "Relu", "MaxPool", "Flatten", "Gemm", "Relu",
                     "Gemm"], types
    conv = nodes[0]
    assert conv["name"] == "/features/features.0/Conv", conv
    assert conv["attrs"]["kernel_shape"] == [3, 3], conv
    assert conv["attrs"]["pads"] == [1, 1, 1, 1], conv
    assert conv["attrs"]["group"] == 1, conv
    assert nodes[4]["attrs"]["kernel_shape"] == [2, 2], nodes[4]
    assert nodes[6]["attrs"]["transB"] == 1, nodes[6]
    print(f"onnx_nodes: {len(nodes)} nodes of the digits model as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())

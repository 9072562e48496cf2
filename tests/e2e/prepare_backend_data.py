#!/usr/bin/python3
"""Turns ONNX's backend test data into what `kiln run` reads, in the build tree.

For every case SRC/<suite>/<case>/ (model.onnx + test_data_set_0/{input,output}_N.pb, read in
place) writes DST/<suite>/<case>/case.json with the model's path, the operators it uses, the
names of its graph inputs (in input_N order), and the inputs and expected outputs converted from TensorProto .pb to .npy (input_N.npy,
output_N.npy next to case.json). Values that are not tensors (sequences, maps) or that NumPy
cannot hold as numbers (strings) are not converted; case.json lists them under "problems".

    /usr/bin/python3 tests/e2e/prepare_backend_data.py SRC_DIR DST_DIR
"""
import glob
import json
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def convertValue(pb_path, npy_path):
    """Returns None on success, else a short description of why the value was skipped."""
    with open(pb_path, "rb") as f:
        data = f.read()
    tensor = onnx.TensorProto()
    try:
        tensor.ParseFromString(data)
        if tensor.data_type == onnx.TensorProto.UNDEFINED:
            return "not a tensor (sequence, map or optional)"
        if tensor.data_type == onnx.TensorProto.STRING:
            return "string tensor"
        array = numpy_helper.to_array(tensor)
    except Exception as error:  # a SequenceProto/MapProto does not parse as a tensor
        return f"not a tensor ({type(error).__name__})"
    np.save(npy_path, np.ascontiguousarray(array))
    return None


def operatorsOf(model):
    names = set()

    def visit(graph):
        for node in graph.node:
            names.add(node.op_type)
            for attribute in node.attribute:
                if attribute.g.node:
                    visit(attribute.g)
                for subgraph in attribute.graphs:
                    visit(subgraph)

    visit(model.graph)
    return sorted(names)


def inputNames(model):
    """The graph inputs that are not initializers: what test_data_set_0/input_N.pb feed."""
    initializers = {tensor.name for tensor in model.graph.initializer}
    return [i.name for i in model.graph.input if i.name not in initializers]


def prepareCase(case_dir, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    model_path = os.path.join(case_dir, "model.onnx")
    model = onnx.load(model_path, load_external_data=False)
    data_dir = os.path.join(case_dir, "test_data_set_0")
    case = {"model": os.path.abspath(model_path), "ops": operatorsOf(model),
            "opset": max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")),
                         default=0),
            "inputs": [], "outputs": [], "problems": [],
            "input_names": inputNames(model)}
    for role in ("input", "output"):
        count = len(glob.glob(os.path.join(data_dir, f"{role}_*.pb")))
        for i in range(count):
            npy_path = os.path.join(out_dir, f"{role}_{i}.npy")
            problem = convertValue(os.path.join(data_dir, f"{role}_{i}.pb"), npy_path)
            if problem:
                case["problems"].append(f"{role}_{i}.pb: {problem}")
            else:
                case[role + "s"].append(npy_path)
    with open(os.path.join(out_dir, "case.json"), "w") as f:
        json.dump(case, f, indent=1)
        f.write("\n")


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: prepare_backend_data.py SRC_DIR DST_DIR")
    src, dst = sys.argv[1], sys.argv[2]
    cases = sorted(glob.glob(os.path.join(src, "*", "test_*", "model.onnx")))
    if not cases:
        sys.exit(f"prepare_backend_data: no cases (*/test_*/model.onnx) under {src}")
    for model_path in cases:
        case_dir = os.path.dirname(model_path)
        suite = os.path.basename(os.path.dirname(case_dir))
        prepareCase(case_dir, os.path.join(dst, suite, os.path.basename(case_dir)))
    print(f"prepared {len(cases)} ONNX backend cases in {dst}")


if __name__ == "__main__":
    main()

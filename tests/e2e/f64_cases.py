#!/usr/bin/python3
"""Double-precision (f64) models built with onnx.helper, with float64 numpy references, for
`kiln compile` + `kiln run` (run_case.py --case): a chain of elementwise ops (one dispatch
each: the fusion pass fuses f32 ops only), casts between float and double, data movement and
reductions in double, sqrt/floor/ceil, and one op without an f64 kernel that must be refused
naming it.

    /usr/bin/python3 tests/e2e/f64_cases.py OUT_DIR [NAME...]
    /usr/bin/python3 tests/e2e/f64_cases.py --list
"""
import argparse
import os
import sys

from export_op_cases import writeCase


def cases():
    """name -> (builder(helper, TensorProto, np) -> (nodes, inputs, initializers, outputs), refs)."""
    import numpy as np
    rng = np.random.default_rng(64)
    x = rng.standard_normal((2, 3, 4))
    b = rng.standard_normal(4) * 1e-3 + 1.0 / 3.0

    def chain(h, T):
        nodes = [h.make_node("Mul", ["x", "b"], ["m"]),
                 h.make_node("Sub", ["m", "c"], ["s"]),
                 h.make_node("Abs", ["s"], ["a"]),
                 h.make_node("Div", ["a", "d"], ["q"]),
                 h.make_node("Less", ["x", "half"], ["lt"]),
                 h.make_node("Max", ["x", "c"], ["mx"]),
                 h.make_node("Neg", ["mx"], ["n"]),
                 h.make_node("Where", ["lt", "q", "n"], ["y"])]
        inits = [h.make_tensor("c", T.DOUBLE, [], [0.1]),
                 h.make_tensor("d", T.DOUBLE, [], [3.0]),
                 h.make_tensor("half", T.DOUBLE, [], [0.5])]
        return nodes, {"x": x, "b": b}, inits, ["y"]

    def chain_ref():
        return [np.where(x < 0.5, np.abs(x * b - 0.1) / 3.0, -np.maximum(x, 0.1))]

    xf = x.astype(np.float32)

    def casts(h, T):
        nodes = [h.make_node("Cast", ["xf"], ["xd"], to=T.DOUBLE),
                 h.make_node("Mul", ["xd", "third"], ["t"]),
                 h.make_node("Add", ["t", "tiny"], ["yd"]),
                 h.make_node("Cast", ["yd"], ["yf"], to=T.FLOAT),
                 h.make_node("Cast", ["yd"], ["yi"], to=T.INT64)]
        inits = [h.make_tensor("third", T.DOUBLE, [], [1.0 / 3.0]),
                 h.make_tensor("tiny", T.DOUBLE, [], [1e-300])]
        return nodes, {"xf": xf}, inits, ["yd", "yf", "yi"]

    def casts_ref():
        yd = xf.astype(np.float64) * (1.0 / 3.0) + 1e-300
        return [yd, yd.astype(np.float32), np.trunc(yd).astype(np.int64)]

    def movement(h, T):
        nodes = [h.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 1]),
                 h.make_node("Concat", ["t", "t"], ["c"], axis=2),
                 h.make_node("Slice", ["c", "starts", "ends", "axes", "steps"], ["s"]),
                 h.make_node("Pad", ["s", "pads", "pv"], ["p"]),
                 h.make_node("ReduceSum", ["p", "raxes"], ["r"], keepdims=0),
                 h.make_node("ReduceMax", ["x"], ["mx"], axes=[1], keepdims=1),
                 h.make_node("CumSum", ["x", "cax"], ["cs"]),
                 h.make_node("ArgMax", ["x"], ["am"], axis=2, keepdims=0)]
        inits = [h.make_tensor("starts", T.INT64, [1], [5]),
                 h.make_tensor("ends", T.INT64, [1], [0]),
                 h.make_tensor("axes", T.INT64, [1], [2]),
                 h.make_tensor("steps", T.INT64, [1], [-2]),
                 h.make_tensor("pads", T.INT64, [6], [0, 1, 0, 0, 0, 2]),
                 h.make_tensor("pv", T.DOUBLE, [], [0.25]),
                 h.make_tensor("raxes", T.INT64, [1], [1]),
                 h.make_tensor("cax", T.INT64, [], [2])]
        return nodes, {"x": x}, inits, ["r", "mx", "cs", "am"]

    def movement_ref():
        c = np.concatenate([x.transpose(0, 2, 1)] * 2, axis=2)
        s = c[:, :, 5:0:-2]
        p = np.pad(s, [(0, 0), (1, 0), (0, 2)], constant_values=0.25)
        return [p.sum(axis=1), x.max(axis=1, keepdims=True), np.cumsum(x, axis=2),
                np.argmax(x, axis=2)]

    r = np.concatenate([x.ravel() * 1e3, [-0.0, 2.0**52 + 1, -(2.0**52) + 0.5, 1e300]])

    def rounding(h, T):
        nodes = [h.make_node("Abs", ["r"], ["a"]),
                 h.make_node("Sqrt", ["a"], ["s"]),
                 h.make_node("Floor", ["r"], ["f"]),
                 h.make_node("Ceil", ["r"], ["c"]),
                 h.make_node("Pow", ["a", "half"], ["p"])]
        inits = [h.make_tensor("half", T.DOUBLE, [], [0.5])]
        return nodes, {"r": r}, inits, ["s", "f", "c", "p"]

    def rounding_ref():
        return [np.sqrt(np.abs(r)), np.floor(r), np.ceil(r), np.sqrt(np.abs(r))]

    def refused(h, T):
        return [h.make_node("Exp", ["x"], ["y"])], {"x": x}, [], ["y"]

    return {"f64_elementwise_chain": (chain, chain_ref),
            "f64_casts": (casts, casts_ref),
            "f64_data_movement_and_reductions": (movement, movement_ref),
            "f64_sqrt_floor_ceil": (rounding, rounding_ref),
            "f64_exp_refused": (refused, lambda: [np.exp(x)])}


NAMES = ["f64_elementwise_chain", "f64_casts", "f64_data_movement_and_reductions",
         "f64_sqrt_floor_ceil", "f64_exp_refused"]


def build(name, spec, out_dir):
    import numpy as np
    import onnx
    from onnx import TensorProto, helper
    make, reference = spec
    nodes, inputs, inits, output_names = make(helper, TensorProto)
    outputs = reference()
    types = {np.dtype(np.float64): TensorProto.DOUBLE, np.dtype(np.float32): TensorProto.FLOAT,
             np.dtype(np.int64): TensorProto.INT64}
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, types[v.dtype], v.shape) for n, v in inputs.items()],
        [helper.make_tensor_value_info(n, types[np.asarray(v).dtype], np.asarray(v).shape)
         for n, v in zip(output_names, outputs)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    folder = os.path.join(out_dir, name)
    os.makedirs(folder, exist_ok=True)
    onnx.save(model, os.path.join(folder, "model.onnx"))
    for i, v in enumerate(inputs.values()):
        np.save(os.path.join(folder, f"input_{i}.npy"), v)
    for i, v in enumerate(outputs):
        np.save(os.path.join(folder, f"output_{i}.npy"), np.asarray(v))
    writeCase(folder, len(inputs), len(outputs))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", nargs="?")
    parser.add_argument("names", nargs="*")
    parser.add_argument("--list", action="store_true", help="print the case names and exit")
    args = parser.parse_args()
    if args.list:
        print("\n".join(NAMES))
        return
    if not args.out_dir:
        parser.error("OUT_DIR is required")
    table = cases()
    assert sorted(table) == sorted(NAMES), "NAMES and cases() differ"
    for name in args.names or NAMES:
        build(name, table[name], args.out_dir)
        print(f"{name}: built")


if __name__ == "__main__":
    sys.exit(main())

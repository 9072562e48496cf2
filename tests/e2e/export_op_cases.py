#!/usr/bin/python3
"""Exports small single-operator models with Debian's PyTorch for the e2e.ops tests.

Each case is a tiny torch module (random weights and input from a fixed seed) exported at a
given opset, so that kiln's operators are checked against PyTorch's own results: transposed
convolutions (1-D/2-D/3-D, groups, strides, dilations, output_padding), InstanceNorm,
LayerNormalization, LRN, Resize/Upsample in every mode torch exports, DepthToSpace /
SpaceToDepth, TopK (both outputs), ArgMax/ArgMin, the reductions, HardSwish/HardSigmoid,
Shrink and reflect/edge Pad. Ops torch does not export as one node (LRN, SpaceToDepth, Shrink,
ReduceL1/L2/..., variadic Sum/Mean/Max/Min, Resize modes torch never writes) are built with
onnx.helper, their references computed with numpy from the specification's formulas. For each
case NAME the script writes OUT_DIR/NAME/model.onnx, input_K.npy for each input and
output_K.npy for each output.

    /usr/bin/python3 tests/e2e/export_op_cases.py OUT_DIR [NAME ...]
    /usr/bin/python3 tests/e2e/export_op_cases.py --list
"""
import argparse
import json
import os
import sys


def cases():
    """name -> (module factory, input shape, opset). Imports torch lazily (--list is instant)."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Fn(nn.Module):
        def __init__(self, fn):
            super().__init__()
            self.fn = fn

        def forward(self, x):
            return self.fn(x)

    def affine_instance_norm():
        m = nn.InstanceNorm2d(3, affine=True)
        with torch.no_grad():
            m.weight.uniform_(0.5, 1.5)
            m.bias.uniform_(-0.5, 0.5)
        return m

    def affine_layer_norm():
        m = nn.LayerNorm([6, 8])
        with torch.no_grad():
            m.weight.uniform_(0.5, 1.5)
            m.bias.uniform_(-0.5, 0.5)
        return m

    def interp(**kw):
        return lambda: Fn(lambda x: F.interpolate(x, **kw))

    return {
        "conv_transpose2d": (lambda: nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1,
                                                        output_padding=1), (1, 4, 5, 6), 13),
        "conv_transpose2d_groups_dilation": (
            lambda: nn.ConvTranspose2d(4, 6, 3, stride=(2, 3), padding=(2, 1), output_padding=(1, 0),
                                       groups=2, dilation=2), (2, 4, 5, 4), 13),
        "conv_transpose1d": (lambda: nn.ConvTranspose1d(3, 4, 5, stride=3, padding=2), (1, 3, 7), 13),
        # Kernels that are multiples of the stride become a stride-1 Conv over the stride
        # phases plus a depth-to-space (compiler/passes/conv_transpose_as_conv.cpp): the
        # decoders' 4x4 stride 2 pad 1 and 2x2 stride 2, a 4x4 stride 2 without pads (phases
        # with windows at different offsets), strides (2, 1), and a stride-1 one.
        "conv_transpose2d_k4s2p1": (lambda: nn.ConvTranspose2d(16, 8, 4, stride=2, padding=1),
                                    (1, 16, 7, 9), 13),
        "conv_transpose2d_k2s2": (lambda: nn.ConvTranspose2d(6, 5, 2, stride=2, bias=False),
                                  (2, 6, 5, 4), 13),
        "conv_transpose2d_k4s2p0": (lambda: nn.ConvTranspose2d(3, 4, 4, stride=2, padding=0),
                                    (1, 3, 5, 6), 13),
        "conv_transpose2d_strides21": (lambda: nn.ConvTranspose2d(4, 4, (4, 3), stride=(2, 1),
                                                                  padding=(1, 1)), (1, 4, 6, 5), 13),
        "conv_transpose2d_stride1": (lambda: nn.ConvTranspose2d(8, 8, 3, stride=1, padding=1),
                                     (1, 8, 6, 6), 13),
        "conv_transpose3d": (lambda: nn.ConvTranspose3d(2, 4, 3, stride=(1, 2, 2), padding=1,
                                                        bias=False), (1, 2, 3, 4, 5), 13),
        "instance_norm": (affine_instance_norm, (2, 3, 6, 7), 13),
        "layer_norm_opset17": (affine_layer_norm, (2, 4, 6, 8), 17),
        "resize_nearest_opset13": (interp(scale_factor=2, mode="nearest"), (1, 2, 3, 4), 13),
        "resize_nearest_sizes": (interp(size=(5, 7), mode="nearest"), (1, 2, 3, 4), 13),
        "upsample_nearest_opset9": (interp(scale_factor=2, mode="nearest"), (1, 2, 3, 4), 9),
        "resize_bilinear": (interp(scale_factor=2, mode="bilinear", align_corners=False),
                            (1, 2, 3, 4), 13),
        "resize_bilinear_align_corners": (interp(size=(5, 9), mode="bilinear", align_corners=True),
                                          (1, 2, 3, 4), 13),
        "resize_bilinear_down": (interp(size=(3, 2), mode="bilinear", align_corners=False),
                                 (1, 2, 7, 5), 11),
        "resize_bicubic": (interp(scale_factor=2, mode="bicubic", align_corners=False),
                           (1, 1, 4, 5), 13),
        "resize_linear_1d": (interp(scale_factor=3, mode="linear", align_corners=False),
                             (1, 2, 5), 13),
        "pixel_shuffle": (lambda: nn.PixelShuffle(2), (1, 8, 3, 4), 13),
        "pixel_unshuffle": (lambda: nn.PixelUnshuffle(2), (1, 2, 4, 6), 13),
        "topk": (lambda: Fn(lambda x: torch.topk(x, 3, dim=1)), (2, 7, 3), 13),
        "topk_smallest": (lambda: Fn(lambda x: torch.topk(x, 2, dim=-1, largest=False)),
                          (3, 6), 13),
        "argmax_argmin": (lambda: Fn(lambda x: (torch.argmax(x, dim=1, keepdim=True),
                                                torch.argmin(x, dim=2))), (2, 5, 4), 13),
        "logsumexp": (lambda: Fn(lambda x: torch.logsumexp(x, dim=1)), (2, 5, 4), 13),
        "reductions": (lambda: Fn(lambda x: (x.prod(dim=1), x.norm(dim=2), x.amax(dim=(1, 2)),
                                             x.amin(dim=0), x.sum(dim=-1), x.mean(dim=1),
                                             x.abs().sum(dim=1), (x * x).sum(dim=2))),
                       (2, 4, 3), 13),
        "hardswish_hardsigmoid": (lambda: Fn(lambda x: (F.hardswish(x), F.hardsigmoid(x))),
                                  (2, 3, 8), 14),
        "shrink": (lambda: Fn(lambda x: (F.hardshrink(x, 0.5), F.softshrink(x, 0.7))),
                   (3, 10), 13),
        "einsum_attention": (lambda: Fn(lambda x: (torch.einsum("bhid,bhjd->bhij", x, x),
                                                   torch.einsum("bhij,bhjd->bihd", x, x))),
                             (2, 3, 4, 4), 13),
        "einsum_misc": (lambda: Fn(lambda x: (torch.einsum("ij,jk", x[0], x[1]),
                                              torch.einsum("...ij->...ji", x),
                                              torch.einsum("bij->j", x),
                                              torch.einsum("bi,bj,b->bij", x[0], x[1], x[2, :, 0]))),
                        (3, 5, 5), 13),
        "gather_elements": (lambda: Fn(lambda x: (
            torch.gather(x, 1, torch.tensor([[0, 2, 1, 0], [3, 3, 0, 1], [1, 1, 2, 2]])),
            torch.gather(x, 0, torch.tensor([[2, 0, 1, 1, 0]])))), (3, 5), 13),
        "cumsum": (lambda: Fn(lambda x: (torch.cumsum(x, 1),
                                          torch.cumsum((x > 0).long(), dim=1) * (x > 0).long(),
                                          torch.cumsum(x, dim=0))), (3, 6), 13),
        "one_hot": (lambda: Fn(lambda x: F.one_hot((x > 0).long() + (x > 1).long(), 4)),
                    (2, 5), 13),
        "scatter_nd": (lambda: Fn(lambda x: torch.index_put(x, (torch.tensor([2, 0]),),
                                                            x[1:3] * 2)), (4, 3), 13),
        "pad_reflect_edge": (lambda: Fn(lambda x: (F.pad(x, (1, 2, 2, 1), mode="reflect"),
                                                   F.pad(x, (2, 0, 1, 3), mode="replicate"))),
                             (1, 2, 4, 5), 13),
    }


NAMES = ["conv_transpose2d", "conv_transpose2d_groups_dilation", "conv_transpose1d",
         "conv_transpose2d_k4s2p1", "conv_transpose2d_k2s2", "conv_transpose2d_k4s2p0",
         "conv_transpose2d_strides21", "conv_transpose2d_stride1",
         "conv_transpose3d", "instance_norm", "layer_norm_opset17",
         "resize_nearest_opset13", "resize_nearest_sizes", "upsample_nearest_opset9",
         "resize_bilinear", "resize_bilinear_align_corners", "resize_bilinear_down",
         "resize_bicubic", "resize_linear_1d", "pixel_shuffle", "pixel_unshuffle", "topk",
         "topk_smallest", "argmax_argmin", "logsumexp", "reductions", "hardswish_hardsigmoid",
         "shrink", "pad_reflect_edge", "einsum_attention", "einsum_misc", "gather_elements", "cumsum", "one_hot", "scatter_nd"]


def onnx_cases():
    """Cases torch does not export as one ONNX op, built with onnx.helper; their references are
    computed here with numpy from the ONNX specification's formulas.
    name -> (op type, attributes, input shapes, numpy reference(x...) -> outputs, opset)."""
    import numpy as np

    def lrn(x, size=3, alpha=1e-2, beta=0.75, bias=2.0):
        c = x.shape[1]
        sq = np.zeros_like(x)
        for i in range(c):
            lo, hi = max(0, i - (size - 1) // 2), min(c, i + size // 2 + 1)
            sq[:, i] = (x[:, lo:hi] ** 2).sum(axis=1)
        return [x / (bias + alpha / size * sq) ** beta]

    def space_to_depth(x, b=2):
        n, c, h, w = x.shape
        t = x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
        return [t.reshape(n, c * b * b, h // b, w // b)]

    def depth_to_space_dcr(x, b=2):
        n, c, h, w = x.shape
        t = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
        return [t.reshape(n, c // (b * b), h * b, w * b)]

    def shrink(x, lambd=1.0, bias=0.5):
        return [np.where(x < -lambd, x + bias, np.where(x > lambd, x - bias, 0)).astype(x.dtype)]

    def nearest_half_pixel_ceil(x):
        # out 7 from in 4 along the last axis: scale 1.75, half_pixel, round_prefer_ceil.
        src = (np.arange(7) + 0.5) / 1.75 - 0.5
        idx = np.clip(np.where(src - np.floor(src) >= 0.5, np.floor(src) + 1, np.floor(src)), 0, 3)
        return [x[..., idx.astype(np.int64)]]

    def nearest_align_corners(x):
        src = np.arange(6) * (3 - 1) / (6 - 1)   # in 3 -> out 6 along axis 2
        idx = np.clip(np.where(src - np.floor(src) > 0.5, np.floor(src) + 1, np.floor(src)), 0, 2)
        return [x[:, :, idx.astype(np.int64)]]

    def upsample_nearest(x, scales=(1, 1, 2, 3)):
        for axis, scale in enumerate(scales):
            n = int(np.floor(x.shape[axis] * scale))
            idx = np.minimum(np.floor(np.arange(n) / scale).astype(np.int64), x.shape[axis] - 1)
            x = np.take(x, idx, axis=axis)
        return [x]

    def upsample_linear(x, scales=(1, 1, 2, 2.5)):
        # Upsample's linear mode: asymmetric source coordinates, edges clamped.
        for axis, scale in enumerate(scales):
            if scale == 1:
                continue
            n = int(np.floor(x.shape[axis] * scale))
            src = np.arange(n) / scale
            lo = np.floor(src).astype(np.int64)
            w = (src - lo).reshape([-1] + [1] * (x.ndim - axis - 1))
            a = np.take(x, np.minimum(lo, x.shape[axis] - 1), axis=axis)
            b = np.take(x, np.minimum(lo + 1, x.shape[axis] - 1), axis=axis)
            x = a * (1 - w) + b * w
        return [x]

    return {
        "onnx_trilu_lower": ("Trilu", dict(upper=0), [(2, 4, 5)], lambda x: [np.tril(x)], 14),
        "onnx_trilu_upper_k": ("Trilu", dict(k=1), [(5, 4)], lambda x: [np.triu(x, 1)], 14),
        "onnx_celu": ("Celu", dict(alpha=0.7), [(3, 8)],
                      lambda x: [np.maximum(0, x) + np.minimum(0, 0.7 * (np.exp(x / 0.7) - 1))],
                      13),
        "onnx_thresholded_relu": ("ThresholdedRelu", dict(alpha=0.4), [(3, 8)],
                                  lambda x: [np.where(x > 0.4, x, 0)], 13),
        "onnx_cumsum_exclusive_reverse": ("CumSum", dict(exclusive=1, reverse=1, axis=1),
                                          [(2, 5, 3)],
                                          lambda x: [np.flip(np.cumsum(np.flip(x, 1), 1), 1) - x],
                                          14),
        "onnx_upsample_nearest_opset7": ("Upsample", dict(mode="nearest", scales=[1.0, 1.0, 2.0, 3.0]),
                                         [(1, 2, 3, 4)], upsample_nearest, 7),
        "onnx_upsample_linear_opset9": ("Upsample", dict(mode="linear"), [(1, 2, 3, 4)],
                                        upsample_linear, 9),
        "onnx_lrn": ("LRN", dict(size=3, alpha=1e-2, beta=0.75, bias=2.0), [(1, 6, 4, 5)], lrn, 13),
        "onnx_space_to_depth": ("SpaceToDepth", dict(blocksize=2), [(1, 3, 4, 6)],
                                space_to_depth, 13),
        "onnx_depth_to_space_dcr": ("DepthToSpace", dict(blocksize=2, mode="DCR"),
                                    [(2, 8, 3, 2)], depth_to_space_dcr, 13),
        "onnx_shrink": ("Shrink", dict(lambd=1.0, bias=0.5), [(4, 6)], shrink, 13),
        "onnx_reduce_l1": ("ReduceL1", dict(axes=[1], keepdims=1), [(2, 5, 3)],
                           lambda x: [np.abs(x).sum(axis=1, keepdims=True)], 13),
        "onnx_reduce_l2": ("ReduceL2", dict(axes=[0, 2], keepdims=0), [(2, 5, 3)],
                           lambda x: [np.sqrt((x * x).sum(axis=(0, 2)))], 13),
        "onnx_reduce_sum_square": ("ReduceSumSquare", dict(axes=[2], keepdims=1), [(2, 5, 3)],
                                   lambda x: [(x * x).sum(axis=2, keepdims=True)], 13),
        "onnx_reduce_log_sum": ("ReduceLogSum", dict(axes=[1], keepdims=0), [(2, 5, 3)],
                                lambda x: [np.log(np.abs(x).sum(axis=1) + 0)], 13),
        "onnx_reduce_log_sum_exp": ("ReduceLogSumExp", dict(axes=[0], keepdims=1), [(3, 4)],
                                    lambda x: [np.log(np.exp(x).sum(axis=0, keepdims=True))], 13),
        "onnx_sum_variadic": ("Sum", {}, [(2, 3), (3,), (1, 3)],
                              lambda a, b, c: [a + b + c], 13),
        "onnx_mean_variadic": ("Mean", {}, [(2, 3), (2, 1), (3,)],
                               lambda a, b, c: [(a + b + c) / 3], 13),
        "onnx_max_variadic": ("Max", {}, [(2, 3), (3,), (2, 3)],
                              lambda a, b, c: [np.maximum(np.maximum(a, b), c)], 13),
        "onnx_min_variadic": ("Min", {}, [(2, 3), (2, 1), (2, 3)],
                              lambda a, b, c: [np.minimum(np.minimum(a, b), c)], 13),
        "onnx_resize_nearest_half_pixel_ceil": (
            "Resize", dict(mode="nearest", coordinate_transformation_mode="half_pixel",
                           nearest_mode="round_prefer_ceil"), [(1, 2, 3, 4)],
            nearest_half_pixel_ceil, 13),
        "onnx_resize_nearest_align_corners": (
            "Resize", dict(mode="nearest", coordinate_transformation_mode="align_corners"),
            [(1, 2, 3, 4)], nearest_align_corners, 13),
    }


ONNX_NAMES = ["onnx_cumsum_exclusive_reverse", "onnx_trilu_lower", "onnx_trilu_upper_k", "onnx_celu", "onnx_thresholded_relu",
              "onnx_upsample_nearest_opset7", "onnx_upsample_linear_opset9", "onnx_lrn", "onnx_space_to_depth", "onnx_depth_to_space_dcr", "onnx_shrink",
              "onnx_reduce_l1", "onnx_reduce_l2", "onnx_reduce_sum_square", "onnx_reduce_log_sum",
              "onnx_reduce_log_sum_exp", "onnx_sum_variadic", "onnx_mean_variadic",
              "onnx_max_variadic", "onnx_min_variadic", "onnx_resize_nearest_half_pixel_ceil",
              "onnx_resize_nearest_align_corners"]


def writeCase(folder, inputs, outputs):
    """case.json for tests/e2e/run_case.py --case: the model, its operators and its tensors."""
    import onnx
    model_path = os.path.join(folder, "model.onnx")
    model = onnx.load(model_path)
    case = {"model": os.path.abspath(model_path),
            "ops": sorted({n.op_type for n in model.graph.node}),
            "opset": max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx")),
            "inputs": [os.path.abspath(os.path.join(folder, f"input_{i}.npy"))
                       for i in range(inputs)],
            "outputs": [os.path.abspath(os.path.join(folder, f"output_{i}.npy"))
                        for i in range(outputs)],
            "problems": []}
    with open(os.path.join(folder, "case.json"), "w") as f:
        json.dump(case, f, indent=1)
        f.write("\n")


def exportOnnx(name, spec, out_dir):
    import numpy as np
    import onnx
    from onnx import TensorProto, helper
    op, attrs, shapes, reference, opset = spec
    rng = np.random.default_rng(sum(map(ord, name)))
    xs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    if op == "ReduceLogSum":
        xs = [np.abs(x) + 0.1 for x in xs]
    ys = [np.asarray(y, dtype=np.float32) for y in reference(*xs)]
    names = [f"x{i}" for i in range(len(xs))]
    extra = []
    inits = []
    if op == "CumSum":
        inits = [helper.make_tensor("axis", TensorProto.INT64, [], [attrs["axis"]])]
        attrs = {key: value for key, value in attrs.items() if key != "axis"}
        extra = ["axis"]
    if op == "Trilu" and "k" in attrs:
        attrs = {key: value for key, value in attrs.items() if key != "k"}
        inits = [helper.make_tensor("k", TensorProto.INT64, [], [spec[1]["k"]])]
        extra = ["k"]
    if op == "Upsample" and opset >= 9:
        scales = np.array([o / i for o, i in zip(ys[0].shape, xs[0].shape)], dtype=np.float32)
        inits = [helper.make_tensor("scales", TensorProto.FLOAT, [len(scales)], scales)]
        extra = ["scales"]
    if op == "Resize":
        # scales from the reference's output shape (static), roi empty
        scales = np.array([o / i for o, i in zip(ys[0].shape, xs[0].shape)], dtype=np.float32)
        inits = [helper.make_tensor("scales", TensorProto.FLOAT, [len(scales)], scales)]
        extra = ["", "scales"]
    node = helper.make_node(op, names + extra, ["y0"], **attrs)
    graph = helper.make_graph(
        [node], name, [helper.make_tensor_value_info(n, TensorProto.FLOAT, x.shape)
                       for n, x in zip(names, xs)],
        [helper.make_tensor_value_info("y0", TensorProto.FLOAT, ys[0].shape)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(model)
    folder = os.path.join(out_dir, name)
    os.makedirs(folder, exist_ok=True)
    onnx.save(model, os.path.join(folder, "model.onnx"))
    for i, x in enumerate(xs):
        np.save(os.path.join(folder, f"input_{i}.npy"), x)
    for i, y in enumerate(ys):
        np.save(os.path.join(folder, f"output_{i}.npy"), y)
    writeCase(folder, len(xs), len(ys))


def export(name, factory, shape, opset, out_dir):
    import numpy as np
    import torch
    torch.manual_seed(sum(map(ord, name)))
    model = factory().eval()
    x = torch.randn(*shape)
    with torch.no_grad():
        outputs = model(x)
    if not isinstance(outputs, tuple):
        outputs = (outputs,)
    folder = os.path.join(out_dir, name)
    os.makedirs(folder, exist_ok=True)
    torch.onnx.export(model, (x,), os.path.join(folder, "model.onnx"), opset_version=opset,
                      input_names=["x"], output_names=[f"y{i}" for i in range(len(outputs))])
    np.save(os.path.join(folder, "input_0.npy"), x.numpy())
    for i, y in enumerate(outputs):
        np.save(os.path.join(folder, f"output_{i}.npy"), y.numpy())
    writeCase(folder, 1, len(outputs))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", nargs="?")
    parser.add_argument("names", nargs="*")
    parser.add_argument("--list", action="store_true", help="print the case names and exit")
    args = parser.parse_args()
    if args.list:
        print("\n".join(NAMES + ONNX_NAMES))
        return
    if not args.out_dir:
        parser.error("OUT_DIR is required")
    table = cases()
    assert sorted(table) == sorted(NAMES), "NAMES and cases() differ"
    built = onnx_cases()
    assert sorted(built) == sorted(ONNX_NAMES), "ONNX_NAMES and onnx_cases() differ"
    for name in args.names or NAMES + ONNX_NAMES:
        if name in built:
            exportOnnx(name, built[name], args.out_dir)
        elif name in table:
            factory, shape, opset = table[name]
            export(name, factory, shape, opset, args.out_dir)
        else:
            parser.error(f"unknown case {name!r}")
        print(f"{name}: exported")


if __name__ == "__main__":
    sys.exit(main())

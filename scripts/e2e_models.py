"""The end-to-end test models (PyTorch definitions, seeds, calibration, ONNX export).

scripts/export_models.py is the command line over this module; it imports it (and so torch)
only when a model needs exporting.
"""
import copy
import json
import math
import os

import numpy as np
import torch
import torch.nn as nn
import torchvision

import e2e_catalog
import e2e_detection
import e2e_transformers
import e2e_vision

class MnistCnn(nn.Module):
    """LeNet-like CNN for 1x1x28x28: Conv-BN-ReLU-MaxPool twice, then two Gemms."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 5, padding=2), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 5, padding=2), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(32 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


class Mlp(nn.Module):
    """784-256-128-10 with a standalone BatchNorm (not foldable into a Conv) and a Softmax."""

    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(784, 256), nn.BatchNorm1d(256), nn.ReLU(),
            nn.Linear(256, 128), nn.ReLU(),
            nn.Linear(128, 10), nn.Softmax(dim=1))

    def forward(self, x):
        return self.layers(x)


class TwoBranch(nn.Module):
    """Two branches that share only the input and meet at a Concat (concurrent stages)."""

    def __init__(self):
        super().__init__()
        self.left = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(),
                                  nn.Conv2d(16, 16, 3, padding=1), nn.ReLU())
        self.right = nn.Sequential(nn.Conv2d(3, 8, 1), nn.ReLU(),
                                   nn.Conv2d(8, 16, 5, padding=2), nn.BatchNorm2d(16), nn.ReLU(),
                                   nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False))
        self.head = nn.Sequential(nn.Conv2d(32, 32, 3, stride=2, padding=1), nn.ReLU(),
                                  nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10))

    def forward(self, x):
        return self.head(torch.cat([self.left(x), self.right(x)], dim=1))


def imageInput(shape):
    """One standard-normal image batch from the fixed seed."""
    return lambda rng: (torch.from_numpy(rng.standard_normal(shape).astype(np.float32)),)


class Spec:
    """How to build, feed and export one test model."""

    def __init__(self, make, shape, opset, batch, inputs=None, input_names=("input",),
                 dynamic=False):
        self.make, self.shape, self.opset, self.batch = make, shape, opset, batch
        # Exported with symbolic batch and sequence dims (torch's dynamic_axes): the shape
        # chains stay in the model, and kiln gets the dims from --input-shape.
        self.dynamic = dynamic
        self.inputs = inputs or imageInput(shape)
        self.input_names = list(input_names)


MODELS = {
    "mnist_cnn": Spec(MnistCnn, (1, 1, 28, 28), 13, 32),
    "mnist_cnn_opset9": Spec(MnistCnn, (1, 1, 28, 28), 9, 32),
    "mlp": Spec(Mlp, (1, 784), 13, 64),
    "two_branch": Spec(TwoBranch, (1, 3, 32, 32), 13, 16),
    "mobilenet_v2": Spec(lambda: torchvision.models.mobilenet_v2(weights=None),
                         (1, 3, 224, 224), 13, 4),
    "resnet18": Spec(lambda: torchvision.models.resnet18(weights=None), (1, 3, 224, 224), 13, 4),
    "squeezenet1_1": Spec(lambda: torchvision.models.squeezenet1_1(weights=None),
                          (1, 3, 224, 224), 13, 4),
}
for _name, _family, _opset in e2e_catalog.familyModels():
    if _family in e2e_transformers.FAMILIES:
        _make, _inputs, _names, _dynamic = e2e_transformers.FAMILIES[_family]
        MODELS[_name] = Spec(_make, None, _opset, 0, _inputs, _names, _dynamic)
    else:
        _make, _shape, _batch = {**e2e_vision.FAMILIES, **e2e_detection.FAMILIES}[_family]
        MODELS[_name] = Spec(_make, _shape, _opset, _batch)
SEED = 1234
CALIBRATION_BATCHES = 3


def calibrate(model, shape, batch):
    """BatchNorm running mean/var := the exact average over a few random batches."""
    norms = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not norms:
        return
    for m in norms:
        m.reset_running_stats()
        m.momentum = None  # cumulative moving average
    model.train()
    with torch.no_grad():
        for _ in range(CALIBRATION_BATCHES):
            model(torch.randn(batch, *shape[1:]))


def saveArrays(folder, stem, tensors):
    """stem.npy for the first tensor, stem1.npy, stem2.npy ... for the others; the paths."""
    paths = []
    for i, t in enumerate(tensors):
        path = os.path.join(folder, f"{stem}{i if i else ''}.npy")
        array = t.numpy()
        np.save(path, array.astype(np.float32) if array.dtype == np.float32 else array)
        paths.append(path)
    return paths


def float64Outputs(model, inputs):
    """The model's outputs computed in float64 (a copy of the model): the reference."""
    wide = copy.deepcopy(model).double()
    with torch.no_grad():
        outputs = wide(*[t.double() if t.is_floating_point() else t for t in inputs])
    return outputs if isinstance(outputs, (tuple, list)) else (outputs,)


def tolerance(outputs32, outputs64):
    """(atol, PyTorch's own float32 error): the issue's bar |d| <= 1e-3 |ref| + 1e-5, with atol
    raised to twice PyTorch's float32 error against float64 where float32 arithmetic itself
    cannot meet it (deep random-weight nets near zero outputs)."""
    error = 0.0
    for y32, y64 in zip(outputs32, outputs64):
        if y64.is_floating_point():
            error = max(error, float((y32.double() - y64).abs().max()))
    bound = 2 * error
    if bound <= 1e-5:
        return 1e-5, error
    unit = 10.0 ** math.floor(math.log10(bound))
    return math.ceil(bound / unit) * unit, error  # rounded up to one significant digit


def exportModel(name, out_dir):
    """Writes OUT_DIR/NAME/{model.onnx, input*.npy, output*.npy, case.json}; the outputs.

    The first models compare with PyTorch's float32 outputs (rtol 1e-3, atol 1e-4); the
    families compare with the float64 outputs of the same model (see `tolerance`)."""
    spec = MODELS[name]
    torch.manual_seed(SEED)
    model = spec.make()
    if spec.shape is not None:
        calibrate(model, spec.shape, spec.batch)
    model.eval()

    inputs = spec.inputs(np.random.RandomState(SEED))
    with torch.no_grad():
        outputs = model(*inputs)
    if not isinstance(outputs, (tuple, list)):
        outputs = (outputs,)
    case = {"tolerance": "1e-3,1e-4"}
    if name not in e2e_catalog.BASE:
        outputs64 = float64Outputs(model, inputs)
        atol, error = tolerance(outputs, outputs64)
        case = {"tolerance": f"1e-3,{atol:g}", "torch_f32_error": error}
        outputs = [y.float() if y.is_floating_point() else y for y in outputs64]
    folder = os.path.abspath(os.path.join(out_dir, name))  # case.json holds absolute paths
    os.makedirs(folder, exist_ok=True)
    model_path = os.path.join(folder, "model.onnx")
    output_names = ["output"] + [f"output{i}" for i in range(1, len(outputs))]
    # Classic TorchScript exporter (torch 1.13's default), static shapes, batch 1.
    dynamic_axes, flags = None, []
    if spec.dynamic:
        dynamic_axes = {n: {0: "batch", 1: "sequence"} for n in spec.input_names}
        dynamic_axes.update({n: {0: "batch"} for n in output_names})
        flags = [f"--input-shape={n}:{'x'.join(map(str, t.shape))}"
                 for n, t in zip(spec.input_names, inputs)]
    torch.onnx.export(model, tuple(inputs), model_path, opset_version=spec.opset,
                      input_names=spec.input_names, output_names=output_names,
                      do_constant_folding=True, dynamic_axes=dynamic_axes)
    import onnx
    case.update({"model": model_path, "inputs": saveArrays(folder, "input", inputs),
                 "outputs": saveArrays(folder, "output", outputs), "problems": [],
                 "compile_flags": flags,
                 "ops": sorted({node.op_type for node in onnx.load(model_path).graph.node})})
    with open(os.path.join(folder, "case.json"), "w") as f:
        json.dump(case, f, indent=1)
    return outputs

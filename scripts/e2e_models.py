"""The end-to-end test models (PyTorch definitions, seeds, calibration, ONNX export).

scripts/export_models.py is the command line over this module; it imports it (and so torch)
only when a model needs exporting.
"""
import os

import numpy as np
import torch
import torch.nn as nn
import torchvision


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


# name: (constructor, input shape, opset, calibration batch size)
MODELS = {
    "mnist_cnn": (MnistCnn, (1, 1, 28, 28), 13, 32),
    "mnist_cnn_opset9": (MnistCnn, (1, 1, 28, 28), 9, 32),
    "mlp": (Mlp, (1, 784), 13, 64),
    "two_branch": (TwoBranch, (1, 3, 32, 32), 13, 16),
    "mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(weights=None),
                     (1, 3, 224, 224), 13, 4),
    "resnet18": (lambda: torchvision.models.resnet18(weights=None), (1, 3, 224, 224), 13, 4),
    "squeezenet1_1": (lambda: torchvision.models.squeezenet1_1(weights=None),
                      (1, 3, 224, 224), 13, 4),
}
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


def exportModel(name, out_dir):
    make, shape, opset, batch = MODELS[name]
    torch.manual_seed(SEED)
    model = make()
    calibrate(model, shape, batch)
    model.eval()

    x = torch.from_numpy(np.random.RandomState(SEED).standard_normal(shape).astype(np.float32))
    with torch.no_grad():
        y = model(x)
    folder = os.path.join(out_dir, name)
    os.makedirs(folder, exist_ok=True)
    # Classic TorchScript exporter (torch 1.13's default), static shapes, batch 1.
    torch.onnx.export(model, x, os.path.join(folder, "model.onnx"), opset_version=opset,
                      input_names=["input"], output_names=["output"], do_constant_folding=True)
    np.save(os.path.join(folder, "input.npy"), x.numpy())
    np.save(os.path.join(folder, "output.npy"), y.numpy().astype(np.float32))
    return y

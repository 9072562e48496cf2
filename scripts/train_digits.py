#!/usr/bin/python3
"""Trains the shipped example: a small CNN that classifies 8x8 handwritten digits.

Uses the digits bundled with scikit-learn (sklearn.datasets.load_digits, no download) and
Debian's PyTorch on the CPU with a fixed seed, then exports the model to ONNX (opset 13,
static shapes, batch 1) together with a few held-out test digits (.npy inputs), their labels
and PyTorch's logits for them (.npy reference outputs).

    /usr/bin/python3 scripts/train_digits.py [OUT_DIR]      # default: examples/digits
"""
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
from sklearn.datasets import load_digits

SEED = 20261130
EPOCHS = 40
BATCH = 64
NUM_SAMPLES = 10  # held-out digits shipped with the example


class DigitNet(nn.Module):
    """Conv-ReLU-Conv-ReLU-MaxPool, then two fully connected layers: ~7k parameters."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, kernel_size=3, padding=1), nn.ReLU(),
            nn.Conv2d(8, 16, kernel_size=3, padding=1), nn.ReLU(),
            nn.MaxPool2d(2))                                  # 16 x 4 x 4
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(16 * 4 * 4, 24), nn.ReLU(), nn.Linear(24, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


def loadSplit():
    """Pixels scaled to [0, 1] as N x 1 x 8 x 8 float32; a fixed 80/20 train/test split."""
    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)[:, None, :, :]
    labels = digits.target.astype(np.int64)
    order = np.random.RandomState(SEED).permutation(len(labels))
    cut = int(len(labels) * 0.8)
    return (images[order[:cut]], labels[order[:cut]]), (images[order[cut:]], labels[order[cut:]])


def train(model, images, labels):
    x, y = torch.from_numpy(images), torch.from_numpy(labels)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    loss_fn = nn.CrossEntropyLoss()
    generator = torch.Generator().manual_seed(SEED)
    model.train()
    for _ in range(EPOCHS):
        perm = torch.randperm(len(y), generator=generator)
        for start in range(0, len(y), BATCH):
            idx = perm[start:start + BATCH]
            optimizer.zero_grad()
            loss = loss_fn(model(x[idx]), y[idx])
            loss.backward()
            optimizer.step()
    model.eval()


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "examples", "digits")
    os.makedirs(out_dir, exist_ok=True)

    torch.manual_seed(SEED)
    torch.set_num_threads(1)  # bit-identical training runs
    (train_x, train_y), (test_x, test_y) = loadSplit()
    model = DigitNet()
    started = time.time()
    train(model, train_x, train_y)
    with torch.no_grad():
        test_logits = model(torch.from_numpy(test_x)).numpy()
    accuracy = float((test_logits.argmax(axis=1) == test_y).mean())
    print(f"trained in {time.time() - started:.1f} s; held-out accuracy "
          f"{accuracy * 100:.2f}% on {len(test_y)} digits")

    # Classic TorchScript exporter (torch 1.13's default): no onnxscript, opset 13.
    model_path = os.path.join(out_dir, "model.onnx")
    torch.onnx.export(model, torch.zeros(1, 1, 8, 8), model_path, opset_version=13,
                      input_names=["image"], output_names=["logits"], do_constant_folding=True)

    samples = []
    for k in range(NUM_SAMPLES):
        image = test_x[k:k + 1]
        with torch.no_grad():
            logits = model(torch.from_numpy(image)).numpy()
        np.save(os.path.join(out_dir, f"digit_{k}.npy"), image)
        np.save(os.path.join(out_dir, f"digit_{k}_logits.npy"), logits)
        samples.append({"input": f"digit_{k}.npy", "logits": f"digit_{k}_logits.npy",
                        "label": int(test_y[k]), "pytorch_prediction": int(logits.argmax())})

    # The whole held-out set, compactly (pixels as scikit-learn has them: integers 0..16), so that
    # scripts/demo can measure kiln's accuracy on all of it.
    np.save(os.path.join(out_dir, "test_images_u8.npy"),
            np.rint(test_x[:, 0] * 16).astype(np.uint8))
    np.save(os.path.join(out_dir, "test_labels_u8.npy"), test_y.astype(np.uint8))

    manifest = {"model": "model.onnx", "input": "image", "input_shape": [1, 1, 8, 8],
                "output": "logits", "seed": SEED, "epochs": EPOCHS,
                "train_digits": len(train_y), "test_digits": len(test_y),
                "test_accuracy": round(accuracy, 4), "samples": samples}
    with open(os.path.join(out_dir, "samples.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    with open(os.path.join(out_dir, "labels.txt"), "w") as f:  # for scripts/demo
        for sample in samples:
            f.write(f"{sample['input']} {sample['label']}\n")
    print(f"wrote {model_path} ({os.path.getsize(model_path)} bytes) and {NUM_SAMPLES} samples")


if __name__ == "__main__":
    main()

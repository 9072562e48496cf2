"""The names of the end-to-end test models (no torch import: CMake lists them at configure
time through `export_models.py --list`).

A family exported at several opsets gives one model per opset, named FAMILY_opN. A model whose
operators kiln does not support yet is an expected refusal: its test must end in a clear
refusal that names the operator (CTest shows it as skipped) until the operator lands; then it
compiles and must match PyTorch like the others.
"""

# The first models, kept under their original names.
BASE = ["mnist_cnn", "mnist_cnn_opset9", "mlp", "two_branch", "mobilenet_v2", "resnet18",
        "squeezenet1_1"]

# family: the opsets it is exported at. Torch 1.13's exporter writes opsets 7-17; the old
# opsets (7, 8) go through libonnx's version converter in kiln's importer. (ResNet-18,
# SqueezeNet 1.1 and MobileNet v2 are also among the first models, at 224x224 and opset 13.)
OPSETS = {
    "alexnet": [7, 9, 13], "zfnet": [7, 9, 17], "vgg16": [9, 13], "vgg19": [9, 17],
    "googlenet": [8, 9, 13], "inception_v3": [9, 13], "resnet18": [7, 9],
    "resnet50": [7, 9, 13],
    "resnet50_v2": [9, 13], "densenet121": [9, 13], "shufflenet_v1": [9, 13],
    "shufflenet_v2": [8, 9, 17], "squeezenet1_0": [7, 9, 13], "squeezenet1_1": [8, 9],
    "mobilenet_v2": [9, 11], "mobilenet_v3_small": [8, 9, 14],
    "mobilenet_v3_large": [9, 14], "efficientnet_b0": [8, 9, 13], "bert_layer": [13, 17],
    "gpt_block": [13, 17], "segnet": [11, 13], "headnet": [11, 13],
}

# model: the operator kiln refuses in it (see /work/helpers/s2/onnx-missing.md).
EXPECTED_REFUSALS = {}


def familyModels():
    """[(name, family, opset)] for every family at each of its opsets."""
    return [(f"{family}_op{opset}", family, opset)
            for family, opsets in OPSETS.items() for opset in opsets]


def names():
    return BASE + [name for name, _, _ in familyModels()]

"""Vision families for the end-to-end tests: torchvision's definitions at small input sizes, and
the few architectures torchvision lacks (ZFNet, pre-activation ResNet-50 = ResNet v2,
ShuffleNet v1), written here after their papers.

Input sizes are small (32-96 pixels) so the whole set compiles and runs in CI within minutes.
Where torchvision's head assumes 224x224 inputs (AlexNet, VGG: an adaptive pooling to 6x6/7x7
that ONNX can only express when it divides the feature map, and 100-400 MB of fully connected
weights), `compactHead` keeps torchvision's feature extractor and replaces the classifier by
the same Dropout-Linear-ReLU stack with 256 units.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision


def compactHead(model, features):
    """torchvision AlexNet/VGG with the classifier sized for `features` inputs (see above)."""
    model.avgpool = nn.Identity()
    model.classifier = nn.Sequential(
        nn.Dropout(), nn.Linear(features, 256), nn.ReLU(inplace=True),
        nn.Dropout(), nn.Linear(256, 256), nn.ReLU(inplace=True), nn.Linear(256, 10))
    return model


class LrnFunction(torch.autograd.Function):
    """Local response normalisation exported as ONNX's LRN operator, as the Caffe-converted
    AlexNet/ZFNet models carry it (torch would export its own decomposition instead)."""

    @staticmethod
    def forward(ctx, x):
        return F.local_response_norm(x, 5, alpha=1e-4, beta=0.75, k=2.0)

    @staticmethod
    def symbolic(g, x):
        return g.op("LRN", x, size_i=5, alpha_f=1e-4, beta_f=0.75, bias_f=2.0)


class Lrn(nn.Module):
    def forward(self, x):
        return LrnFunction.apply(x)


class ZfNet(nn.Module):
    """ZFNet (Zeiler & Fergus 2013) shape at 1x3x112x112: 7x7/2 and 5x5/2 convolutions, each
    followed by local response normalisation and a 3x3/2 max pool (ceil mode once)."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 48, 7, stride=2, padding=1), nn.ReLU(inplace=True),
            Lrn(),
            nn.MaxPool2d(3, stride=2, padding=1),
            nn.Conv2d(48, 128, 5, stride=2), nn.ReLU(inplace=True),
            Lrn(),
            nn.MaxPool2d(3, stride=2, ceil_mode=True),
            nn.Conv2d(128, 192, 3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(192, 192, 3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(192, 128, 3, padding=1), nn.ReLU(inplace=True),
            nn.MaxPool2d(3, stride=2))
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Dropout(), nn.Linear(128 * 2 * 2, 256), nn.ReLU(inplace=True),
            nn.Dropout(), nn.Linear(256, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


class PreActBottleneck(nn.Module):
    """ResNet v2 bottleneck (He et al. 2016, 'Identity mappings'): BN-ReLU-conv three times;
    the projection shortcut takes the pre-activated input."""
    expansion = 4

    def __init__(self, inplanes, planes, stride):
        super().__init__()
        out = planes * self.expansion
        self.bn1 = nn.BatchNorm2d(inplanes)
        self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, out, 1, bias=False)
        self.shortcut = None
        if stride != 1 or inplanes != out:
            self.shortcut = nn.Conv2d(inplanes, out, 1, stride=stride, bias=False)

    def forward(self, x):
        pre = F.relu(self.bn1(x))
        skip = self.shortcut(pre) if self.shortcut is not None else x
        y = self.conv1(pre)
        y = self.conv2(F.relu(self.bn2(y)))
        y = self.conv3(F.relu(self.bn3(y)))
        return y + skip


class PreActResNet50(nn.Module):
    """ResNet-50 v2: ResNet-50's stages (3, 4, 6, 3 bottlenecks) in pre-activation form, with
    the final BN-ReLU before global pooling."""

    def __init__(self, num_classes=1000):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False),
                                  nn.MaxPool2d(3, stride=2, padding=1))
        layers, inplanes = [], 64
        for planes, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
            for i in range(blocks):
                layers.append(PreActBottleneck(inplanes, planes, stride if i == 0 else 1))
                inplanes = planes * PreActBottleneck.expansion
        self.layers = nn.Sequential(*layers)
        self.post = nn.Sequential(nn.BatchNorm2d(inplanes), nn.ReLU(inplace=True),
                                  nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.fc = nn.Linear(inplanes, num_classes)

    def forward(self, x):
        return self.fc(self.post(self.layers(self.stem(x))))


def channelShuffle(x, groups):
    n, c, h, w = x.shape
    return x.view(n, groups, c // groups, h, w).transpose(1, 2).reshape(n, c, h, w)


class ShuffleV1Unit(nn.Module):
    """ShuffleNet v1 unit (Zhang et al. 2017): grouped 1x1 conv, channel shuffle, depthwise
    3x3, grouped 1x1; stride 2 units concatenate an average-pooled shortcut."""

    def __init__(self, inplanes, outplanes, groups, stride, first_group=True):
        super().__init__()
        self.stride, self.groups = stride, groups
        if stride == 2:
            outplanes -= inplanes
        mid = outplanes // 4
        self.conv1 = nn.Conv2d(inplanes, mid, 1, groups=groups if first_group else 1,
                               bias=False)
        self.bn1 = nn.BatchNorm2d(mid)
        self.conv2 = nn.Conv2d(mid, mid, 3, stride=stride, padding=1, groups=mid, bias=False)
        self.bn2 = nn.BatchNorm2d(mid)
        self.conv3 = nn.Conv2d(mid, outplanes, 1, groups=groups, bias=False)
        self.bn3 = nn.BatchNorm2d(outplanes)

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = channelShuffle(y, self.groups)
        y = self.bn2(self.conv2(y))
        y = self.bn3(self.conv3(y))
        if self.stride == 2:
            return F.relu(torch.cat([F.avg_pool2d(x, 3, stride=2, padding=1), y], 1))
        return F.relu(x + y)


class ShuffleNetV1(nn.Module):
    """ShuffleNet v1 1x, g = 3 (240/480/960 channels; 4, 8, 4 units)."""

    def __init__(self, groups=3, num_classes=1000):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 24, 3, stride=2, padding=1, bias=False),
                                  nn.BatchNorm2d(24), nn.ReLU(inplace=True),
                                  nn.MaxPool2d(3, stride=2, padding=1))
        units, inplanes = [], 24
        for outplanes, repeats in ((240, 4), (480, 8), (960, 4)):
            for i in range(repeats):
                units.append(ShuffleV1Unit(inplanes, outplanes, groups, 2 if i == 0 else 1,
                                           first_group=inplanes != 24))
                inplanes = outplanes
        self.units = nn.Sequential(*units)
        self.fc = nn.Linear(inplanes, num_classes)

    def forward(self, x):
        y = self.units(self.stem(x))
        return self.fc(y.mean([2, 3]))


def tv(name, **kwargs):
    """A torchvision model with random weights (its own initialisation)."""
    return lambda: getattr(torchvision.models, name)(weights=None, **kwargs)


# family: (constructor, input shape, calibration batch size)
FAMILIES = {
    "alexnet": (lambda: compactHead(torchvision.models.alexnet(weights=None), 256 * 2 * 2),
                (1, 3, 96, 96), 8),
    "zfnet": (ZfNet, (1, 3, 112, 112), 8),
    "vgg16": (lambda: compactHead(torchvision.models.vgg16(weights=None), 512),
              (1, 3, 32, 32), 8),
    "vgg19": (lambda: compactHead(torchvision.models.vgg19(weights=None), 512),
              (1, 3, 32, 32), 8),
    "googlenet": (tv("googlenet", aux_logits=False, init_weights=True), (1, 3, 64, 64), 8),
    "inception_v3": (tv("inception_v3", aux_logits=False, init_weights=True),
                     (1, 3, 80, 80), 4),
    "resnet18": (tv("resnet18"), (1, 3, 64, 64), 8),
    "resnet50": (tv("resnet50"), (1, 3, 64, 64), 8),
    "resnet50_v2": (PreActResNet50, (1, 3, 64, 64), 8),
    "densenet121": (tv("densenet121"), (1, 3, 64, 64), 8),
    "shufflenet_v1": (ShuffleNetV1, (1, 3, 64, 64), 8),
    "shufflenet_v2": (tv("shufflenet_v2_x1_0"), (1, 3, 64, 64), 8),
    "squeezenet1_0": (tv("squeezenet1_0"), (1, 3, 64, 64), 8),
    "squeezenet1_1": (tv("squeezenet1_1"), (1, 3, 64, 64), 8),
    "mobilenet_v2": (tv("mobilenet_v2"), (1, 3, 64, 64), 8),
    "mobilenet_v3_small": (tv("mobilenet_v3_small"), (1, 3, 64, 64), 8),
    "mobilenet_v3_large": (tv("mobilenet_v3_large"), (1, 3, 64, 64), 8),
    "efficientnet_b0": (tv("efficientnet_b0"), (1, 3, 64, 64), 8),
}

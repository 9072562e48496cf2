"""Small detection/segmentation-style networks for the end-to-end tests (SegNet, HeadNet).

Encoder of strided convolutions; a decoder that upsamples three ways (ConvTranspose, Resize
nearest, Resize linear with half-pixel and with align-corners coordinates) and a sub-pixel
(PixelShuffle -> DepthToSpace) head; outputs the segmentation logits, the per-pixel class
(ArgMax, int64) and a detection-style TopK of the pooled class scores (values and int64
indices).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CLASSES = 6


class SegNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc1 = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU())
        self.enc2 = nn.Sequential(nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.BatchNorm2d(32),
                                  nn.ReLU())
        self.enc3 = nn.Sequential(nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.BatchNorm2d(64),
                                  nn.ReLU())
        self.up3 = nn.ConvTranspose2d(64, 32, 4, stride=2, padding=1)  # 8x8 -> 16x16
        self.fuse2 = nn.Sequential(nn.Conv2d(64, 32, 3, padding=1), nn.ReLU())
        self.fuse1 = nn.Sequential(nn.Conv2d(48, 16, 3, padding=1), nn.ReLU())
        self.subpixel = nn.Sequential(nn.Conv2d(32, CLASSES * 4, 3, padding=1),
                                      nn.PixelShuffle(2))  # 16x16 -> 32x32
        self.classes = nn.Conv2d(16, CLASSES, 1)

    def forward(self, x):
        e1 = self.enc1(x)    # 32x32
        e2 = self.enc2(e1)   # 16x16
        e3 = self.enc3(e2)   # 8x8
        d2 = self.fuse2(torch.cat([F.relu(self.up3(e3)), e2], 1))
        nearest = F.interpolate(d2, scale_factor=2, mode="nearest")
        half_pixel = F.interpolate(d2, size=(32, 32), mode="bilinear", align_corners=False)
        corners = F.interpolate(e3[:, :16], size=(32, 32), mode="bilinear", align_corners=True)
        d1 = self.fuse1(torch.cat([nearest[:, :16] + half_pixel[:, 16:], corners, e1], 1))
        logits = self.classes(d1) + self.subpixel(d2)
        labels = logits.argmax(dim=1)
        scores, which = torch.topk(logits.mean(dim=(2, 3)), 3, dim=1)
        return logits, labels, scores, which


class HeadNet(nn.Module):
    """Padding, normalisation and reduction ops of detection heads: reflect and edge Pad,
    InstanceNorm, average pooling without count_include_pad and ceil-mode max pooling; outputs
    per-channel ReduceMax/Min/Sum/Prod/L2/LogSumExp/Mean statistics and an ArgMin map."""

    def __init__(self):
        super().__init__()
        self.reflect = nn.Sequential(nn.ReflectionPad2d(2), nn.Conv2d(3, 16, 5))
        self.edge = nn.Sequential(nn.ReplicationPad2d(1), nn.Conv2d(16, 16, 3))
        self.norm = nn.InstanceNorm2d(16, affine=True)
        self.head = nn.Conv2d(16, 8, 1)

    def forward(self, x):
        y = F.relu(self.norm(self.edge(F.relu(self.reflect(x)))))
        y = F.avg_pool2d(y, 3, stride=2, padding=1, count_include_pad=False)  # 24 -> 12
        y = F.max_pool2d(y, 2, stride=2, ceil_mode=True, padding=0)           # 12 -> 6
        y = self.head(F.pad(y, (0, 1, 0, 1)))                                 # 7x7
        flat = y.flatten(2)  # [1, 8, 49]
        stats = torch.stack([flat.amax(-1), flat.amin(-1), flat.sum(-1),
                             torch.tanh(flat[:, :, :6]).prod(-1), flat.norm(dim=-1),
                             flat.logsumexp(-1), flat.mean(-1)], dim=-1)  # [1, 8, 7]
        return stats, y.argmin(dim=1)


FAMILIES = {"segnet": (SegNet, (1, 3, 32, 32), 8), "headnet": (HeadNet, (1, 3, 24, 24), 8)}

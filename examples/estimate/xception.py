#!/usr/bin/python3
"""xception.py — GPUMemNet's real-world Xception job: timm's legacy Xception (Chollet 2017,
"Xception: Deep Learning with Depthwise Separable Convolutions"), written out here because timm
is not in Debian; 22,855,952 parameters, as the job's summary
(data/gpumemnet/summaries/Xception_32.model) counts. 1000 classes, 224x224.
Usage: python3 xception.py --batch-size N"""
import torch.nn as nn

from common import main


class SeparableConv2d(nn.Module):
    """A depthwise 3x3 convolution, then a pointwise 1x1 one; no biases."""

    def __init__(self, cin, cout):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cin, 3, 1, 1, groups=cin, bias=False)
        self.pointwise = nn.Conv2d(cin, cout, 1, bias=False)

    def forward(self, x):
        return self.pointwise(self.conv1(x))


class Block(nn.Module):
    """reps x (ReLU, separable conv, BN), a 3x3 max-pool when strided, plus a shortcut
    (1x1 conv + BN when the shape changes)."""

    def __init__(self, cin, cout, reps, stride=1, start_with_relu=True, grow_first=True):
        super().__init__()
        if cout != cin or stride != 1:
            self.skip = nn.Conv2d(cin, cout, 1, stride=stride, bias=False)
            self.skipbn = nn.BatchNorm2d(cout)
        else:
            self.skip = None
        rep = []
        for i in range(reps):
            if grow_first:
                inc, outc = (cin if i == 0 else cout), cout
            else:
                inc, outc = cin, (cin if i < reps - 1 else cout)
            rep += [nn.ReLU(inplace=True), SeparableConv2d(inc, outc), nn.BatchNorm2d(outc)]
        if not start_with_relu:
            rep = rep[1:]
        else:
            rep[0] = nn.ReLU(inplace=False)
        if stride != 1:
            rep.append(nn.MaxPool2d(3, stride, 1))
        self.rep = nn.Sequential(*rep)

    def forward(self, inp):
        x = self.rep(inp)
        x += self.skipbn(self.skip(inp)) if self.skip is not None else inp
        return x


class Xception(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        self.entry = nn.Sequential(
            nn.Conv2d(3, 32, 3, 2, 0, bias=False), nn.BatchNorm2d(32), nn.ReLU(inplace=True),
            nn.Conv2d(32, 64, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
            Block(64, 128, 2, 2, start_with_relu=False), Block(128, 256, 2, 2),
            Block(256, 728, 2, 2))
        self.middle = nn.Sequential(*[Block(728, 728, 3, 1) for _ in range(8)])
        self.exit = nn.Sequential(
            Block(728, 1024, 2, 2, grow_first=False),
            SeparableConv2d(1024, 1536), nn.BatchNorm2d(1536), nn.ReLU(inplace=True),
            SeparableConv2d(1536, 2048), nn.BatchNorm2d(2048), nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.fc = nn.Linear(2048, num_classes)

    def forward(self, x):
        return self.fc(self.exit(self.middle(self.entry(x))))


if __name__ == "__main__":
    main(lambda: Xception(1000), 224, __doc__)

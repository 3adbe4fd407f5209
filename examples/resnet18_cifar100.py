#!/usr/bin/python3
"""resnet18_cifar100.py — the job of resnet18.yaml: torchvision's resnet18 with 100 classes on
32x32 images, CIFAR-100's shape (random images stand in for the data set, as in estimate/;
memory does not depend on pixel values). Runs on a GPU when there is one, else on the CPU.
Usage: python3 resnet18_cifar100.py --batch-size N [--epochs E] [--samples S]"""
import os
import sys

import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "estimate"))
from common import main  # noqa: E402

if __name__ == "__main__":
    main(lambda: torchvision.models.resnet18(num_classes=100), 32, __doc__, classes=100)

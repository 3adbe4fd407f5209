#!/usr/bin/python3
"""efficientnet_b0.py — GPUMemNet's real-world efficientnet_b0 job:
torchvision's efficientnet_b0, 1000 classes, 224x224.
Usage: python3 efficientnet_b0.py --batch-size N"""
import torchvision

from common import main

if __name__ == "__main__":
    main(lambda: torchvision.models.efficientnet_b0(num_classes=1000), 224, __doc__)

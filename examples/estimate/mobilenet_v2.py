#!/usr/bin/python3
"""mobilenet_v2.py — GPUMemNet's real-world mobilenet_v2 job:
torchvision's mobilenet_v2, 1000 classes, 224x224.
Usage: python3 mobilenet_v2.py --batch-size N"""
import torchvision

from common import main

if __name__ == "__main__":
    main(lambda: torchvision.models.mobilenet_v2(num_classes=1000), 224, __doc__)

#!/usr/bin/python3
"""resnet50.py — GPUMemNet's real-world resnet50 job: torchvision's resnet50, 1000 classes,
224x224. Usage: python3 resnet50.py --batch-size N"""
import torchvision

from common import main

if __name__ == "__main__":
    main(lambda: torchvision.models.resnet50(num_classes=1000), 224, __doc__)

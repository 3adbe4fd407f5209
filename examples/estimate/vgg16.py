#!/usr/bin/python3
"""vgg16.py — GPUMemNet's real-world vgg16 job: torchvision's vgg16, 1000 classes,
224x224. Usage: python3 vgg16.py --batch-size N"""
import torchvision

from common import main

if __name__ == "__main__":
    main(lambda: torchvision.models.vgg16(num_classes=1000), 224, __doc__)

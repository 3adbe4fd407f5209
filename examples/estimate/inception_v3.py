#!/usr/bin/python3
"""inception_v3.py — GPUMemNet's real-world Inception v3 job (torchvision's inception_v3,
1000 classes, 299x299, no auxiliary logits). Usage: python3 inception_v3.py --batch-size N"""
import torchvision

from common import main

if __name__ == "__main__":
    main(lambda: torchvision.models.inception_v3(num_classes=1000, aux_logits=False,
                                                 init_weights=False), 299, __doc__)

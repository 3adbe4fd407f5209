"""A script that never steps an optimizer: nothing to estimate."""
import torch

print(torch.randn(3).cuda().shape)

"""A tiny MLP training script for carma's tracer tests: no convolutions."""
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 10)).cuda()
opt = torch.optim.AdamW(model.parameters())
for _ in range(10):
    x, y = torch.randn(32, 64).cuda(), torch.randint(0, 10, (32,)).cuda()
    opt.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    opt.step()

"""A tiny CNN training script for carma's tracer tests (runs in a second)."""
import argparse
import torch
import torch.nn as nn

ap = argparse.ArgumentParser()
ap.add_argument("--batch-size", type=int, default=4)
a = ap.parse_args()
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                      nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 10)).to(device)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
crit = nn.CrossEntropyLoss()
for step in range(100):
    x = torch.randn(a.batch_size, 3, 32, 32).to(device)
    y = torch.randint(0, 10, (a.batch_size,)).to(device)
    opt.zero_grad()
    loss = crit(model(x), y)
    loss.backward()
    opt.step()
    print("step", step, "loss", loss.item())

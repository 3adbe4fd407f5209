"""A script the tracer cannot follow: SGD's multi-tensor path has no meta kernels in 1.13."""
import torch
import torch.nn as nn

model = nn.Linear(16, 4).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, foreach=True)
for _ in range(3):
    opt.zero_grad()
    model(torch.randn(8, 16).cuda()).sum().backward()
    opt.step()

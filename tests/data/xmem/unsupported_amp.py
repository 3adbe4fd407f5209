"""A script the tracer refuses: mixed precision."""
import torch
import torch.nn as nn

model = nn.Linear(16, 4).cuda()
opt = torch.optim.Adam(model.parameters())
scaler = torch.cuda.amp.GradScaler()
for _ in range(3):
    with torch.cuda.amp.autocast():
        loss = model(torch.randn(8, 16).cuda()).sum()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()

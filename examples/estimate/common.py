"""common.py — the training job behind GPUMemNet's real-world CNN rows
(data/gpumemnet/realworld_eval.csv), shared by the six scripts here: fp32, no AMP, Adam (lr 1e-3),
cross-entropy, 1000 classes, a torchsummary-style forward at batch 2 first, then one epoch of
training and a validation pass. Random images stand in for the dataset (memory does not depend
on pixel values). Runs on a GPU when there is one, else on the CPU; `carma estimate --run`
traces it unmodified."""
import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class RandomImages(Dataset):
    def __init__(self, n, size, classes=1000):
        self.n, self.size, self.classes = n, size, classes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return (torch.randn(3, self.size, self.size, generator=g),
                int(torch.randint(self.classes, (1,), generator=g)))


def main(build, image_size=224, description="", classes=1000):
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--batch-size", type=int, required=True)
    ap.add_argument("--samples", type=int, default=1024, help="training images per epoch")
    ap.add_argument("--epochs", type=int, default=1)
    a = ap.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = build().to(device)
    model(torch.rand(2, 3, image_size, image_size, device=device))   # torchsummary's pass
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    train = DataLoader(RandomImages(a.samples, image_size, classes), batch_size=a.batch_size,
                       shuffle=True)
    val = DataLoader(RandomImages(a.samples // 4, image_size, classes), batch_size=a.batch_size)
    for epoch in range(a.epochs):
        model.train()
        total = 0.0
        for images, labels in train:
            images, labels = images.to(device), labels.to(device)
            optimizer.zero_grad()
            loss = criterion(model(images), labels)
            loss.backward()
            optimizer.step()
            total += loss.item()
        model.eval()
        correct = 0
        with torch.no_grad():
            for images, labels in val:
                images, labels = images.to(device), labels.to(device)
                correct += (model(images).argmax(1) == labels).sum().item()
        print("epoch %d: loss %.4f, validation accuracy %.4f"
              % (epoch + 1, total / max(1, len(train)), correct / max(1, len(val.dataset))))

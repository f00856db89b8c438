"""PyTorch references of the bench's `cebra` group, served by bench/torch_reference.py's worker
(which merges BUILDERS and speaks the protocol):

- `cebra-offset10-step-512`, `cebra-offset1-mse-step-512`: one training step of a CEBRA encoder as the package runs
  it (cebra/solver/base.py `Solver.step`, single_session.py `_inference`): the reference, positive and negative
  windows cut from the data tensor as `TensorDataset.__getitem__` (expand_index, then `neural[index].transpose(2,
  1)`), three forward passes, the InfoNCE criterion (`FixedCosineInfoNCE` or `FixedEuclideanInfoNCE`), backward,
  Adam (0.9, 0.999, eps 1e-8, no decay), `loss.item()`.

The encoders are built as cebra/models/model.py and layers.py build them (nn.Sequential: `Offset10Model`'s Conv1d k2,
GELU, three `_Skip(Conv1d k3, GELU)` blocks, Conv1d k3, `_Norm`, `Squeeze`; `Offset0ModelMSE`'s Flatten and four
Linear layers with GELU between, `Squeeze`), then given our initial weights from .npy (dense kernels [in, out],
conv kernels [k, in, out], keys `layer{i}_kernel`, `layer{i}_bias`), so both sides train the same network from the
same point on the same windows. The first two steps' losses and the reference windows' embeddings before any step
come back as `check`.
"""
import os
import sys

import numpy as np
import torch
from torch import nn

# The criterions are shared with the InfoNCE fixture generator.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "contrastive", "fixtures"))
from cebra_criterions import dot_similarity, euclidean_similarity, infonce  # noqa: E402


class FixedInfoNCE(nn.Module):
    """`FixedCosineInfoNCE` / `FixedEuclideanInfoNCE`: similarities over a constant temperature, then `infonce`."""

    def __init__(self, distance, temperature):
        super().__init__()
        self.similarity = dot_similarity if distance == "cosine" else euclidean_similarity
        self.temperature = temperature

    def forward(self, ref, pos, neg):
        pos_dist, neg_dist = self.similarity(ref, pos, neg)
        return infonce(pos_dist / self.temperature, neg_dist / self.temperature)


class Skip(nn.Module):
    """cebra/models/layers.py `_Skip` with crop (1, 1)."""

    def __init__(self, *modules):
        super().__init__()
        self.module = nn.Sequential(*modules)

    def forward(self, inp):
        return inp[..., 1:-1] + self.module(inp)


class Norm(nn.Module):
    """cebra/models/layers.py `_Norm`."""

    def forward(self, inp):
        return inp / torch.norm(inp, dim=1, keepdim=True)


class Squeeze(nn.Module):
    """cebra/models/layers.py `Squeeze`."""

    def forward(self, inp):
        return inp.squeeze(2) if inp.dim() > 2 else inp


def cebra_encoder(architecture, inputs, hidden, output):
    """The package's encoder for `architecture`, its weighted layers in our layer order."""
    if architecture in ("offset10-model", "offset10-model-mse"):
        layers = [nn.Conv1d(inputs, hidden, 2), nn.GELU()]
        layers += [Skip(nn.Conv1d(hidden, hidden, 3), nn.GELU()) for _ in range(3)]
        layers.append(nn.Conv1d(hidden, output, 3))
    elif architecture == "offset1-model-mse":
        layers = [nn.Flatten(start_dim=1, end_dim=-1), nn.Linear(inputs, 30 * output), nn.GELU(),
                  nn.Linear(30 * output, 30 * output), nn.GELU(), nn.Linear(30 * output, 10 * output), nn.GELU(),
                  nn.Linear(10 * output, output)]
    elif architecture == "offset1-model":
        layers = [nn.Flatten(start_dim=1, end_dim=-1), nn.Linear(inputs, hidden), nn.GELU(),
                  nn.Linear(hidden, hidden), nn.GELU(), nn.Linear(hidden, hidden // 2), nn.GELU(),
                  nn.Linear(hidden // 2, output)]
    else:
        raise ValueError(f"unknown architecture {architecture}")
    if not architecture.endswith("-mse"):
        layers.append(Norm())
    layers.append(Squeeze())
    return nn.Sequential(*layers)


def weighted_layers(model):
    return [m for m in model.modules() if isinstance(m, (nn.Conv1d, nn.Linear))]


def load_npy(directory, name):
    return torch.from_numpy(np.load(os.path.join(directory, name + ".npy")))


def load_weights(model, directory):
    """Our kernels [in, out] (dense) and [k, in, out] (conv) into torch's [out, in] and [out, in, k]."""
    with torch.no_grad():
        for i, layer in enumerate(weighted_layers(model)):
            kernel = load_npy(directory, f"layer{i}_kernel")
            layer.weight.copy_(kernel.t() if kernel.dim() == 2 else kernel.permute(2, 1, 0))
            layer.bias.copy_(load_npy(directory, f"layer{i}_bias"))


def cebra_step_fn(directory, architecture, inputs, hidden, output, left, right, distance, temperature, lr):
    """One training step of the package's solver on the batch of windows the bench wrote (see the module notes)."""
    model = cebra_encoder(architecture, inputs, hidden, output)
    load_weights(model, directory)
    criterion = FixedInfoNCE(distance, temperature)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0)
    neural = load_npy(directory, "data")
    offset = torch.arange(-left, right)
    rows = len(neural)

    def load(index):
        # TensorDataset.expand_index (clamped to the model's window) and __getitem__.
        index = torch.clamp(index, left, rows - right)
        return neural[index[:, None] + offset[None, :]].transpose(2, 1)

    indices = [load_npy(directory, part).long() for part in ("ref", "pos", "neg")]

    def step():
        ref, pos, neg = (load(index) for index in indices)
        optimizer.zero_grad()
        loss, _, _ = criterion(model(ref), model(pos), model(neg))
        loss.backward()
        optimizer.step()
        return loss.item()

    with torch.no_grad():
        embedding = model(load(indices[0]))
    losses = [step(), step()]
    step.parameters = sum(p.numel() for p in model.parameters())
    step.check = {"losses": losses, "embedding": embedding.flatten().tolist()}
    return step


# Keyed as bench/harness/names.ts names the entries; `args` from the bench select the model and loss.
BUILDERS = {
    "cebra-offset10-step-512": cebra_step_fn,
    "cebra-offset1-mse-step-512": cebra_step_fn,
}

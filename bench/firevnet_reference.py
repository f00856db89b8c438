"""PyTorch references of the bench's `firevnet` group, served by bench/torch_reference.py's worker
(which merges BUILDERS and speaks the protocol), so they run in its process with its environment (OPENBLAS_CORETYPE
and OPENBLAS_L2_SIZE unset, one BLAS thread):

- `firevnet-dense-196`, `firevnet-dense-100`: one training step of the dense fiRevNet (lib/models/firevnet.ts
  `DenseFiRevNet`, a lib/models/coupling_flow.ts `CouplingFlow` with additive couplings): per block the fixed
  permutation (an index, as torch code permutes), then x2 += MLP(x1) with MLP = Linear(d/2 -> h), ReLU, Linear(h ->
  h), ReLU, Linear(h -> d - d/2); finally z = h * exp(log_scale), log-det = sum(log_scale). Logits z_s = z[:, :C];
  mean cross-entropy, backward, Adamax (d 196) or Adam (d 100), lr 1e-3, betas (0.9, 0.999), eps 1e-8; the loss read
  back. The permutations come from the bench as int32 .npy (`perm{k}`), the weights as our [in, out] kernels.
- `firevnet-conv-32`: one training step of the convolutional fiRevNet (`ConvFiRevNet`, the authors'
  jhjacobsen/fully-invertible-revnet `Glow_` with actnorm, reverse and additive coupling) in NCHW: per level a 2x2
  squeeze in TensorFlow's space_to_depth channel order, then per step ActNorm (x + b) * exp(logs) (log-det
  H*W*sum(logs)), the channel flip, and x2 += NN(x1) with NN = conv3x3 (no bias) + ActNorm, ReLU, conv1x1 (no bias)
  + ActNorm, ReLU, dropout 0.1, conv3x3 with bias times exp(3 * logs); half the channels leave after every level
  but the last. Logits = final[:, :C, p, p] through BatchNorm1d(C, eps 1e-5, momentum 0.9) in training mode; mean
  cross-entropy, backward, Adamax. The same module in the same layout as lib/models/invertible.ts, with our weights
  (conv kernels [k, k, in, out] -> [out, in, k, k]).

The check: z_s and z_n of the batch before any step (inference: no dropout; z_n in our NHWC order, the logit slots
left out, then the factored-out maps level by level) and the losses of the first two steps, which the conv net takes
without dropout (the two sides draw different masks) and with its BatchNorm on the batch, as ours does.
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


def load_npy(directory, name):
    return torch.from_numpy(np.load(os.path.join(directory, name + ".npy")))


def optimizer_for(name, params, lr):
    if name == "adamax":
        return torch.optim.Adamax(params, lr=lr, betas=(0.9, 0.999), eps=1e-8)
    return torch.optim.Adam(params, lr=lr, betas=(0.9, 0.999), eps=1e-8)


class DenseFiRevNet(nn.Module):
    """The dense fiRevNet with our weights: blocks of (permute, additive coupling), then the elementwise scale."""

    def __init__(self, directory, dim, blocks, hidden, hidden_layers):
        super().__init__()
        self.half = dim // 2
        self.perms = [load_npy(directory, f"perm{k}").long() for k in range(blocks)]
        self.nets = nn.ModuleList()
        for k in range(blocks):
            sizes = [self.half] + [hidden] * hidden_layers + [dim - self.half]
            layers = []
            for i in range(len(sizes) - 1):
                linear = nn.Linear(sizes[i], sizes[i + 1])
                with torch.no_grad():
                    linear.weight.copy_(load_npy(directory, f"block{k}_w{i}").t())
                    linear.bias.copy_(load_npy(directory, f"block{k}_b{i}"))
                layers.append(linear)
                if i + 2 < len(sizes):
                    layers.append(nn.ReLU())
            self.nets.append(nn.Sequential(*layers))
        self.log_scale = nn.Parameter(load_npy(directory, "log_scale").clone())

    def forward(self, x):
        h = x
        for perm, net in zip(self.perms, self.nets):
            h = h[:, perm]
            a, b = h[:, :self.half], h[:, self.half:]
            h = torch.cat([a, b + net(a)], 1)
        return h * torch.exp(self.log_scale), self.log_scale.sum().expand(x.shape[0])


def dense_step_fn(directory, dim, classes, blocks, hidden, hidden_layers, optimizer, lr):
    model = DenseFiRevNet(directory, dim, blocks, hidden, hidden_layers)
    x, labels = load_npy(directory, "x"), load_npy(directory, "labels").long()
    opt = optimizer_for(optimizer, model.parameters(), lr)

    def step():
        z, _ = model(x)
        loss = F.cross_entropy(z[:, :classes], labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item()

    with torch.no_grad():
        z, _ = model(x)
    zs, zn = z[:, :classes], z[:, classes:]
    losses = [step(), step()]
    step.parameters = sum(p.numel() for p in model.parameters())
    step.check = {"zs": zs.flatten().tolist(), "zn": zn.flatten().tolist(), "losses": losses}
    return step


def squeeze(x):
    """[b, c, h, w] -> [b, 4c, h/2, w/2] with out[:, (2di + dj) c + k, i, j] = x[:, k, 2i + di, 2j + dj]."""
    b, c, h, w = x.shape
    return x.view(b, c, h // 2, 2, w // 2, 2).permute(0, 3, 5, 1, 2, 4).reshape(b, 4 * c, h // 2, w // 2)


class ActNorm(nn.Module):
    """Per-channel (x + b) * exp(logs) with our initialised b and logs."""

    def __init__(self, directory, prefix):
        super().__init__()
        self.b = nn.Parameter(load_npy(directory, prefix + "b").clone())
        self.logs = nn.Parameter(load_npy(directory, prefix + "logs").clone())

    def forward(self, x):
        return (x + self.b.view(1, -1, 1, 1)) * torch.exp(self.logs).view(1, -1, 1, 1)


class CouplingNet(nn.Module):
    """The reference's `NN`: conv3x3 + ActNorm, ReLU, conv1x1 + ActNorm, ReLU, dropout, conv3x3 x exp(3 logs)."""

    def __init__(self, directory, prefix, dropout):
        super().__init__()
        self.w0 = nn.Parameter(load_npy(directory, prefix + "conv0").permute(3, 2, 0, 1).contiguous())
        self.norm0 = ActNorm(directory, prefix + "actnorm0_")
        w1 = load_npy(directory, prefix + "conv1")
        self.w1 = nn.Parameter(w1.t().contiguous().view(w1.shape[1], w1.shape[0], 1, 1))
        self.norm1 = ActNorm(directory, prefix + "actnorm1_")
        self.w2 = nn.Parameter(load_npy(directory, prefix + "conv2").permute(3, 2, 0, 1).contiguous())
        self.b2 = nn.Parameter(load_npy(directory, prefix + "bias2").clone())
        self.logs2 = nn.Parameter(load_npy(directory, prefix + "logs2").clone())
        self.dropout = dropout

    def forward(self, x, dropout):
        h = F.relu(self.norm0(F.conv2d(x, self.w0, padding=1)))
        h = F.relu(self.norm1(F.conv2d(h, self.w1)))
        h = F.dropout(h, self.dropout, training=dropout)
        return F.conv2d(h, self.w2, self.b2, padding=1) * torch.exp(3 * self.logs2).view(1, -1, 1, 1)


class ConvFiRevNet(nn.Module):
    """The convolutional fiRevNet with our weights: levels of [squeeze, steps x (ActNorm, flip, coupling)], splits."""

    def __init__(self, directory, levels, steps, dropout):
        super().__init__()
        self.levels = levels
        self.norms, self.nets = nn.ModuleList(), nn.ModuleList()
        for level in range(levels):
            for k in range(steps):
                prefix = f"level{level}_step{k}_"
                self.norms.append(ActNorm(directory, prefix + "actnorm_"))
                self.nets.append(CouplingNet(directory, prefix + "coupling_nn_", dropout))
        self.steps = steps

    def forward(self, x, dropout):
        """x [b, c, h, w] -> final map, factored-out maps (level order), log-det [b]."""
        h, logdet, factored = x, torch.zeros(x.shape[0]), []
        for level in range(self.levels):
            h = squeeze(h)
            for k in range(self.steps):
                norm, net = self.norms[level * self.steps + k], self.nets[level * self.steps + k]
                h = norm(h)
                logdet = logdet + h.shape[2] * h.shape[3] * norm.logs.sum()
                h = torch.flip(h, [1])
                half = h.shape[1] // 2
                x1, x2 = h[:, :half], h[:, half:]
                h = torch.cat([x1, x2 + net(x1, dropout)], 1)
            if level + 1 < self.levels:
                kept = h.shape[1] // 2
                factored.append(h[:, kept:])
                h = h[:, :kept]
        return h, factored, logdet


def conv_step_fn(directory, levels, steps, classes, dropout, lr):
    model = ConvFiRevNet(directory, levels, steps, dropout)
    bn = nn.BatchNorm1d(classes, eps=1e-5, momentum=0.9)
    with torch.no_grad():
        bn.weight.copy_(load_npy(directory, "bn_gamma"))
        bn.bias.copy_(load_npy(directory, "bn_beta"))
        bn.running_mean.copy_(load_npy(directory, "bn_mean"))
        bn.running_var.copy_(load_npy(directory, "bn_var"))
    bn.train()
    x = load_npy(directory, "x").permute(0, 3, 1, 2).contiguous()
    labels = load_npy(directory, "labels").long()
    opt = torch.optim.Adamax(list(model.parameters()) + list(bn.parameters()), lr=lr, betas=(0.9, 0.999), eps=1e-8)

    def train(dropout):
        final, _, _ = model(x, dropout)
        p = final.shape[2] // 2
        loss = F.cross_entropy(bn(final[:, :classes, p, p]), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item()

    def step():
        train(True)

    with torch.no_grad():
        final, factored, _ = model(x, False)
        b, s = final.shape[0], final.shape[2]
        flat = final.permute(0, 2, 3, 1).reshape(b, -1)
        offset = (s // 2 * s + s // 2) * final.shape[1]
        zs = flat[:, offset:offset + classes]
        zn = torch.cat([flat[:, :offset], flat[:, offset + classes:]] +
                       [f.permute(0, 2, 3, 1).reshape(b, -1) for f in factored], 1)
    losses = [train(False), train(False)]
    step.parameters = sum(p.numel() for p in model.parameters()) + sum(p.numel() for p in bn.parameters())
    step.check = {"zs": zs.flatten().tolist(), "zn": zn.flatten().tolist(), "losses": losses}
    return step


# Keyed as bench/harness/names.ts names the entries; `args` from the bench give the sizes, the optimizer and the files.
BUILDERS = {
    "firevnet-dense-196": dense_step_fn,
    "firevnet-dense-100": dense_step_fn,
    "firevnet-conv-32": conv_step_fn,
}

"""PyTorch reference of the bench's `pose` group (Schneider2023 Ch. 5; Speed), served by
bench/torch_reference.py's worker (which merges BUILDERS and speaks the protocol), so it runs in its process with its
environment (OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset, one BLAS thread):

- `pose-step`: one training step of lib/models/pose_net.ts `PoseNet` in NCHW, float32, on our weights: four stages of
  16, 32, 64, 64 channels (strides 2, 2, 2, 1), `convs_per_stage` bias-free 3x3 convolutions each (the first carries
  the stride) with TensorFlow's "same" padding (stride 2: 0 before, 1 after; stride 1: 1 each side), BatchNorm2d
  (eps 1e-5, momentum 0.1) in training mode, ReLU; the head ConvTranspose2d(64, 3K, 3, stride 2) cropped to its
  first 16x16 outputs (TF's "same" transposed convolution), scores = channels 0..K-1, locref = K..3K-1. The loss is
  DeepLabCut's as lib/train/pose_loss.ts computes it: the mean sigmoid cross-entropy of the scores plus 0.05 times
  the Huber loss (k 1) of locref summed over the mask and divided by its non-zero count; Adam (lr 1e-3, betas 0.9,
  0.999, eps 1e-8); the loss read back. tests/models/pose_net_test.ts checks the same module layout (in float64)
  against ours.

The check: scores and locref of the batch in eval mode (the initial running statistics) before any step, and the
losses of the first two steps.
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

STAGE_CHANNELS = [16, 32, 64, 64]
STAGE_STRIDES = [2, 2, 2, 1]


def load_npy(directory, name):
    return torch.from_numpy(np.load(os.path.join(directory, name.replace("/", "_") + ".npy")))


class PoseNet(nn.Module):
    """The pose network with our weights (conv kernels [k, k, in, out] -> [out, in, k, k]; the transposed head's
    [k, k, out, in] -> [in, out, k, k], no flip) and running statistics."""

    def __init__(self, directory, keypoints, convs_per_stage):
        super().__init__()
        self.keypoints = keypoints
        self.convs, self.norms, self.strides = nn.ModuleList(), nn.ModuleList(), []
        inputs = 3
        with torch.no_grad():
            for stage, (outputs, stride) in enumerate(zip(STAGE_CHANNELS, STAGE_STRIDES)):
                for c in range(convs_per_stage):
                    key = f"stage{stage}/conv{c}"
                    conv = nn.Conv2d(inputs, outputs, 3, stride=stride if c == 0 else 1, padding=0, bias=False)
                    conv.weight.copy_(load_npy(directory, f"{key}/w").permute(3, 2, 0, 1))
                    norm = nn.BatchNorm2d(outputs, eps=1e-5, momentum=0.1)
                    norm.weight.copy_(load_npy(directory, f"{key}/gamma"))
                    norm.bias.copy_(load_npy(directory, f"{key}/beta"))
                    norm.running_mean.copy_(load_npy(directory, f"{key}/mean"))
                    norm.running_var.copy_(load_npy(directory, f"{key}/var"))
                    self.convs.append(conv)
                    self.norms.append(norm)
                    self.strides.append(conv.stride[0])
                    inputs = outputs
            self.head = nn.ConvTranspose2d(inputs, 3 * keypoints, 3, stride=2, padding=0)
            self.head.weight.copy_(load_npy(directory, "head/w").permute(3, 2, 0, 1))
            self.head.bias.copy_(load_npy(directory, "head/b"))

    def forward(self, x):
        for conv, norm, stride in zip(self.convs, self.norms, self.strides):
            x = F.pad(x, (0, 1, 0, 1)) if stride == 2 else F.pad(x, (1, 1, 1, 1))
            x = F.relu(norm(conv(x)))
        side = 2 * x.shape[2]
        out = self.head(x)[:, :, :side, :side]
        return out[:, :self.keypoints], out[:, self.keypoints:]


def pose_loss(scores, locref, scmap, locref_target, mask, weight):
    """lib/train/pose_loss.ts `poseLoss`: TF1's SUM_BY_NONZERO_WEIGHTS for both terms."""
    score = F.binary_cross_entropy_with_logits(scores, scmap)
    huber = F.huber_loss(locref, locref_target, reduction="none", delta=1.0)
    return score + weight * (huber * mask).sum() / torch.clamp((mask != 0).sum(), min=1)


def pose_step_fn(directory, keypoints, convs_per_stage, lr, locref_weight):
    model = PoseNet(directory, keypoints, convs_per_stage)
    nchw = lambda name: load_npy(directory, name).permute(0, 3, 1, 2).contiguous()
    x, scmap, locref_target, mask = nchw("x"), nchw("target_scmap"), nchw("target_locref"), nchw("target_mask")
    opt = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.999), eps=1e-8)

    def step():
        model.train()
        scores, locref = model(x)
        loss = pose_loss(scores, locref, scmap, locref_target, mask, locref_weight)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item()

    model.eval()
    with torch.no_grad():
        scores, locref = model(x)
    nhwc = lambda t: t.permute(0, 2, 3, 1).flatten().tolist()
    check = {"scores": nhwc(scores), "locref": nhwc(locref)}
    check["losses"] = [step(), step()]
    step.parameters = sum(p.numel() for p in model.parameters())
    step.check = check
    return step


# Keyed as bench/harness/names.ts names the entries; `args` from the bench give the sizes, the rate and the files.
BUILDERS = {
    "pose-step": pose_step_fn,
}

"""PyTorch reference worker for `deno task bench`: the bench's models and training
steps on the CPU with a fixed number of threads, driven over stdin/stdout so
one process serves every round (interpreter and torch start-up are never timed).

Protocol: one JSON object per line each way. On start the worker prints
{"ready": true, "torch": ..., "threads": ..., "blas": {...}, "numpy": {...}}; then per request
  {"op": "build", "model": name, "args": {...}} -> {"ok": true, "parameters": n, "check": ...}
  {"op": "time", "model": name, "steps": n}     -> {"times_ms": [...], "minor_faults": ...}
  {"op": "gemm", "n": 512, "repeats": 7}        -> {"gflops": ..., "cpu_per_wall": ...}
  {"op": "dispose", "model": name}              -> {"ok": true}
and exits at end of input. Errors come back as {"error": "..."}. `args` (optional) go to the model's
builder; `check` is present for the NumPy data-path entries of bench/numpy_reference.py, which this
worker serves too, so that they run in the same process with the same environment, and for the ABS
and test-time adaptation entries, whose builders load our weights from .npy files and return their
first result to compare; the `cebra` group's builders live in bench/cebra_reference.py, the `vae-pca`
group's in bench/vae_pca_reference.py, the `firevnet` group's in bench/firevnet_reference.py, the `pose` group's in
bench/pose_reference.py.

usage: /usr/bin/python3 bench/torch_reference.py --threads 1
"""
import argparse
import ctypes
import json
import os
import re
import resource
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import cebra_reference
import firevnet_reference
import vae_pca_reference
import numpy_reference
import pose_reference

LATENTS = 10
FACTORS = 5  # outputs of the generalization benchmark's regressors

# ABS (Schott et al. 2019, App. A.7), as lib/models/abs_vae.ts and lib/models/abs_cnn.ts: (kernel, stride, maps).
ABS_DECODER = [(4, 1, 32), (5, 2, 16), (5, 2, 16), (4, 1, 1)]
ABS_CNN_LAYERS = [(5, 1, 20), (4, 2, 70), (3, 2, 256), (5, 1, 10)]
ABS_LATENTS = 8
ABS_PIXELS = 28 * 28
BN_EPSILON = 1e-5

# Test-time adaptation entries, as bench/groups/tta.ts: Tent and the training step at batch 128 (SGD, momentum
# 0.9), the forwards at batch 256, the prior of BayesianBatchNorm from N source and n target images.
TTA_LR = 1e-3
TTA_MOMENTUM = 0.9


def conv_encoder(size, head=2 * LATENTS):
    """The conv encoder body and FC 256 with a linear head of `head` outputs (mean and log-variance, or factors)."""
    plan = [32, 32, 64, 64] if size == 64 else [32, 64, 64]
    layers, inputs = [], 1
    for outputs in plan:
        # TensorFlow "same" with a 4x4 kernel and stride 2 pads 1 on each side.
        layers += [nn.Conv2d(inputs, outputs, 4, 2, 1), nn.ReLU()]
        inputs = outputs
    return nn.Sequential(*layers, nn.Flatten(), nn.Linear(4 * 4 * inputs, 256), nn.ReLU(), nn.Linear(256, head))


def conv_decoder(size):
    # Up-convolutions to 64, 32, 32, 1 channels (64x64) or 64, 32, 1 (32x32), as lib/models/dislib_vae.ts.
    plan = [64, 32, 32, 1] if size == 64 else [64, 32, 1]
    layers, inputs = [], 64
    for i, outputs in enumerate(plan):
        layers.append(nn.ConvTranspose2d(inputs, outputs, 4, 2, 1))
        if i + 1 < len(plan):
            layers.append(nn.ReLU())
        inputs = outputs
    return nn.Sequential(nn.Linear(LATENTS, 256), nn.ReLU(), nn.Linear(256, 4 * 4 * 64), nn.ReLU(),
                         nn.Unflatten(1, (64, 4, 4)), *layers)


def mlp_encoder(pixels):
    return nn.Sequential(nn.Flatten(), nn.Linear(pixels, 1200), nn.ReLU(), nn.Linear(1200, 1200), nn.ReLU(),
                         nn.Linear(1200, 2 * LATENTS))


def mlp_decoder(size):
    return nn.Sequential(nn.Linear(LATENTS, 1200), nn.Tanh(), nn.Linear(1200, 1200), nn.Tanh(),
                         nn.Linear(1200, 1200), nn.Tanh(), nn.Linear(1200, size * size), nn.Unflatten(1, (1, size, size)))


def mnist_cnn():
    return nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(32, 64, 3, padding=1),
                         nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(7 * 7 * 64, 128), nn.ReLU(),
                         nn.Linear(128, 10))


def mlp_regressor(pixels):
    """lib/models/regressors.ts's MLP: 90-90-90-90-45 ReLU, linear output."""
    layers, inputs = [nn.Flatten()], pixels
    for outputs in [90, 90, 90, 90, 45]:
        layers += [nn.Linear(inputs, outputs), nn.ReLU()]
        inputs = outputs
    return nn.Sequential(*layers, nn.Linear(inputs, FACTORS))


def optimizer_step(optimizer, loss):
    """One step on `loss` as a training loop takes it: clear the gradients, backward, step, read the loss back."""
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


def parameter_count(*modules):
    return sum(p.numel() for module in modules for p in module.parameters())


def vae_step_fn(encoder, decoder, size):
    """β-VAE (β = 1) step with a Bernoulli decoder, the loss lib/train/vae_objectives.ts trains with."""
    optimizer = torch.optim.Adam(list(encoder.parameters()) + list(decoder.parameters()), lr=1e-4)
    x = (torch.rand(64, 1, size, size) < 0.2).float()

    def step():
        mean, log_var = encoder(x).chunk(2, dim=1)
        z = mean + torch.exp(0.5 * log_var) * torch.randn_like(mean)
        reconstruction = F.binary_cross_entropy_with_logits(decoder(z), x, reduction="sum") / x.shape[0]
        kl = 0.5 * (mean.pow(2) + log_var.exp() - log_var - 1).sum() / x.shape[0]
        optimizer_step(optimizer, reconstruction + kl)

    step.parameters = parameter_count(encoder, decoder)
    return step


def classifier_step_fn():
    model = mnist_cnn()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    images, labels = torch.rand(128, 1, 28, 28), torch.randint(0, 10, (128,))

    def step():
        optimizer_step(optimizer, F.cross_entropy(model(images), labels))

    step.parameters = parameter_count(model)
    return step


def inference_step_fn():
    encoder = conv_encoder(64)
    x = (torch.rand(256, 1, 64, 64) < 0.2).float()

    def step():
        with torch.no_grad():
            encoder(x)

    step.parameters = parameter_count(encoder)
    return step


def regression_step_fn(model):
    """One Adam 5e-4 step of the generalization benchmark's MSE, sum over factors / batch (Schott2022 App. H.3)."""
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-4)
    x, y = (torch.rand(64, 1, 32, 32) < 0.2).float(), torch.rand(64, FACTORS)

    def step():
        optimizer_step(optimizer, (model(x) - y).pow(2).sum() / x.shape[0])

    step.parameters = parameter_count(model)
    return step


def load_npy(directory, name):
    """A tensor the bench wrote as `<directory>/<name>.npy`."""
    return torch.from_numpy(np.load(os.path.join(directory, name + ".npy")))


def conv_bn_stack(directory, prefix, inputs, layers, transposed):
    """lib/models/conv_bn.ts `convBnStack` with our weights, in eval mode: conv -> BatchNorm -> ELU on all but the last
    layer, valid padding. Our filters are [k, k, in, out] (conv2d) and [k, k, out, in] (conv2dTranspose); torch's are
    [out, in, k, k] and [in, out, k, k], the same permutation of axes."""
    modules = []
    for i, (kernel, stride, maps) in enumerate(layers):
        key = f"{prefix}{i}"
        conv = (nn.ConvTranspose2d if transposed else nn.Conv2d)(inputs, maps, kernel, stride)
        with torch.no_grad():
            conv.weight.copy_(load_npy(directory, f"{key}_w").permute(3, 2, 0, 1))
            conv.bias.copy_(load_npy(directory, f"{key}_b"))
        modules.append(conv)
        if i + 1 < len(layers):
            bn = nn.BatchNorm2d(maps, eps=BN_EPSILON)
            with torch.no_grad():
                bn.weight.copy_(load_npy(directory, f"{key}_gamma"))
                bn.bias.copy_(load_npy(directory, f"{key}_beta"))
                bn.running_mean.copy_(load_npy(directory, f"{key}_mean"))
                bn.running_var.copy_(load_npy(directory, f"{key}_var"))
            modules += [bn, nn.ELU()]
        inputs = maps
    return nn.Sequential(*modules).eval()


def folded_decoder(decoder):
    """An eval-mode decoder with each BatchNorm folded into its transposed convolution, as lib/models/abs.ts
    `classGenerator`: [(weight, bias, stride)] per layer."""
    layers, modules = [], list(decoder)
    for i, module in enumerate(modules):
        if not isinstance(module, nn.ConvTranspose2d):
            continue
        w, b = module.weight.detach().clone(), module.bias.detach().clone()
        bn = modules[i + 1] if i + 1 < len(modules) and isinstance(modules[i + 1], nn.BatchNorm2d) else None
        if bn is not None:
            scale = bn.weight.detach() / torch.sqrt(bn.running_var + bn.eps)
            w = w * scale.view(1, -1, 1, 1)
            b = (b - bn.running_mean) * scale + bn.bias.detach()
        layers.append((w, b, module.stride))
    return layers


def generate(layers, z):
    """G(z): latents [m, 8] -> pixel means [m, 784] through folded layers, ELU between, sigmoid last."""
    h = z.reshape(z.shape[0], ABS_LATENTS, 1, 1)
    for i, (w, b, stride) in enumerate(layers):
        h = F.conv_transpose2d(h, w, b, stride)
        h = F.elu(h) if i + 1 < len(layers) else torch.sigmoid(h)
    return h.reshape(z.shape[0], ABS_PIXELS)


def abs_inference_step_fn(directory, classes, steps, lr, radius):
    """ABS logits (lib/models/abs.ts `Abs.logits`, `#search` with the prior): per class the best cached prototype by
    ||G||^2 + 1/2||z||^2 - 2x.G (||x||^2 is the same for all), then `steps` Adam steps on the sum over digits and
    classes of (||x - G_c(z)||^2 + 1/2||z||^2)/784, each followed by the projection into the ball of `radius`;
    logits -(||x - G_c(z*)||^2 + 1/2||z*||^2)/784 [n, classes]."""
    decoders = [conv_bn_stack(directory, f"class{c}_dec", ABS_LATENTS, ABS_DECODER, True) for c in range(classes)]
    generators = [folded_decoder(d) for d in decoders]
    prototypes = load_npy(directory, "prototypes")
    x = load_npy(directory, "x").reshape(-1, ABS_PIXELS)
    with torch.no_grad():
        images = [generate(g, prototypes) for g in generators]
        constants = [(image * image).sum(1) + 0.5 * (prototypes * prototypes).sum(1) for image in images]

    def logits():
        with torch.no_grad():
            z = torch.stack([prototypes[torch.argmin(constants[c] - 2 * (x @ images[c].t()), dim=1)]
                             for c in range(classes)])
        z.requires_grad_()
        optimizer = torch.optim.Adam([z], lr=lr)
        for _ in range(steps):
            loss = sum(((generate(g, z[c]) - x) ** 2).sum() + 0.5 * (z[c] ** 2).sum()
                       for c, g in enumerate(generators)) / ABS_PIXELS
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            with torch.no_grad():
                norm = z.norm(dim=-1, keepdim=True)
                z.mul_(torch.clamp(radius / norm.clamp_min(1e-30), max=1))
        with torch.no_grad():
            losses = [(((generate(g, z[c]) - x) ** 2).sum(1) + 0.5 * (z[c] ** 2).sum(1)) / ABS_PIXELS
                      for c, g in enumerate(generators)]
            return -torch.stack(losses, 1)

    def step():
        logits().numpy()

    step.parameters = parameter_count(*decoders)
    step.check = {"values": logits().flatten().tolist()}
    return step


def abs_cnn_gradient_step_fn(directory):
    """The gradient of the summed cross-entropy with respect to the input through the App. A.7 CNN in eval mode
    (lib/attacks/attack.ts `lossGradient` with `crossEntropy`), by autograd."""
    model = conv_bn_stack(directory, "conv", 1, ABS_CNN_LAYERS, False)
    x = load_npy(directory, "x").permute(0, 3, 1, 2).contiguous()
    labels = load_npy(directory, "labels").long()

    def gradient():
        inputs = x.detach().requires_grad_()
        loss = F.cross_entropy(model(inputs).flatten(1), labels, reduction="sum")
        return torch.autograd.grad(loss, inputs)[0]

    def step():
        gradient().numpy()

    step.parameters = parameter_count(model)
    step.check = {"values": gradient().permute(0, 2, 3, 1).flatten().tolist()}
    return step


def bn_cnn():
    """lib/models/bn_cnn.ts `bnCnn({norm: "batch"})`: the MNIST CNN above (lib/models/small_cnn.ts) with a
    BatchNorm2d (eps 1e-5, momentum 0.1) after each convolution, before its ReLU."""
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32, eps=BN_EPSILON), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64, eps=BN_EPSILON), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(7 * 7 * 64, 128), nn.ReLU(), nn.Linear(128, 10))


def load_bn_cnn(directory):
    """`bn_cnn()` with our weights and source statistics. Our convolution filters are [k, k, in, out] (torch: [out, in,
    k, k]); our flatten runs over (h, w, c) and torch's over (c, h, w), so fc0's input rows are reordered to match."""
    model = bn_cnn()
    convs = [m for m in model if isinstance(m, nn.Conv2d)]
    norms = [m for m in model if isinstance(m, nn.BatchNorm2d)]
    fc0, fc1 = [m for m in model if isinstance(m, nn.Linear)]
    with torch.no_grad():
        for i, (conv, bn) in enumerate(zip(convs, norms)):
            conv.weight.copy_(load_npy(directory, f"conv{i}_w").permute(3, 2, 0, 1))
            conv.bias.copy_(load_npy(directory, f"conv{i}_b"))
            bn.weight.copy_(load_npy(directory, f"bn{i}_gamma"))
            bn.bias.copy_(load_npy(directory, f"bn{i}_beta"))
            bn.running_mean.copy_(load_npy(directory, f"bn{i}_mean"))
            bn.running_var.copy_(load_npy(directory, f"bn{i}_var"))
        fc0.weight.copy_(load_npy(directory, "fc0_w").reshape(7, 7, 64, 128).permute(3, 2, 0, 1).reshape(128, -1))
        fc0.bias.copy_(load_npy(directory, "fc0_b"))
        fc1.weight.copy_(load_npy(directory, "fc1_w").t())
        fc1.bias.copy_(load_npy(directory, "fc1_b"))
    return model


def bn_cnn_inputs(directory):
    """The batch the bench wrote, [b, 28, 28, 1] as NCHW, and its int32 classes when present."""
    x = load_npy(directory, "x").permute(0, 3, 1, 2).contiguous()
    labels = load_npy(directory, "labels").long() if os.path.exists(os.path.join(directory, "labels.npy")) else None
    return x, labels


def one_dimensional_parameters(model):
    """Biases and BN affine parameters in our key order (conv0/b, bn0/gamma, bn0/beta, conv1/b, bn1/…, fc0/b, fc1/b):
    their layout is the same on both sides, so their updates compare value by value."""
    tensors = []
    for module in model:
        if isinstance(module, nn.BatchNorm2d):
            tensors += [module.weight, module.bias]
        elif isinstance(module, (nn.Conv2d, nn.Linear)):
            tensors.append(module.bias)
    return tensors


def flat(tensors):
    return torch.cat([t.detach().flatten() for t in tensors]).tolist()


def softmax_entropy(x):
    """DequanWang/tent `softmax_entropy`."""
    return -(x.softmax(1) * x.log_softmax(1)).sum(1)


def tent_step_fn(directory):
    """One Tent step (DequanWang/tent `configure_model`, `collect_params`, `forward_and_adapt`): train mode, BN on the
    batch's own statistics with no running statistics, only the BN affine parameters require grad; the mean softmax
    entropy, one SGD momentum 0.9 step; returns the logits of that forward (the predictions)."""
    model = load_bn_cnn(directory)
    x, _ = bn_cnn_inputs(directory)
    model.train()
    model.requires_grad_(False)
    params = []
    for module in model.modules():
        if isinstance(module, nn.BatchNorm2d):
            module.requires_grad_(True)
            module.track_running_stats = False
            module.running_mean = None
            module.running_var = None
            params += [module.weight, module.bias]
    optimizer = torch.optim.SGD(params, lr=TTA_LR, momentum=TTA_MOMENTUM)

    def adapt():
        outputs = model(x)
        loss = softmax_entropy(outputs).mean(0)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return outputs.detach()

    def step():
        adapt().numpy()

    before = torch.tensor(flat(params))
    logits = adapt()
    step.parameters = parameter_count(model)
    step.check = {"logits": logits.flatten().tolist(), "affine_update": (torch.tensor(flat(params)) - before).tolist()}
    return step


def bn_cnn_train_step_fn(directory):
    """A plain training step of the same network: train mode (batch statistics normalise, running statistics move),
    cross-entropy, every parameter, SGD momentum 0.9."""
    model = load_bn_cnn(directory)
    x, labels = bn_cnn_inputs(directory)
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=TTA_LR, momentum=TTA_MOMENTUM)

    def train():
        logits = model(x)
        optimizer_step(optimizer, F.cross_entropy(logits, labels))
        return logits.detach()

    before = torch.tensor(flat(one_dimensional_parameters(model)))
    logits = train()
    step = train
    step.parameters = parameter_count(model)
    step.check = {
        "logits": logits.flatten().tolist(),
        "bias_affine_update": (torch.tensor(flat(one_dimensional_parameters(model))) - before).tolist(),
        "running_stats": flat([t for m in model if isinstance(m, nn.BatchNorm2d) for t in (m.running_mean,
                                                                                            m.running_var)]),
    }
    return step


class BayesianBatchNorm(nn.Module):
    """bethgelab/robustness `robusta/batchnorm/bn.py` BayesianBatchNorm, applied to each run of n images of the batch
    in one pass: the reference normalises each batch of n it is given by prior * source + (1 - prior) * that batch's
    statistics (a BatchNorm2d with momentum 1: mean and unbiased variance over n·h·w values per channel), with the
    source layer's weight, bias and eps. When n does not divide the batch, the last b mod n images form a run of their
    own (a DataLoader's last short batch)."""

    def __init__(self, layer, prior, n):
        assert 0 <= prior <= 1
        super().__init__()
        self.layer = layer.eval()
        self.prior = prior
        self.n = n

    def normalize(self, part, size):
        channels, height, width = part.shape[1:]
        runs = part.reshape(-1, size, channels, height, width)
        var, mean = torch.var_mean(runs, dim=(1, 3, 4), unbiased=True)
        mean = self.prior * self.layer.running_mean + (1 - self.prior) * mean
        var = self.prior * self.layer.running_var + (1 - self.prior) * var
        scale = self.layer.weight / torch.sqrt(var + self.layer.eps)
        shift = self.layer.bias - mean * scale
        return (runs * scale[:, None, :, None, None] + shift[:, None, :, None, None]).reshape(part.shape)

    def forward(self, x):
        full = x.shape[0] // self.n * self.n
        parts = ([self.normalize(x[:full], self.n)] if full else []) + \
            ([self.normalize(x[full:], x.shape[0] - full)] if full < x.shape[0] else [])
        return parts[0] if len(parts) == 1 else torch.cat(parts)


def forward_step_fn(directory, prior=None, n=None):
    """Eval-mode logits of the batch without gradient: on the source statistics, or with every BatchNorm2d wrapped in
    BayesianBatchNorm (prior = N / (N + n), runs of n images)."""
    model = load_bn_cnn(directory).eval()
    x, _ = bn_cnn_inputs(directory)
    if prior is not None:
        model = nn.Sequential(*[BayesianBatchNorm(m, prior, n) if isinstance(m, nn.BatchNorm2d) else m
                                for m in model]).eval()

    def forward():
        with torch.no_grad():
            return model(x)

    def step():
        forward().numpy()

    step.parameters = parameter_count(model)
    step.check = {"logits": forward().flatten().tolist()}
    return step


BUILDERS = {
    "conv-vae-64": lambda: vae_step_fn(conv_encoder(64), conv_decoder(64), 64),
    "conv-vae-32": lambda: vae_step_fn(conv_encoder(32), conv_decoder(32), 32),
    "mlp-vae-64": lambda: vae_step_fn(mlp_encoder(64 * 64), mlp_decoder(64), 64),
    # The 2-worker entries pair with the same one-thread step.
    "conv-vae-64-dp2": lambda: vae_step_fn(conv_encoder(64), conv_decoder(64), 64),
    "conv-vae-32-dp2": lambda: vae_step_fn(conv_encoder(32), conv_decoder(32), 32),
    "mlp-vae-64-dp2": lambda: vae_step_fn(mlp_encoder(64 * 64), mlp_decoder(64), 64),
    "mnist-cnn": classifier_step_fn,
    "conv-encoder-infer": inference_step_fn,
    "cnn-regressor-32": lambda: regression_step_fn(conv_encoder(32, FACTORS)),
    "mlp-regressor-32": lambda: regression_step_fn(mlp_regressor(32 * 32)),
    # The 2-worker supervised entries pair with the same steps (on 1 thread, and on 2 in the threaded worker).
    "mnist-cnn-dp2": classifier_step_fn,
    "cnn-regressor-32-dp2": lambda: regression_step_fn(conv_encoder(32, FACTORS)),
    "abs-inference": abs_inference_step_fn,
    "abs-cnn-input-grad": abs_cnn_gradient_step_fn,
    "tent-step-128": tent_step_fn,
    "bncnn-train-step-128": bn_cnn_train_step_fn,
    "prior-forward-n1": forward_step_fn,
    "source-forward": forward_step_fn,
    **numpy_reference.BUILDERS,
    **cebra_reference.BUILDERS,
    **vae_pca_reference.BUILDERS,
    **firevnet_reference.BUILDERS,
    **pose_reference.BUILDERS,
}


def loaded_libraries():
    """Shared libraries mapped into this process whose names say BLAS, LAPACK, threading or oneDNN."""
    pattern = re.compile(r"blas|lapack|mkl|blis|omp|dnnl|atlas", re.I)
    found = []
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split()[-1] if len(line.split()) >= 6 else ""
                if path.startswith("/") and pattern.search(os.path.basename(path)) and path not in found:
                    found.append(path)
    except OSError:
        pass
    return found


def openblas_details(libraries):
    """OpenBLAS's own account of its build and the core kernel it picked at load (honours OPENBLAS_CORETYPE)."""
    for path in libraries:
        try:
            lib = ctypes.CDLL(path)
            lib.openblas_get_config.restype = ctypes.c_char_p
            lib.openblas_get_corename.restype = ctypes.c_char_p
        except (OSError, AttributeError):
            continue
        return {
            "library": path,
            "config": lib.openblas_get_config().decode(),
            "core": lib.openblas_get_corename().decode(),
            "threads": lib.openblas_get_num_threads(),
        }
    return None


def blas_report():
    """Which BLAS this torch runs: build flags, the libraries actually loaded, and OpenBLAS's core kernel."""
    config = torch.__config__.show()

    def setting(name):
        match = re.search(name + r"=([^,\s]+)", config)
        return match.group(1) if match else None

    capability = re.search(r"CPU capability usage: (\S+)", config)
    libraries = loaded_libraries()
    report = {
        "blas_info": setting("BLAS_INFO"),
        "lapack_info": setting("LAPACK_INFO"),
        "use_mkldnn": setting("USE_MKLDNN"),
        "cpu_capability": capability.group(1) if capability else None,
        "parallel_info": [line.strip() for line in torch.__config__.parallel_info().splitlines() if line.strip()],
        "libraries": libraries,
        "openblas": openblas_details(libraries),
        "env": {key: os.environ.get(key) for key in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OPENBLAS_NUM_THREADS",
                                                     "OMP_NUM_THREADS", "MALLOC_MMAP_THRESHOLD_",
                                                     "MALLOC_TRIM_THRESHOLD_")},
        "threadpoolctl": None,
    }
    try:
        import threadpoolctl
        report["threadpoolctl"] = threadpoolctl.threadpool_info()
    except ImportError:
        pass
    return report


def gemm(n, repeats):
    """Single-precision n×n×n product rate over the fastest of `repeats` runs, and the CPU time per wall second
    it took (1 means one thread): the machine's practical one-thread GEMM limit."""
    a, b = torch.rand(n, n), torch.rand(n, n)
    torch.mm(a, b)
    best, cpu_per_wall = float("inf"), 0.0
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        torch.mm(a, b)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        if wall < best:
            best, cpu_per_wall = wall, cpu / wall
    return {"gflops": 2 * n ** 3 / best / 1e9, "cpu_per_wall": cpu_per_wall}


def time_steps(step, steps):
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        times.append((time.perf_counter() - start) * 1000)
    return times


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    reply = lambda obj: print(json.dumps(obj), flush=True)
    reply({"ready": True, "torch": torch.__version__, "threads": torch.get_num_threads(), "blas": blas_report(),
           "numpy": numpy_reference.numpy_report(openblas_details)})
    steps = {}
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        try:
            op = request["op"]
            if op == "build":
                step = steps[request["model"]] = BUILDERS[request["model"]](**request.get("args", {}))
                reply({"ok": True, "parameters": step.parameters, "check": getattr(step, "check", None)})
            elif op == "time":
                # Minor page faults show whether the allocator hands freed tensors back to the OS between steps.
                faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
                times = time_steps(steps[request["model"]], request["steps"])
                faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
                reply({"times_ms": times, "minor_faults": faults})
            elif op == "gemm":
                reply(gemm(request["n"], request["repeats"]))
            elif op == "dispose":
                steps.pop(request["model"], None)
                reply({"ok": True})
            else:
                reply({"error": f"unknown op {op}"})
        except Exception as error:  # reported to the bench, which decides whether to go on
            reply({"error": f"{type(error).__name__}: {error}"})


if __name__ == "__main__":
    main()

"""References of the bench's `vae-pca` group, served by bench/torch_reference.py's worker (which
merges BUILDERS and speaks the protocol), so they run in its process with its environment (OPENBLAS_CORETYPE and
OPENBLAS_L2_SIZE unset, one BLAS thread):

- `linear-ensemble-30`, `synth-mlp-64`: one Adam step of K independent VAEs batched over a leading member axis as
  lib/models/ensemble.ts `EnsembleVae` computes them: weights [K, in, out] and biases [K, 1, out] loaded from our
  .npy files, each layer one torch.baddbmm (the batched matmul with its bias), tanh between hidden layers; encoder
  head split into mean and log-variance, z = mean + exp(logVar / 2) * noise, per member the batch-mean squared
  reconstruction error summed over inputs plus beta_k * KL (eq. 2.6), summed over members; Adam (0.9, 0.999, eps
  1e-8). A step draws every member's batch of rows from the same training rows as ours (torch.randint) and the
  posterior noise (torch.randn), as lib/train/ensemble_training.ts draws them, then reads the loss back. The check:
  the encoder means of a fixed batch before any step and the losses of two steps on that batch and noise.
- `dto-500x1024x5`: DtO (lib/metrics/dto.ts) of float32 Jacobians [n, outputs, latents] with NumPy and SciPy: the
  Jacobians in float64, J^T J per sample by one batched matmul, numpy.linalg.eigh of the stack, then per sample
  scipy.optimize.linear_sum_assignment on |V| (maximize): DtO_i = sqrt(max(0, 2d - 2 * matched)), and the median
  singular-value gap (s1 - s2) / s1.
- `ds-5000`: the Disentanglement Score (lib/metrics/disentanglement_score.ts) with scikit-learn: per (factor,
  latent) pair a KNeighborsRegressor with its default settings (k 5, uniform weights) fitted on the first
  round(0.8 n) rows of that latent and scored on the rest; A = sqrt(Var w) - sqrt(mse), M = sqrt(Var w).

Each builder returns a step function with `parameters` and `check`, which the bench compares with its own result.
SciPy and scikit-learn are imported by the builders that need them, so the worker starts without them.
"""
import os

import numpy as np
import torch


def load_npy(directory, name):
    return np.load(os.path.join(directory, name + ".npy"))


def versions():
    import scipy
    import sklearn

    return f"NumPy {np.__version__}, SciPy {scipy.__version__}, scikit-learn {sklearn.__version__}"


def ensemble_step_fn(directory, members, batch, inputs, latents, layers, betas, lr):
    """One training step of the batched ensemble (see the module notes); `layers` per stack, encoder and decoder."""
    params = {}
    for stack in ("enc", "dec"):
        for i in range(layers):
            for kind in ("w", "b"):
                key = f"{stack}_{kind}{i}"
                params[key] = torch.from_numpy(load_npy(directory, key)).clone().requires_grad_()
    data = torch.from_numpy(load_npy(directory, "data"))
    rows = data.shape[1]
    beta = torch.tensor(betas, dtype=torch.float32)
    member = torch.arange(members)[:, None]

    def forward(stack, h):
        for i in range(layers):
            h = torch.baddbmm(params[f"{stack}_b{i}"], h, params[f"{stack}_w{i}"])
            if i + 1 < layers:
                h = torch.tanh(h)
        return h

    def loss_of(x, noise):
        head = forward("enc", x)
        mean, log_var = head[..., :latents], head[..., latents:]
        sd = torch.exp(0.5 * log_var)
        z = mean + sd * noise
        kl = 0.5 * ((mean ** 2 + sd ** 2 - log_var).sum((1, 2)) - batch * latents) / batch
        rec = ((forward("dec", z) - x) ** 2).sum((1, 2)) / batch
        return (rec + beta * kl).sum()

    optimizer = torch.optim.Adam(params.values(), lr=lr, betas=(0.9, 0.999), eps=1e-8)

    def train(x, noise):
        optimizer.zero_grad()
        loss = loss_of(x, noise)
        loss.backward()
        optimizer.step()
        return loss.item()

    def step():
        x = data[member, torch.randint(rows, (members, batch))]
        train(x, torch.randn(members, batch, latents))

    x0, noise0 = torch.from_numpy(load_npy(directory, "x0")), torch.from_numpy(load_npy(directory, "noise0"))
    with torch.no_grad():
        mean = forward("enc", x0)[..., :latents]
    losses = [train(x0, noise0), train(x0, noise0)]
    step.parameters = sum(p.numel() for p in params.values())
    step.check = {"losses": losses, "mean": mean.flatten().tolist()}
    return step


def dto(jac32):
    """DtO per sample and the median singular-value gap of Jacobians [n, rows, cols] (float32 in, float64 inside)."""
    jac = jac32.astype(np.float64)
    gram = np.matmul(jac.transpose(0, 2, 1), jac)
    values, vectors = np.linalg.eigh(gram)
    from scipy.optimize import linear_sum_assignment

    d = jac.shape[2]
    per_sample = np.empty(len(jac))
    for i, v in enumerate(np.abs(vectors)):
        r, c = linear_sum_assignment(v, maximize=True)
        per_sample[i] = np.sqrt(max(0.0, 2 * d - 2 * v[r, c].sum()))
    s = np.sqrt(np.clip(values, 0, None))[:, ::-1]
    if d == 1:
        gap = np.ones(len(s))
    else:
        gap = np.divide(s[:, 0] - s[:, 1], s[:, 0], out=np.zeros(len(s)), where=s[:, 0] > 0)
    return per_sample, float(np.median(gap))


def dto_step_fn(jacobians):
    jac = np.load(jacobians)

    def step():
        dto(jac)

    per_sample, sv_gap = dto(jac)
    step.parameters = 0
    step.check = {"dto": float(per_sample.mean()), "sv_gap": sv_gap, "per_sample": per_sample.tolist(),
                  "library": versions()}
    return step


def ds(codes, factors, k=5, train_fraction=0.8):
    """DS of regression factors with one KNeighborsRegressor per (factor, latent) pair."""
    from sklearn.neighbors import KNeighborsRegressor

    n = len(codes)
    n_fit = int(np.floor(train_fraction * n + 0.5))
    scores = np.zeros((factors.shape[1], codes.shape[1]))
    per_factor = []
    for i in range(factors.shape[1]):
        y_fit, y_test = factors[:n_fit, i], factors[n_fit:, i]
        scale = np.sqrt(y_test.var())
        for j in range(codes.shape[1]):
            model = KNeighborsRegressor(n_neighbors=k).fit(codes[:n_fit, j:j + 1], y_fit)
            scores[i, j] = scale - np.sqrt(np.mean((model.predict(codes[n_fit:, j:j + 1]) - y_test) ** 2))
        best, second = np.sort(scores[i])[::-1][:2]
        per_factor.append((best - second) / scale)
    return float(np.mean(per_factor)), scores


def ds_step_fn(codes, factors):
    codes, factors = np.load(codes), np.load(factors)

    def step():
        ds(codes, factors)

    value, scores = ds(codes, factors)
    step.parameters = 0
    step.check = {"ds": value, "scores": scores.flatten().tolist(), "library": versions()}
    return step


# Keyed as bench/harness/names.ts names the entries; `args` from the bench give the sizes and files.
BUILDERS = {
    "linear-ensemble-30": ensemble_step_fn,
    "synth-mlp-64": ensemble_step_fn,
    "dto-500x1024x5": dto_step_fn,
    "ds-5000": ds_step_fn,
}

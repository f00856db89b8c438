"""NumPy references of the bench's data-path entries, served by bench/torch_reference.py's worker:

- `splits`: dSprites' four benchmark splits (lib/data/splits.ts, Schott2022 Tables 2-3) built with
  broadcast masks and flatnonzero, both parts ascending int32 flat indices as ours;
- `r2-scores`: vectorised R^2 (lib/metrics/r2.ts) of float32 predictions [n, k] against factor
  indices [n, k] of the dSprites grid, with each factor's full-grid variance (n+1)/(12(n-1)).

Each builder returns a step function with `parameters` (0: no network) and `check`, the result of
one run that the bench compares with its own.
"""
import math
import os
import re
import subprocess

import numpy as np

DSPRITES_SIZES = (3, 6, 40, 32, 32)
DSPRITES_XY_INTERPOLATION = [2, 7, 11, 15, 20, 24, 29]
# The listed values of lib/data/splits.ts's SPLIT_VALUES.dsprites, per factor (shape, scale, orientation, x, y).
DSPRITES_SPLIT_VALUES = {
    "interpolation": [[], [1, 4], [2, 7, 12, 17, 22, 27, 32, 37], DSPRITES_XY_INTERPOLATION,
                      DSPRITES_XY_INTERPOLATION],
    "extrapolation": [[], [4, 5], list(range(32, 40)), list(range(25, 32)), list(range(25, 32))],
    "composition": [[], [], list(range(0, 4)), list(range(0, 3)), list(range(0, 3))],
}
RANDOM_TRAIN_FRACTION = 0.3255
SPLIT_NAMES = ("random", "composition", "interpolation", "extrapolation")


def _parts(in_test):
    return np.flatnonzero(~in_test).astype(np.int32), np.flatnonzero(in_test).astype(np.int32)


def listed_split(sizes, listed, listed_is_test):
    """A point is in the listed part when any factor takes a listed value: one boolean grid from broadcast masks."""
    hit = np.zeros(sizes, dtype=bool)
    for j, values in enumerate(listed):
        if values:
            mask = np.zeros(sizes[j], dtype=bool)
            mask[values] = True
            hit |= mask.reshape([sizes[j] if i == j else 1 for i in range(len(sizes))])
    return _parts((hit if listed_is_test else ~hit).ravel())


def random_split(sizes, fraction, seed=0):
    """round(fraction * total) train points without replacement; NumPy's generator, so the same count, not the
    same points as ours (a partial Fisher-Yates on xoshiro128**)."""
    total = math.prod(sizes)
    in_test = np.ones(total, dtype=bool)
    in_test[np.random.default_rng(seed).choice(total, round(fraction * total), replace=False, shuffle=False)] = False
    return _parts(in_test)


def dsprites_splits():
    splits = {"random": random_split(DSPRITES_SIZES, RANDOM_TRAIN_FRACTION)}
    for name, listed in DSPRITES_SPLIT_VALUES.items():
        splits[name] = listed_split(DSPRITES_SIZES, listed, name != "composition")
    return splits


def splits_step_fn():
    def step():
        dsprites_splits()

    splits = dsprites_splits()
    step.parameters = 0
    # Sums of the train indices (exact in int64) tell whether a deterministic split holds the same points.
    step.check = {name: {"train": len(train), "test": len(test), "train_sum": int(train.sum(dtype=np.int64))}
                  for name, (train, test) in splits.items()}
    return step


def r2_scores(pred, factors, sizes):
    """Per-factor R^2 = 1 - MSE / full-grid variance on targets index / (n - 1), in float64 as ours."""
    n = np.asarray(sizes, dtype=np.float64)
    mse = np.square(pred - factors / (n - 1)).mean(axis=0)
    per_factor = 1 - mse / ((n + 1) / (12 * (n - 1)))
    return per_factor.mean(), per_factor, mse


def r2_step_fn(predictions, factors, sizes):
    """R^2 of the predictions and factors the bench wrote as .npy (read here once, untimed)."""
    pred, indices = np.load(predictions), np.load(factors)

    def step():
        r2_scores(pred, indices, sizes)

    r2, per_factor, mse = r2_scores(pred, indices, sizes)
    step.parameters = 0
    step.check = {"r2": float(r2), "per_factor": per_factor.tolist(), "mse": mse.tolist(), "rows": len(pred)}
    return step


def numpy_report(openblas_details):
    """NumPy's version and the BLAS its core module links, resolved to the file and OpenBLAS's own config."""
    try:
        from numpy._core import _multiarray_umath
    except ImportError:  # NumPy < 2
        from numpy.core import _multiarray_umath
    report = {"version": np.__version__, "library": None, "openblas": None}
    try:
        linked = subprocess.run(["ldd", _multiarray_umath.__file__], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return report
    paths = [os.path.realpath(m.group(1)) for m in re.finditer(r"^\s*\S*(?:blas|lapack)\S*\s+=>\s+(\S+)", linked, re.M)]
    if paths:
        report["library"] = paths[0]
        report["openblas"] = openblas_details(paths)
    return report


BUILDERS = {
    "splits": splits_step_fn,
    "r2-scores": r2_step_fn,
}

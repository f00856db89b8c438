"""PyTorch reference timings for `deno task bench`: the same models and steps on
the CPU, with a fixed number of threads. Prints one JSON object to stdout.

usage: python3 bench/torch_reference.py --threads 1 --repeats 10 --warmup 3
"""
import argparse
import json
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def conv_encoder(size, latents=10):
    channels = [32, 32, 64, 64] if size == 64 else [32, 64, 64]
    layers, inputs = [], 1
    for outputs in channels:
        # TensorFlow "same" with a 4x4 kernel and stride 2 pads 1 on each side.
        layers += [nn.Conv2d(inputs, outputs, 4, 2, 1), nn.ReLU()]
        inputs = outputs
    return nn.Sequential(*layers, nn.Flatten(), nn.Linear(4 * 4 * inputs, 256), nn.ReLU(), nn.Linear(256, 2 * latents))


def conv_decoder(size, latents=10):
    # Up-convolutions to 64, 32, 32, 1 channels (64x64) or 64, 32, 1 (32x32), as lib/models/dislib_vae.ts.
    plan = [64, 32, 32, 1] if size == 64 else [64, 32, 1]
    layers, inputs = [], 64
    for i, outputs in enumerate(plan):
        layers.append(nn.ConvTranspose2d(inputs, outputs, 4, 2, 1))
        if i + 1 < len(plan):
            layers.append(nn.ReLU())
        inputs = outputs
    return nn.Sequential(nn.Linear(latents, 256), nn.ReLU(), nn.Linear(256, 4 * 4 * 64), nn.ReLU(),
                         nn.Unflatten(1, (64, 4, 4)), *layers)


def mlp_encoder(pixels, latents=10):
    return nn.Sequential(nn.Flatten(), nn.Linear(pixels, 1200), nn.ReLU(), nn.Linear(1200, 1200), nn.ReLU(),
                         nn.Linear(1200, 2 * latents))


def mlp_decoder(size, latents=10):
    return nn.Sequential(nn.Linear(latents, 1200), nn.Tanh(), nn.Linear(1200, 1200), nn.Tanh(),
                         nn.Linear(1200, 1200), nn.Tanh(), nn.Linear(1200, size * size), nn.Unflatten(1, (1, size, size)))


def vae_step(encoder, decoder, optimizer, x):
    stats = encoder(x)
    mean, log_var = stats.chunk(2, dim=1)
    z = mean + torch.exp(0.5 * log_var) * torch.randn_like(mean)
    logits = decoder(z)
    reconstruction = F.binary_cross_entropy_with_logits(logits, x, reduction="sum") / x.shape[0]
    kl = 0.5 * (mean.pow(2) + log_var.exp() - log_var - 1).sum() / x.shape[0]
    loss = reconstruction + kl
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def mnist_cnn():
    return nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(32, 64, 3, padding=1),
                         nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(7 * 7 * 64, 128), nn.ReLU(),
                         nn.Linear(128, 10))


def time_it(step, warmup, repeats):
    for _ in range(warmup):
        step()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        step()
        times.append((time.perf_counter() - start) * 1000)
    return {"median_ms": statistics.median(times), "min_ms": min(times), "max_ms": max(times)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    results = {}
    for size in (64, 32):
        encoder, decoder = conv_encoder(size), conv_decoder(size)
        optimizer = torch.optim.Adam(list(encoder.parameters()) + list(decoder.parameters()), lr=1e-4)
        x = (torch.rand(64, 1, size, size) < 0.2).float()
        results[f"conv-vae-{size}"] = time_it(lambda: vae_step(encoder, decoder, optimizer, x), args.warmup, args.repeats)
    encoder, decoder = mlp_encoder(64 * 64), mlp_decoder(64)
    optimizer = torch.optim.Adam(list(encoder.parameters()) + list(decoder.parameters()), lr=1e-4)
    x = (torch.rand(64, 1, 64, 64) < 0.2).float()
    results["mlp-vae-64"] = time_it(lambda: vae_step(encoder, decoder, optimizer, x), args.warmup, args.repeats)
    model = mnist_cnn()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    images, labels = torch.rand(128, 1, 28, 28), torch.randint(0, 10, (128,))

    def classifier_step():
        loss = F.cross_entropy(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    results["mnist-cnn"] = time_it(classifier_step, args.warmup, args.repeats)
    encoder = conv_encoder(64)
    x = (torch.rand(256, 1, 64, 64) < 0.2).float()

    def inference():
        with torch.no_grad():
            encoder(x)

    results["conv-encoder-infer"] = time_it(inference, args.warmup, args.repeats)
    print(json.dumps({"torch": torch.__version__, "threads": args.threads, "results": results}))


if __name__ == "__main__":
    main()

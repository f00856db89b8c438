"""NumPy/SciPy/PIL references of the corruptions `deno task bench --corruptions` times (lib/data/mnist_c.ts and
lib/data/corruptions.ts with table `cifar`), image by image as the reference code runs them:

- MNIST-C: google-research/mnist-c `corruptions.py`, each function at its default severity, on uint8 28x28 digits.
- `cifar`: hendrycks/robustness `ImageNet-C/create_c/make_cifar_c.py` at severity 3, on the same 28x28 gray digits:
  its 32-px constants and loop bounds become the image side, and gray images take imagecorruptions' grayscale
  branches where lib/data/corruptions.ts does (brightness adds to the value; snow uses the image as its own gray).

Each corruption returns the reference's float image in 0..255, which the step casts with np.uint8 as the reference
scripts save it. Randomness is the global np.random, seeded once per build, as in the references.

skimage, cv2 and ImageMagick are not installed here; the calls the references make to them are replaced by their
numpy/scipy equivalents (REFERENCE_SUBSTITUTES lists them per corruption, and the bench prints them):

- skimage.filters.gaussian -> scipy.ndimage.gaussian_filter (what skimage calls; mode "nearest", truncate 4 unless the
  call says otherwise; `multichannel=True` on a 2-D image leaves the last axis unblurred, sigma (s, 0));
- skimage.util.random_noise(mode="s&p") and skimage.color's rgb2hsv, hsv2rgb, gray2rgb, rgb2gray -> the numpy code
  skimage 0.15 runs, written out below;
- skimage.transform.warp and skimage.feature.canny -> the scipy ports in tests/data/fixtures/make_mnist_c_reference.py;
- ImageMagick's motion blur (Wand) -> imagecorruptions' numpy `_motion_blur`, as lib/data/corruption_ops.ts does
  (port in tests/data/fixtures/make_corruption_reference.py); the PNG round trips around the Wand call are dropped;
- cv2.GaussianBlur (in `disk`) -> the separable port in make_corruption_reference.py; cv2.filter2D ->
  scipy.ndimage.correlate(mode="mirror") (BORDER_REFLECT_101); cv2.getAffineTransform / warpAffine ->
  numpy.linalg.solve and scipy.ndimage.map_coordinates(order=1, mode="mirror");
- frost: no photos can ship, so it is the procedural layer of lib/data/corruptions.ts `frostLayer`, ported.

The helper ports are imported from the test fixtures rather than copied, so each lives in one place.

Served by bench/torch_reference.py's worker: run as a script, this registers BUILDERS there and starts its loop, so
the corruptions run in the same process, environment and protocol as the other NumPy entries.

usage: /usr/bin/python3 bench/corruptions_reference.py --threads 1
"""
import io
import os
import sys

import numpy as np
from PIL import Image
from scipy import ndimage as ndi

sys.dont_write_bytecode = True  # importing the fixture scripts must leave no __pycache__ in tests/
_FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "fixtures")
sys.path.insert(0, _FIXTURES)

from make_corruption_reference import disk, motion_blur  # noqa: E402
from make_corruption_reference import plasma_fractal as _plasma_from_uniforms  # noqa: E402
from make_mnist_c_reference import affine_params, canny, centred, warp  # noqa: E402
from make_mnist_c_reference import dotted_line as dotted_line_pattern  # noqa: E402
from make_mnist_c_reference import zigzag as zigzag_pattern  # noqa: E402

SEVERITY = 3  # of the `cifar` corruptions


def plasma_fractal(mapsize, wibbledecay):
    """The references' diamond-square plasma; its np.random.uniform calls draw from one block of uniforms."""
    return _plasma_from_uniforms(mapsize, wibbledecay, np.random.random(mapsize * mapsize))


def gaussian(x, sigma, mode="nearest", truncate=4.0):
    """skimage.filters.gaussian on a float image: scipy's gaussian_filter, which it calls."""
    return ndi.gaussian_filter(np.asarray(x, dtype=np.float64), sigma, mode=mode, truncate=truncate)


def random_noise_sp(image, amount, salt_vs_pepper=0.5):
    """skimage.util.random_noise(mode="s&p") on a non-negative float image (low_clip 0), as skimage 0.15 draws it."""
    out = image.copy()
    flipped = np.random.choice([True, False], size=image.shape, p=[amount, 1 - amount])
    salted = np.random.choice([True, False], size=image.shape, p=[salt_vs_pepper, 1 - salt_vs_pepper])
    out[flipped & salted] = 1
    out[flipped & ~salted] = 0
    return np.clip(out, 0, 1)


def rgb2hsv(arr):
    """skimage.color.rgb2hsv (0.15)."""
    out = np.empty_like(arr)
    out_v = arr.max(-1)
    delta = np.ptp(arr, -1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out_s = delta / out_v
        out_s[delta == 0.0] = 0.0
        idx = arr[:, :, 0] == out_v
        out[idx, 0] = (arr[idx, 1] - arr[idx, 2]) / delta[idx]
        idx = arr[:, :, 1] == out_v
        out[idx, 0] = 2.0 + (arr[idx, 2] - arr[idx, 0]) / delta[idx]
        idx = arr[:, :, 2] == out_v
        out[idx, 0] = 4.0 + (arr[idx, 0] - arr[idx, 1]) / delta[idx]
        out_h = (out[:, :, 0] / 6.0) % 1.0
    out_h[delta == 0.0] = 0.0
    out[:, :, 0], out[:, :, 1], out[:, :, 2] = out_h, out_s, out_v
    out[np.isnan(out)] = 0
    return out


def hsv2rgb(arr):
    """skimage.color.hsv2rgb (0.15)."""
    hi = np.floor(arr[:, :, 0] * 6)
    f = arr[:, :, 0] * 6 - hi
    p = arr[:, :, 2] * (1 - arr[:, :, 1])
    q = arr[:, :, 2] * (1 - f * arr[:, :, 1])
    t = arr[:, :, 2] * (1 - (1 - f) * arr[:, :, 1])
    v = arr[:, :, 2]
    hi = np.dstack([hi, hi, hi]).astype(np.uint8) % 6
    return np.choose(hi, [np.dstack((v, t, p)), np.dstack((q, v, p)), np.dstack((p, v, t)), np.dstack((p, q, v)),
                          np.dstack((t, p, v)), np.dstack((v, p, q))])


def rgb2gray(rgb):
    """skimage.color.rgb2gray: 0.2125 R + 0.7154 G + 0.0721 B."""
    return rgb @ np.array([0.2125, 0.7154, 0.0721])


# /////////////// MNIST-C (google-research/mnist-c corruptions.py, default severities) ///////////////


def mc_shot_noise(x):
    c = 3
    x = x / 255.0
    return np.clip(np.random.poisson(x * c) / float(c), 0, 1) * 255


def mc_impulse_noise(x):
    return random_noise_sp(x / 255.0, 0.17) * 255


def mc_glass_blur(x):
    sigma, max_delta, iterations = 0.7, 1, 2
    # gaussian(multichannel=True) of a 2-D image: the columns are taken for channels and not blurred.
    x = np.uint8(gaussian(x / 255.0, (sigma, 0)) * 255)
    for _ in range(iterations):
        for h in range(28 - max_delta, max_delta, -1):
            for w in range(28 - max_delta, max_delta, -1):
                if np.random.choice([True, False], 1)[0]:
                    dx, dy = np.random.randint(-max_delta, max_delta, size=(2,))
                    h_prime, w_prime = h + dy, w + dx
                    x[h, w], x[h_prime, w_prime] = x[h_prime, w_prime], x[h, w]
    return np.clip(gaussian(x / 255.0, (sigma, 0)), 0, 1) * 255


def mc_motion_blur(x):
    return np.clip(motion_blur(x / 255.0, 10, 3, np.random.uniform(-45, 45)), 0, 1) * 255


def mc_shear(x):
    params = centred(shear=0.4 * np.random.choice([-1, 1], 1)[0])
    return np.clip(warp(x / 255.0, params), 0, 1) * 255


def mc_scale(x):
    return np.clip(warp(x / 255.0, centred(scale=(1 / 0.7, 1 / 0.7))), 0, 1) * 255


def mc_rotate(x):
    params = centred(rotation=0.4 * np.random.choice([-1, 1], 1)[0])
    return np.clip(warp(x / 255.0, params), 0, 1) * 255


def mc_brightness(x):
    x = x / 255.0
    x = rgb2hsv(np.stack([x, x, x], axis=-1))  # gray2rgb
    x[:, :, 2] = np.clip(x[:, :, 2] + 0.5, 0, 1)
    return np.clip(rgb2gray(hsv2rgb(x)), 0, 1) * 255


def mc_translate(x):
    bit = np.random.choice([-1, 1], 2)
    return np.clip(warp(x / 255.0, affine_params(translation=[3 * bit[0], 3 * bit[1]])), 0, 1) * 255


def mc_stripe(x):
    x = np.array(x).astype(np.float32)
    x[:, :7] = 255.0 - x[:, :7]
    x[:, 21:] = 255.0 - x[:, 21:]
    return x


def mc_fog(x):
    c0, decay = 3.0, 1.4
    x = x / 255.0
    max_val = x.max()
    x = x + c0 * plasma_fractal(256, decay)[:28, :28]
    return np.clip(x * max_val / (max_val + c0), 0, 1) * 255


def mc_spatter(x):
    loc, scale, sigma, threshold, mask_sigma = 0.65, 0.3, 1, 0.65, 1.5
    x = np.array(x, dtype=np.float32) / 255.0
    liquid = gaussian(np.random.normal(size=x.shape, loc=loc, scale=scale), sigma)
    liquid[liquid < threshold] = 0
    m = gaussian(np.where(liquid > threshold, 1, 0).astype(np.float32), mask_sigma)
    m[m < 0.8] = 0
    color = 63 / 255.0 * np.ones_like(x) * m
    x *= 1 - m
    return np.clip(x + color, 0, 1) * 255


def mc_dotted_line(x):
    r0, r1 = np.random.randint(low=0, high=27, size=2)
    return np.clip(x / 255.0 + dotted_line_pattern(r0, r1), 0, 1) * 255


def mc_zigzag(x):
    r0 = np.random.randint(low=0, high=27)
    r1 = r0 + np.random.randint(low=-5, high=5)
    return np.clip(x / 255.0 + zigzag_pattern(r0, r1), 0, 1) * 255


def mc_canny_edges(x):
    return canny(x / 255.0).astype(np.float32) * 255


MNIST_C = {
    "shot_noise": mc_shot_noise,
    "impulse_noise": mc_impulse_noise,
    "glass_blur": mc_glass_blur,
    "motion_blur": mc_motion_blur,
    "shear": mc_shear,
    "scale": mc_scale,
    "rotate": mc_rotate,
    "brightness": mc_brightness,
    "translate": mc_translate,
    "stripe": mc_stripe,
    "fog": mc_fog,
    "spatter": mc_spatter,
    "dotted_line": mc_dotted_line,
    "zigzag": mc_zigzag,
    "canny_edges": mc_canny_edges,
}


# /////////////// make_cifar_c.py, severity 3, on gray images ///////////////


def center_clipped_zoom(img, zoom_factor):
    """make_cifar_c.py's clipped_zoom (centred crop and trim) of a 2-D image."""
    h = img.shape[0]
    ch = int(np.ceil(h / zoom_factor))
    top = (h - ch) // 2
    img = ndi.zoom(img[top:top + ch, top:top + ch], (zoom_factor, zoom_factor), order=1)
    trim_top = (img.shape[0] - h) // 2
    return img[trim_top:trim_top + h, trim_top:trim_top + h]


def cf_gaussian_noise(x):
    x = x / 255.0
    return np.clip(x + np.random.normal(size=x.shape, scale=0.08), 0, 1) * 255


def cf_shot_noise(x):
    c = 100
    return np.clip(np.random.poisson(x / 255.0 * c) / c, 0, 1) * 255


def cf_impulse_noise(x):
    return random_noise_sp(x / 255.0, 0.03) * 255


def cf_defocus_blur(x):
    kernel = disk(0.5, 0.6)
    return np.clip(ndi.correlate(x / 255.0, kernel, mode="mirror"), 0, 1) * 255


def cf_glass_blur(x):
    sigma, max_delta, iterations = 0.4, 1, 1
    x = np.uint8(gaussian(x / 255.0, sigma) * 255)
    h_side, w_side = x.shape
    for _ in range(iterations):
        for h in range(h_side - max_delta, max_delta, -1):
            for w in range(w_side - max_delta, max_delta, -1):
                dx, dy = np.random.randint(-max_delta, max_delta, size=(2,))
                h_prime, w_prime = h + dy, w + dx
                x[h, w], x[h_prime, w_prime] = x[h_prime, w_prime], x[h, w]
    return np.clip(gaussian(x / 255.0, sigma), 0, 1) * 255


def cf_motion_blur(x):
    return np.clip(motion_blur(x / 255.0, 6, 2, np.random.uniform(-45, 45)), 0, 1) * 255


def cf_zoom_blur(x):
    factors = np.arange(1, 1.16, 0.01)
    x = (x / 255.0).astype(np.float32)
    out = np.zeros_like(x)
    for zoom_factor in factors:
        out += center_clipped_zoom(x, zoom_factor)
    return np.clip((x + out) / (len(factors) + 1), 0, 1) * 255


def cf_snow(x):
    loc, scale, zoom, threshold, radius, sigma, weight = 0.15, 0.3, 1.75, 0.55, 10, 4, 0.9
    x = np.array(x, dtype=np.float32) / 255.0
    layer = center_clipped_zoom(np.random.normal(size=x.shape, loc=loc, scale=scale), zoom)
    layer[layer < threshold] = 0
    layer = (np.clip(layer, 0, 1) * 255).astype(np.uint8) / 255.0  # the 8-bit image handed to ImageMagick
    layer = motion_blur(layer, radius, sigma, np.random.uniform(-135, -45))
    layer = np.round(layer * 255) / 255.0  # ImageMagick writes 8 bits back
    x = weight * x + (1 - weight) * np.maximum(x, x * 1.5 + 0.5)
    return np.clip(x + layer + np.rot90(layer, k=2), 0, 1) * 255


def frost_layer_gray(h, w):
    """lib/data/corruptions.ts frostLayer (cloudy plasma plus ridged veins, tinted blue-white), as luma."""
    side = 1 << int(np.ceil(np.log2(max(h, w))))
    clouds, veins = plasma_fractal(side, 1.6)[:h, :w], plasma_fractal(side, 1.9)[:h, :w]
    ice = np.minimum(1, 0.6 * clouds + 0.8 * (1 - np.abs(2 * veins - 1)) ** 6)
    return ice * (0.2989 * 0.85 + 0.587 * 0.93 + 0.114 * 1.0)


def cf_frost(x):
    image_weight, frost_weight = 0.9, 0.4
    return np.clip(image_weight * np.array(x) + frost_weight * 255 * frost_layer_gray(*x.shape), 0, 255)


def cf_fog(x):
    c0, decay = 0.75, 2.5
    x = x / 255.0
    max_val = x.max()
    side = 1 << int(np.ceil(np.log2(max(x.shape))))
    x = x + c0 * plasma_fractal(side, decay)[:x.shape[0], :x.shape[1]]
    return np.clip(x * max_val / (max_val + c0), 0, 1) * 255


def cf_brightness(x):
    return np.clip(x / 255.0 + 0.15, 0, 1) * 255  # imagecorruptions' grayscale branch


def cf_contrast(x):
    c = 0.4
    x = x / 255.0
    means = np.mean(x, axis=(0, 1), keepdims=True)
    return np.clip((x - means) * c + means, 0, 1) * 255


def cf_elastic_transform(x):
    h, w = x.shape
    alpha, sigma, jitter = (v * h for v in (0.08, 0.06, 0.06))
    image = np.array(x, dtype=np.float32) / 255.0
    center_square = np.float32((h, w)) // 2
    square_size = min(h, w) // 3
    pts1 = np.float32([center_square + square_size,
                       [center_square[0] + square_size, center_square[1] - square_size],
                       center_square - square_size])
    pts2 = pts1 + np.random.uniform(-jitter, jitter, size=pts1.shape).astype(np.float32)
    # cv2.warpAffine(getAffineTransform(pts1, pts2)) samples the source at the inverse map, pts2 -> pts1.
    inverse = np.linalg.solve(np.hstack([pts2, np.ones((3, 1))]).astype(np.float64), pts1.astype(np.float64)).T
    cols, rows = np.meshgrid(np.arange(w, dtype=np.float64), np.arange(h, dtype=np.float64))
    src_cols = inverse[0, 0] * cols + inverse[0, 1] * rows + inverse[0, 2]
    src_rows = inverse[1, 0] * cols + inverse[1, 1] * rows + inverse[1, 2]
    image = ndi.map_coordinates(image, [src_rows, src_cols], order=1, mode="mirror")
    dx = (gaussian(np.random.uniform(-1, 1, size=(h, w)), sigma, mode="reflect", truncate=3) * alpha)
    dy = (gaussian(np.random.uniform(-1, 1, size=(h, w)), sigma, mode="reflect", truncate=3) * alpha)
    warped = ndi.map_coordinates(image, [rows + dy.astype(np.float32), cols + dx.astype(np.float32)], order=1,
                                 mode="reflect")
    return np.clip(warped, 0, 1) * 255


def cf_pixelate(x):
    c = 0.85
    image = Image.fromarray(x, mode="L")
    h, w = x.shape
    image = image.resize((int(w * c), int(h * c)), Image.BOX).resize((w, h), Image.BOX)
    return np.array(image).astype(np.float32)


def cf_jpeg_compression(x):
    output = io.BytesIO()
    Image.fromarray(x, mode="L").save(output, "JPEG", quality=58)
    return np.array(Image.open(output)).astype(np.float32)


CIFAR = {
    "gaussian_noise": cf_gaussian_noise,
    "shot_noise": cf_shot_noise,
    "impulse_noise": cf_impulse_noise,
    "defocus_blur": cf_defocus_blur,
    "glass_blur": cf_glass_blur,
    "motion_blur": cf_motion_blur,
    "zoom_blur": cf_zoom_blur,
    "snow": cf_snow,
    "frost": cf_frost,
    "fog": cf_fog,
    "brightness": cf_brightness,
    "contrast": cf_contrast,
    "elastic_transform": cf_elastic_transform,
    "pixelate": cf_pixelate,
    "jpeg_compression": cf_jpeg_compression,
}

_MOTION = "ImageMagick motion blur -> imagecorruptions' numpy _motion_blur"
_WARP = "skimage.transform.warp -> scipy.ndimage.affine_transform(order=1, mode='grid-constant') and warp's clip"
_SP = "skimage.util.random_noise(s&p) -> its numpy code"
# Where a reference calls a library not installed here, what runs instead (see the module docstring).
REFERENCE_SUBSTITUTES = {
    "mnist_c/impulse_noise": _SP,
    "mnist_c/glass_blur": "skimage gaussian -> scipy gaussian_filter",
    "mnist_c/motion_blur": _MOTION,
    "mnist_c/shear": _WARP,
    "mnist_c/scale": _WARP,
    "mnist_c/rotate": _WARP,
    "mnist_c/translate": _WARP,
    "mnist_c/brightness": "skimage.color gray2rgb, rgb2hsv, hsv2rgb, rgb2gray -> their numpy code",
    "mnist_c/spatter": "skimage gaussian -> scipy gaussian_filter",
    "mnist_c/canny_edges": "skimage.feature.canny -> its scipy port",
    "cifar/impulse_noise": _SP,
    "cifar/defocus_blur": "cv2.GaussianBlur (disk) -> separable numpy; cv2.filter2D -> scipy.ndimage.correlate(mirror)",
    "cifar/glass_blur": "skimage gaussian -> scipy gaussian_filter",
    "cifar/motion_blur": _MOTION,
    "cifar/snow": _MOTION + " (no PNG round trip)",
    "cifar/frost": "procedural frost layer of lib/data/corruptions.ts, ported (the reference's photos cannot ship)",
    "cifar/elastic_transform": "cv2.getAffineTransform/warpAffine -> numpy.linalg.solve and scipy map_coordinates "
                               "(mirror); skimage gaussian -> scipy gaussian_filter",
}


def corruption_step_fn(images, suite, name, seed=0):
    """Corrupts every digit of the float32 .npy `images` ([n, h, w, 1] in [0, 1]) once per step, image by image,
    into a uint8 buffer. `check`: the mean |corrupted - clean| in [0, 1] units of one untimed pass, to compare."""
    corruption = (MNIST_C if suite == "mnist_c" else CIFAR)[name]
    digits = np.rint(np.load(images)[..., 0] * 255).astype(np.uint8)
    out = np.empty_like(digits)
    np.random.seed(seed)

    def step():
        for i, x in enumerate(digits):
            out[i] = np.uint8(corruption(x))

    step()
    step.parameters = 0
    step.check = {"images": len(digits), "mean_abs_change": float(np.abs(out / 255.0 - digits / 255.0).mean()),
                  "substitute": REFERENCE_SUBSTITUTES.get(f"{suite}/{name}")}
    return step


def _builder(suite, name):
    return lambda images, seed=0: corruption_step_fn(images, suite, name, seed)


# Keyed as the bench names the entries: "<suite>/<corruption>".
BUILDERS = {f"{suite}/{name}": _builder(suite, name)
            for suite, table in (("mnist_c", MNIST_C), ("cifar", CIFAR)) for name in table}


if __name__ == "__main__":
    import torch_reference

    torch_reference.BUILDERS.update(BUILDERS)
    torch_reference.main()

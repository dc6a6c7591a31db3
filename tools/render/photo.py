"""Turn a linear render into a phone/webcam JPEG: white balance error, auto exposure, sensor noise,
tone curve, vignetting, slight blur, JPEG compression (numpy + Pillow, no bpy)."""
from __future__ import annotations

import io
import math

import numpy as np
from PIL import Image, ImageFilter

MAX_BYTES = 500_000


def resize_linear(linear_rgb: np.ndarray, width: int, height: int) -> np.ndarray:
    """Scale a linear float image (Lanczos, per channel); pixel centres map as in OpenCV/Pillow."""
    chans = [np.asarray(Image.fromarray(np.ascontiguousarray(linear_rgb[..., c]), "F")
                        .resize((width, height), Image.LANCZOS)) for c in range(3)]
    return np.maximum(np.stack(chans, axis=-1), 0.0)


def _aces(x):
    return np.clip((x * (2.51 * x + 0.03)) / (x * (2.43 * x + 0.59) + 0.14), 0.0, 1.0)


def tone_curve(x: np.ndarray) -> np.ndarray:
    """Filmic S-curve (Narkowicz's ACES fit), mostly on luminance so that bright saturated colours
    keep their hue as a phone's processing does, then the sRGB transfer function; input is linear."""
    x = np.maximum(x, 0.0)
    lum = x @ np.array([0.2126, 0.7152, 0.0722], np.float32)
    by_lum = np.clip(x * (_aces(lum) / np.maximum(lum, 1e-6))[..., None], 0.0, 1.0)
    y = 0.7 * by_lum + 0.3 * _aces(x)
    return np.where(y <= 0.0031308, 12.92 * y, 1.055 * np.power(y, 1 / 2.4) - 0.055)


def develop(linear_rgb: np.ndarray, rng: np.random.Generator, light: str) -> tuple[Image.Image, dict]:
    """Simulate a camera pipeline on a linear HxWx3 render. Returns the 8-bit image and its settings."""
    h, w, _ = linear_rgb.shape
    img = linear_rgb.astype(np.float32)
    # white-balance error of the camera's auto white balance
    wb = np.array([rng.uniform(0.86, 1.14), 1.0, rng.uniform(0.86, 1.14)], np.float32)
    if light in ("lamp", "evening"):
        wb[2] *= rng.uniform(1.05, 1.3)       # AWB half-corrects warm light
        wb[0] *= rng.uniform(0.8, 0.95)
    img *= wb
    # centre-weighted auto exposure on the log-average luminance
    lum = img @ np.array([0.2126, 0.7152, 0.0722], np.float32)
    yy, xx = np.mgrid[0:h:8, 0:w:8]
    weight = np.exp(-(((xx - w / 2) / (0.45 * w)) ** 2 + ((yy - h / 2) / (0.45 * h)) ** 2))
    log_avg = math.exp(float(np.sum(weight * np.log(lum[::8, ::8] + 1e-4)) / np.sum(weight)))
    highlight = float(np.percentile(lum[::4, ::4], 99.5))
    # mid-grey metering, but a dark table must not push the pieces' highlights into clipping
    exposure = min(0.1 / max(log_avg, 1e-4), 1.3 / max(highlight, 1e-4)) * rng.uniform(0.8, 1.15)
    img *= exposure
    # vignetting
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    r2 = ((xx - w / 2) ** 2 + (yy - h / 2) ** 2) / ((w / 2) ** 2 + (h / 2) ** 2)
    img *= (1.0 - rng.uniform(0.1, 0.35) * r2)[..., None]
    # sensor noise: shot noise grows with the gain needed by the light level, plus read noise
    iso_gain = {"overhead": 1.0, "window": 0.7, "lamp": 1.8, "evening": 3.2}.get(light, 1.0)
    iso_gain *= rng.uniform(0.7, 1.4)
    shot = 0.004 * iso_gain
    read = 0.0012 * iso_gain
    sigma = np.sqrt(shot * np.maximum(img, 0) + read ** 2)
    noise_lum = rng.standard_normal((h, w, 1), dtype=np.float32)
    noise_chroma = rng.standard_normal((h, w, 3), dtype=np.float32)
    img = img + sigma * (0.7 * noise_lum + 0.5 * noise_chroma)
    out = (tone_curve(img) * 255.0 + rng.uniform(0, 1, (h, w, 3))).clip(0, 255).astype(np.uint8)
    pil = Image.fromarray(out, "RGB")
    blur = rng.uniform(0.3, 1.1)
    pil = pil.filter(ImageFilter.GaussianBlur(blur))
    if rng.random() < 0.5:     # phones sharpen after denoising
        pil = pil.filter(ImageFilter.UnsharpMask(radius=2, percent=int(rng.uniform(30, 90)), threshold=2))
    settings = {"white_balance_gains": [round(float(v), 3) for v in wb], "exposure": round(exposure, 4),
                "noise_gain": round(float(iso_gain), 3), "blur_sigma_px": round(float(blur), 3)}
    return pil, settings


def save_jpeg(image: Image.Image, path, rng: np.random.Generator) -> int:
    """Save as JPEG of a random phone-like quality, lowered until the file is under MAX_BYTES."""
    quality = int(rng.integers(72, 93))
    while True:
        buf = io.BytesIO()
        image.save(buf, "JPEG", quality=quality, subsampling=2, optimize=True)
        if buf.tell() < MAX_BYTES or quality <= 40:
            break
        quality -= 4
    with open(path, "wb") as f:
        f.write(buf.getvalue())
    return quality

"""A small convolutional network that looks at each candidate cell's stack as a picture.

Every cell is cut out of the working image by the same similarity transform (stack_crop): the
cell's centre at the stack's base lands at a fixed point, the disc's diameter across the view
becomes DISC_PX pixels, and up is the way a stack would rise from there. Whatever the tilt and
the stack's place in the photo, a stack of the same height then looks alike, which is what a
network trained on a few thousand rendered stacks needs. It returns the chances of no stack and of
each height 1..MAX_READ, from which read_stacks decides.

The weights (vision/models/stack_net.npz) are trained by tools/train_stack_net.py with PyTorch, a
developer-only tool; here the network runs in NumPy (3x3 convolutions as matrix products).
"""
from __future__ import annotations

import functools
import json
from pathlib import Path

import cv2
import numpy as np

from .errors import VisionError
from .forest import MODEL_DIR

CROP_W, CROP_H = 64, 80           # pixels of a crop
DISC_PX = 32                      # a disc's diameter in the crop
BASE_Y = 58                       # the row of the stack's base centre (a tall stack rises above it)
CROP_SCALARS = 4                  # numbers given beside each crop (stack_crop)


def stack_crop(lab: np.ndarray, geo, profile, cell, base_mm: float, toward: np.ndarray):
    """(crop, scalars): the Lab working image around a stack on `cell` standing at `base_mm`
    (CROP_H x CROP_W x 3, float32), and what the crop cannot show by itself: the camera's tilt
    (in units of 60 degrees), the crop's step per disc of height (up and across, in 5 px) and the
    base's height over the table (in tile thicknesses: 1 on a tile, 0 off the World).
    `toward`: the horizontal direction from the cell to the camera (mm, any length)."""
    r = profile.disc_diameter_mm / 2
    tw = toward / (np.linalg.norm(toward) + 1e-9)
    across = np.array([-tw[1], tw[0]])
    p = geo.project([cell] * 4, [base_mm, base_mm, base_mm, base_mm + profile.disc_thickness_mm],
                    np.array([[0.0, 0.0], across * r, tw * r, [0.0, 0.0]])) * geo.scale
    centre, side, near, rise = p[0], p[1] - p[0], p[2] - p[0], p[3] - p[0]
    up = np.array([side[1], -side[0]])
    if up @ near > 0:                 # up points away from the camera's side of the stack
        up = -up
    src = np.float32([centre, centre + side, centre + up])
    dst = np.float32([[CROP_W / 2, BASE_Y], [CROP_W / 2 + DISC_PX / 2, BASE_Y], [CROP_W / 2, BASE_Y - DISC_PX / 2]])
    M = cv2.getAffineTransform(src, dst)
    crop = cv2.warpAffine(lab, M, (CROP_W, CROP_H), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    step = M[:, :2] @ rise
    return crop, np.array([geo.camera.tilt_deg / 60, -step[1] / 5, step[0] / 5,
                           base_mm / profile.tile_thickness_mm + 1], np.float32)


def network_input(crops: np.ndarray) -> np.ndarray:
    """(N, H, W, 6) from Lab crops (N, H, W, 3): the colours as they are, and relative to the
    crop's median colour (the same stack under warmer or dimmer light)."""
    crops = np.asarray(crops, np.float32)
    median = np.median(crops.reshape(len(crops), -1, 3), axis=1)[:, None, None, :]
    absolute = (crops - np.array([50.0, 0.0, 0.0], np.float32)) / np.array([50.0, 40.0, 40.0], np.float32)
    relative = (crops - median) / 20.0
    return np.concatenate([absolute, relative], -1)


class StackNet:
    """Convolutions (3x3, ReLU, 2x2 max-pool) then two dense layers; batch norms folded in."""

    def __init__(self, weights: dict, calibration: dict | None = None):
        self.calibration = calibration or {}   # kind -> ([chance...], [share of such reads right...])
        self.convs = []
        k = 0
        while f"conv{k}.w" in weights:
            w = np.asarray(weights[f"conv{k}.w"], np.float32)           # (out, in, 3, 3)
            self.convs.append((w.transpose(2, 3, 1, 0).reshape(-1, len(w)).copy(),   # rows: (dy, dx, in)
                               np.asarray(weights[f"conv{k}.b"], np.float32)))
            k += 1
        self.dense = [(np.asarray(weights[f"fc{j}.w"], np.float32).T.copy(), np.asarray(weights[f"fc{j}.b"], np.float32))
                      for j in (1, 2)]
        if not self.convs:
            raise VisionError("stack network weights hold no convolution")

    @classmethod
    @functools.cache
    def shipped(cls) -> "StackNet":
        return cls.load(MODEL_DIR / "stack_net.npz")

    @classmethod
    def load(cls, path) -> "StackNet":
        """The network of weights `path` (.npz) and, beside it, its calibration (.calibration.json)."""
        path = Path(path)
        if not path.is_file():
            raise VisionError(f"stack network missing: {path} (train it with tools/train_stack_net.py)")
        with np.load(path) as data:
            weights = dict(data)
        table = path.with_name(path.name.split(".")[0] + ".calibration.json")
        calibration = None
        if table.is_file():
            calibration = {kind: (t["chance"], t["right"]) for kind, t in json.loads(table.read_text()).items()}
        return cls(weights, calibration)

    def confidence(self, kind: str, chance):
        """How often a read of this chance was right in cross-validation; `kind`: "present" (the
        chance that a stack is there or not, whichever is read) or "height" (the read height's
        chance among the heights). The chance itself when the network has no such table."""
        if kind not in self.calibration:
            return chance
        return np.interp(chance, *self.calibration[kind])

    def probabilities(self, crops: np.ndarray, scalars: np.ndarray) -> np.ndarray:
        """(N, MAX_READ + 1) chances of no stack and of each height, for Lab crops (stack_crop)."""
        if not len(crops):
            return np.zeros((0, len(self.dense[-1][1])))
        x = network_input(crops)                                    # channels last: contiguous windows
        for w, b in self.convs:
            y = _conv3x3(x, w)
            y += b
            x = _max_pool(np.maximum(y, 0.0, out=y))
        x = np.concatenate([x.transpose(0, 3, 1, 2).reshape(len(x), -1), np.asarray(scalars, np.float32)], axis=1)
        (w1, b1), (w2, b2) = self.dense
        logits = np.maximum(x @ w1 + b1, 0.0) @ w2 + b2
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        return p / p.sum(axis=1, keepdims=True)


def _conv3x3(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """(N, H, W, O): x (N, H, W, C) convolved (zero padding 1) with w (9*C, O, rows by dy, dx, C)
    as one matrix product."""
    n, h, wd, c = x.shape
    padded = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    cols = np.concatenate([padded[:, dy:dy + h, dx:dx + wd] for dy in range(3) for dx in range(3)], axis=-1)
    return (cols.reshape(n * h * wd, 9 * c) @ w).reshape(n, h, wd, -1)


def _max_pool(x: np.ndarray) -> np.ndarray:
    n, h, w, c = x.shape
    return x[:, :h // 2 * 2, :w // 2 * 2].reshape(n, h // 2, 2, w // 2, 2, c).max(axis=(2, 4))

"""The small convolutional networks vision runs in NumPy: the stack network (vision/stack_net.py)
and the tile network (vision/tile_net.py).

Each is 3x3 convolutions (ReLU, 2x2 max-pool) then two dense layers, the second fed also with a
few numbers the picture cannot show. They are trained with PyTorch by tools/train_stack_net.py
and tools/train_tile_net.py (developer-only tools) and ship as data in vision/models/: the weights
(NAME.npz, batch norms folded into the convolutions) and, beside them, the calibration tables
(NAME.calibration.json) that turn a chance into how often such reads were right.
"""
from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np

from .errors import VisionError

MODEL_DIR = Path(__file__).with_name("models")
LAB_CENTRE = np.array([50.0, 0.0, 0.0], np.float32)
LAB_SPREAD = np.array([50.0, 40.0, 40.0], np.float32)


def scaled_lab(lab: np.ndarray) -> np.ndarray:
    """Lab colours (L 0..100) scaled to about -1..1, as both networks take them."""
    return (lab - LAB_CENTRE) / LAB_SPREAD


class ConvNet:
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
            raise VisionError("network weights hold no convolution")

    @classmethod
    @functools.cache
    def shipped(cls, name: str) -> "ConvNet":
        """The network vision/models/NAME.npz (loaded once per process)."""
        return cls.load(MODEL_DIR / f"{name}.npz")

    @classmethod
    def load(cls, path) -> "ConvNet":
        """The network of weights `path` (NAME.npz) and, beside it, its calibration
        (NAME.calibration.json)."""
        path = Path(path)
        name = path.name.split(".")[0]
        if not path.is_file():
            raise VisionError(f"network missing: {path} (train it with tools/train_{name}.py)")
        with np.load(path) as data:
            weights = dict(data)
        table = path.with_name(name + ".calibration.json")
        calibration = None
        if table.is_file():
            calibration = {kind: (t["chance"], t["right"]) for kind, t in json.loads(table.read_text()).items()}
        return cls(weights, calibration)

    def confidence(self, kind: str, chance):
        """How often a read of this chance was right in cross-validation (the table `kind`); the
        chance itself when the network has no such table."""
        if kind not in self.calibration:
            return chance
        return np.interp(chance, *self.calibration[kind])

    def probabilities(self, x: np.ndarray, scalars: np.ndarray) -> np.ndarray:
        """(N, outputs) chances of each class, for pictures `x` (N, H, W, C: channels last, so a
        convolution's windows are contiguous) and their numbers `scalars` (N, S)."""
        if not len(x):
            return np.zeros((0, len(self.dense[-1][1])))
        x = np.asarray(x, np.float32)
        if x.shape[-1] * 9 != len(self.convs[0][0]):
            raise VisionError(f"the network takes {len(self.convs[0][0]) // 9}-channel pictures, not "
                              f"{x.shape[-1]}-channel ones: its weights do not fit this vision code, retrain it")
        for w, b in self.convs:
            y = _conv3x3(x, w)
            y += b
            x = _max_pool(np.maximum(y, 0.0, out=y))
        x = np.concatenate([x.transpose(0, 3, 1, 2).reshape(len(x), -1), np.asarray(scalars, np.float32)], axis=1)
        (w1, b1), (w2, b2) = self.dense
        if x.shape[1] != len(w1):
            raise VisionError(f"the network's dense layer takes {len(w1)} numbers, the pictures and scalars give "
                              f"{x.shape[1]}: its weights do not fit this vision code, retrain it")
        logits = np.maximum(x @ w1 + b1, 0.0) @ w2 + b2
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        return p / p.sum(axis=1, keepdims=True)


def calibration_table(share: np.ndarray, right: np.ndarray, bins=10, min_reads=20) -> tuple:
    """(chances, share right): the accuracy of reads in equal-width bins of their chance (`share`,
    bins of under `min_reads` reads join the next), made non-decreasing (a higher chance never
    means a lower accuracy); what a training tool writes as a network's calibration table."""
    edges = np.linspace(share.min(), 1.0, bins + 1)
    which = np.clip(np.searchsorted(edges, share, side="right") - 1, 0, bins - 1)
    x, y, pending = [], [], np.zeros(len(share), bool)
    for b in range(bins):
        pending |= which == b
        if pending.sum() >= min_reads or (b == bins - 1 and pending.any()):
            x.append(float(share[pending].mean()))
            y.append(float(right[pending].mean()))
            pending[:] = False
    y = np.maximum.accumulate(np.array(y)).tolist()
    return [0.0] + x + [1.0], [0.0] + y + [y[-1]]


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


def with_prior_ratio(weights: dict, ratio) -> dict:
    """The weights with log(ratio) added to the output layer's bias: the softmax's chances are
    then the network's times `ratio`, renormalised (a network trained on one mix of classes,
    answering for photos with another)."""
    out = dict(weights)
    last = max(k for k in out if k.startswith("fc") and k.endswith(".b"))
    out[last] = (out[last] + np.log(ratio)).astype(out[last].dtype)
    return out

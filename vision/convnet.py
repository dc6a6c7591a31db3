"""The small convolutional networks vision runs: the stack network (vision/stack_net.py) and the
tile network (vision/tile_net.py). The convolutions run in OpenCV's DNN module (the weights handed
to it as a Darknet description made in memory), the dense layers in NumPy.

Each is 3x3 convolutions (ReLU, 2x2 max-pool) then two dense layers, the second fed also with a
few numbers the picture cannot show. They are trained with PyTorch by tools/train_stack_net.py
and tools/train_tile_net.py (developer-only tools) and ship as data in vision/models/: the weights
(NAME.npz, batch norms folded into the convolutions) and, beside them, the calibration tables
(NAME.calibration.json) that turn a chance into how often such reads were right.
"""
from __future__ import annotations

import functools
import json
import threading
from pathlib import Path

import cv2
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
        convs = []
        while f"conv{len(convs)}.w" in weights:
            k = len(convs)
            convs.append((np.asarray(weights[f"conv{k}.w"], np.float32),           # (out, in, 3, 3)
                          np.asarray(weights[f"conv{k}.b"], np.float32)))
        if not convs:
            raise VisionError("network weights hold no convolution")
        self.channels = convs[0][0].shape[1]
        self._darknet = _darknet(convs, self.channels)
        self._threads = threading.local()      # a DNN net runs one picture batch at a time
        self.dense = [(np.asarray(weights[f"fc{j}.w"], np.float32).T.copy(), np.asarray(weights[f"fc{j}.b"], np.float32))
                      for j in (1, 2)]

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

    def _convolutions(self) -> cv2.dnn.Net:
        """This thread's DNN net of the convolutions."""
        net = getattr(self._threads, "net", None)
        if net is None:
            net = self._threads.net = cv2.dnn.readNetFromDarknet(*self._darknet)
        return net

    def probabilities(self, x: np.ndarray, scalars: np.ndarray) -> np.ndarray:
        """(N, outputs) chances of each class, for pictures `x` (N, H, W, C: channels last, so a
        convolution's windows are contiguous) and their numbers `scalars` (N, S)."""
        return self.dense_probabilities(self.convolved(x), scalars)

    def convolved(self, x: np.ndarray) -> np.ndarray:
        """(N, K): what the convolutions make of pictures `x` (as probabilities takes them),
        flattened; the dense layers take it beside the scalars (dense_probabilities), so a caller
        that weighs the same pictures with other scalars need not convolve them again."""
        if not len(x):
            return np.zeros((0, 0), np.float32)
        x = np.asarray(x, np.float32)
        if x.shape[-1] != self.channels:
            raise VisionError(f"the network takes {self.channels}-channel pictures, not "
                              f"{x.shape[-1]}-channel ones: its weights do not fit this vision code, retrain it")
        convolutions = self._convolutions()
        convolutions.setInput(np.ascontiguousarray(x.transpose(0, 3, 1, 2)))
        x = convolutions.forward()                                      # (N, channels, rows, columns)
        return x.reshape(len(x), -1)

    def dense_probabilities(self, convolved: np.ndarray, scalars: np.ndarray) -> np.ndarray:
        """(N, outputs) chances of each class, from what the convolutions made of N pictures
        (`convolved`) and their numbers `scalars` (N, S)."""
        if not len(convolved):
            return np.zeros((0, len(self.dense[-1][1])))
        x = np.concatenate([convolved, np.asarray(scalars, np.float32)], axis=1)
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


def _darknet(convs: list, channels: int) -> tuple:
    """(description, weights) as uint8 arrays: the convolutions (3x3, padding 1, ReLU, then a 2x2
    max-pool that drops an odd last row or column) in Darknet's formats, which OpenCV's DNN module
    reads from memory. The picture size in the description is nominal: a net takes any size."""
    cfg = f"[net]\nwidth=32\nheight=32\nchannels={channels}\n\n"
    blobs = [np.array([0, 2, 0], np.int32).tobytes(), np.zeros(1, np.int64).tobytes()]   # version 0.2.0, seen
    for w, b in convs:
        cfg += (f"[convolutional]\nfilters={len(w)}\nsize=3\nstride=1\npad=1\nactivation=relu\n\n"
                "[maxpool]\nsize=2\nstride=2\npadding=0\n\n")
        blobs += [b.tobytes(), np.ascontiguousarray(w).tobytes()]
    return np.frombuffer(cfg.encode(), np.uint8), np.frombuffer(b"".join(blobs), np.uint8)


def with_prior_ratio(weights: dict, ratio) -> dict:
    """The weights with log(ratio) added to the output layer's bias: the softmax's chances are
    then the network's times `ratio`, renormalised (a network trained on one mix of classes,
    answering for photos with another)."""
    out = dict(weights)
    last = max(k for k in out if k.startswith("fc") and k.endswith(".b"))
    out[last] = (out[last] + np.log(ratio)).astype(out[last].dtype)
    return out

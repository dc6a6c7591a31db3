"""Random forests (OpenCV's RTrees) that weigh a cell's evidence into chances of each class (the
tile stage's: tile or not), with a calibration table that turns a vote share into how often such
reads were right.

They are trained by `tools/train_cells.py` on rendered photos with exact truth (never on
sample_images/ or the held-out renders) and ship as data in vision/models/.
"""
from __future__ import annotations

import functools
import json
from pathlib import Path

import cv2
import numpy as np

from .convnet import MODEL_DIR
from .errors import VisionError


class Forest:
    def __init__(self, trees, classes: int, calibration=None):
        self.trees = trees
        self.classes = classes
        self.calibration = calibration       # ([vote share...], [share of such reads right...])

    @classmethod
    @functools.cache
    def shipped(cls, name: str, classes: int) -> "Forest":
        """The model vision/models/NAME.yml.gz (loaded once per process)."""
        return cls.load(MODEL_DIR / f"{name}.yml.gz", classes)

    @classmethod
    def load(cls, path, classes: int) -> "Forest":
        path = Path(path)
        if not path.is_file():
            raise VisionError(f"classifier model missing: {path} (train it with tools/train_cells.py)")
        trees = cv2.ml.RTrees_load(str(path))
        table = _calibration_path(path)
        calibration = None
        if table.is_file():
            obj = json.loads(table.read_text())
            calibration = (obj["vote_share"], obj["right"])
        return cls(trees, classes, calibration)

    def save(self, path) -> None:
        self.trees.save(str(path))
        if self.calibration is not None:
            share, right = self.calibration
            _calibration_path(path).write_text(json.dumps(
                {"vote_share": [round(float(v), 4) for v in share], "right": [round(float(v), 4) for v in right]}) + "\n")

    def confidence(self, share):
        """How often a read with this vote share was right in cross-validation (the vote share
        itself when the model has no calibration)."""
        if self.calibration is None:
            return share
        return np.interp(share, *self.calibration)

    @classmethod
    def train(cls, features: np.ndarray, labels: np.ndarray, classes: int, trees=100, depth=14,
              seed=1) -> "Forest":
        """A forest fitted to (N, F) features and labels 0..classes-1."""
        cv2.setRNGSeed(seed)
        forest = cv2.ml.RTrees_create()
        forest.setMaxDepth(depth)
        forest.setMinSampleCount(4)
        forest.setActiveVarCount(0)                 # sqrt(F) features tried per split
        forest.setTermCriteria((cv2.TERM_CRITERIA_MAX_ITER, trees, 0))
        forest.train(np.asarray(features, np.float32), cv2.ml.ROW_SAMPLE, np.asarray(labels, np.int32))
        return cls(forest, classes)

    def probabilities(self, features: np.ndarray) -> np.ndarray:
        """(N, classes) vote shares of the trees."""
        features = np.asarray(features, np.float32)
        if features.shape[1] != self.trees.getVarCount():
            raise VisionError(f"classifier model expects {self.trees.getVarCount()} features, got "
                              f"{features.shape[1]}: retrain it with tools/train_cells.py")
        votes = self.trees.getVotes(features, 0)
        labels, counts = votes[0], votes[1:].astype(float)
        out = np.zeros((len(counts), self.classes))
        for j, lbl in enumerate(labels):
            if 0 <= lbl < self.classes:
                out[:, lbl] += counts[:, j]
        return out / np.maximum(out.sum(axis=1, keepdims=True), 1.0)


def _calibration_path(model_path) -> Path:
    path = Path(model_path)
    return path.with_name(path.name.split(".")[0] + ".calibration.json")


def calibration_table(share: np.ndarray, right: np.ndarray, bins=10, min_reads=20) -> tuple:
    """(vote shares, share right): the accuracy of reads in equal-width bins of their vote share
    (bins of under `min_reads` reads join the next), made non-decreasing (a higher share never
    means a lower chance)."""
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

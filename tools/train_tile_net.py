"""Train the tile network (vision/models/tile_net.npz) on rendered photos with exact truth.

    /work/torchenv/bin/python tools/train_tile_net.py renders/train-seed31 [more folders] [--out-dir DIR]

PyTorch is a developer-only tool, like the renderer's Blender: install it into its own virtualenv
with tools/requirements-train.txt. Every cell the tile stage looks at, with the true stacks hiding
what they hide, is labelled with whether a tile lies there (tools/training_photos.tile_samples:
its tile evidence and its picture, vision.tile_net.tile_input, cached beside each photo as
NAME.cells[-VARIANT].npz).

A k-fold cross-validation grouped by photo prints how often the network is right and gives the
table that turns its chance into how often such reads were right (tile_net.calibration.json); then
it is trained on everything and its weights written for vision/convnet.py to run. Never
train on sample_images/ or the held-out renders: they are how the pipeline is measured.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tools"))

from convnet_torch import ConvNetTorch, out_of_fold_chances, scalars_standardised, train_and_write  # noqa: E402
from training_photos import gathered_samples, tile_samples, tile_version, tilt_bands, trainer_args  # noqa: E402
from vision.convnet import calibration_table  # noqa: E402
from vision.tile_net import CHANNELS, TILE_PX  # noqa: E402


def augmented(x: np.ndarray, scalars: np.ndarray, rng) -> tuple:
    """A batch as another photo might show it: mirrored either way (the hex lattice's own
    symmetries), lit brighter or dimmer."""
    x = x.astype(np.float32)
    flip_x = rng.random(len(x)) < 0.5
    x[flip_x] = x[flip_x][..., ::-1]
    flip_y = rng.random(len(x)) < 0.5
    x[flip_y] = x[flip_y][..., ::-1, :]
    gain = rng.uniform(0.85, 1.15, (len(x), 1, 1, 1)).astype(np.float32)
    x[:, :1] = x[:, :1] * gain + rng.uniform(-0.1, 0.1, (len(x), 1, 1, 1)).astype(np.float32)
    x[:, 3:4] *= gain
    return np.ascontiguousarray(x), scalars


def main(argv=None):
    args = trainer_args(argv, __doc__.splitlines()[0], "tile_net", epochs=12, variants=",turn", variants_help="")
    torch.set_num_threads(args.threads)
    photos, group, tilt = gathered_samples(
        args, "cells", tile_version(), tile_samples,
        lambda got: f"{len(got['tile_y'])} cells, {int(got['tile_y'].sum())} tiles", labels="tile_y")
    x = np.ascontiguousarray(np.concatenate([p["tile_crops"] for _, p in photos]).transpose(0, 3, 1, 2))
    evidence = np.concatenate([p["tile_X"] for _, p in photos]).astype(np.float32)
    mean, scale = evidence.mean(axis=0), evidence.std(axis=0) + 1e-3
    scalars = (evidence - mean) / scale
    labels = np.concatenate([p["tile_y"] for _, p in photos]).astype(np.int64)
    print(f"{int(labels.sum())} tiles", flush=True)

    def tile_net():
        return ConvNetTorch(CHANNELS, TILE_PX, TILE_PX, evidence.shape[1], 2, channels=(16, 32, 64), hidden=64)

    start = None if args.start is None else scalars_standardised(args.start, mean, scale)
    p = out_of_fold_chances(tile_net, x, scalars, labels, group, args.folds, args.epochs, augmented,
                            args.checkpoints, "tile_net", start)[:, 1]
    read = p > 0.5
    print(f"  {args.folds}-fold cross-validation, grouped by photo:")
    for name, sel in tilt_bands(tilt):
        truth = labels[sel] > 0
        found = (read[sel] & truth).sum()
        print(f"  {name:>10}: cells {int(sel.sum()):6d}  right {(read[sel] == truth).mean():.4f}  "
              f"precision {found / max(read[sel].sum(), 1):.4f}  recall {found / max(truth.sum(), 1):.4f}")
    calibration = {"tile": calibration_table(np.maximum(p, 1 - p), (read == (labels > 0)).astype(float))}
    train_and_write(tile_net, x, scalars, labels, args.epochs, args.folds, augmented, args.out_dir, "tile_net",
                    calibration, mean, scale, checkpoints=args.checkpoints, start=start)


if __name__ == "__main__":
    main()

"""Train the tile network (vision/models/tile_net.npz) on rendered photos with exact truth.

    /work/torchenv/bin/python tools/train_tile_net.py renders/train-seed31 [more folders] [--out-dir DIR]

PyTorch is a developer-only tool, like the renderer's Blender: install it into its own virtualenv
with tools/requirements-train.txt. Every cell the tile stage looks at, with the true stacks hiding
what they hide, is labelled with whether a tile lies there (tools/training_photos.tile_samples:
its tile evidence and its picture, vision.tile_net.tile_input, cached beside each photo as
NAME.cells[-VARIANT].npz).

A k-fold cross-validation grouped by photo prints how often the network is right and gives the
table that turns its chance into how often such reads were right (tile_net.calibration.json); then
it is trained on everything and its weights written for vision/convnet.py to run in NumPy. Never
train on sample_images/ or the held-out renders: they are how the pipeline is measured.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tools"))

from convnet_torch import ConvNetTorch, chances, train  # noqa: E402
from training_photos import (VARIANTS, cached_samples, parse_variants, refuse_measuring_sets,  # noqa: E402
                             tile_samples, tile_version)
from vision.convnet import MODEL_DIR, calibration_table  # noqa: E402
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
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="+", type=Path)
    ap.add_argument("--out-dir", type=Path, default=MODEL_DIR)
    ap.add_argument("--folds", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--variants", default=",turn",
                    help=f"comma-separated, of {sorted(VARIANTS)} ('' is the photo as it is)")
    args = ap.parse_args(argv)
    refuse_measuring_sets(ap, args.folders)
    args.variants = parse_variants(ap, args.variants)
    torch.set_num_threads(args.threads)
    version = tile_version()
    photos = []
    for folder in args.folders:
        print(f"{folder}:", flush=True)
        photos += cached_samples(folder, "cells", version, args.variants, tile_samples,
                                 lambda got: f"{len(got['tile_y'])} cells, {int(got['tile_y'].sum())} tiles")
    index = {n: i for i, n in enumerate(dict.fromkeys(n for n, _ in photos))}   # a photo's variants: one group
    if len(index) < args.folds:
        sys.exit(f"train_tile_net: only {len(index)} usable photos, need at least {args.folds}")
    x = np.ascontiguousarray(np.concatenate([p["tile_crops"] for _, p in photos]).transpose(0, 3, 1, 2))
    evidence = np.concatenate([p["tile_X"] for _, p in photos]).astype(np.float32)
    mean, scale = evidence.mean(axis=0), evidence.std(axis=0) + 1e-3
    scalars = (evidence - mean) / scale
    labels = np.concatenate([p["tile_y"] for _, p in photos]).astype(np.int64)
    tilt = np.concatenate([np.full(len(p["tile_y"]), float(p["tilt"])) for _, p in photos])
    group = np.concatenate([np.full(len(p["tile_y"]), index[n]) for n, p in photos])
    print(f"{len(index)} photos, {len(photos)} with their variants, {len(labels)} cells, {int(labels.sum())} tiles",
          flush=True)

    def tile_net():
        return ConvNetTorch(CHANNELS, TILE_PX, TILE_PX, evidence.shape[1], 2, channels=(16, 32, 64), hidden=64)

    fold = np.random.default_rng(0).permutation(len(index))[group] % args.folds
    p = np.zeros(len(labels))
    for k in range(args.folds):
        print(f"  fold {k + 1}/{args.folds}", flush=True)
        net = train(tile_net, x[fold != k], scalars[fold != k], labels[fold != k], args.epochs, seed=k,
                    augment=augmented)
        p[fold == k] = chances(net, x[fold == k], scalars[fold == k])[:, 1]
    read = p > 0.5
    print(f"  {args.folds}-fold cross-validation, grouped by photo:")
    for name, sel in (("all", tilt >= 0), ("tilt 0-15", tilt < 15), ("tilt 15-35", (tilt >= 15) & (tilt < 35)),
                      ("tilt 35-60", tilt >= 35)):
        truth = labels[sel] > 0
        found = (read[sel] & truth).sum()
        print(f"  {name:>10}: cells {int(sel.sum()):6d}  right {(read[sel] == truth).mean():.4f}  "
              f"precision {found / max(read[sel].sum(), 1):.4f}  recall {found / max(truth.sum(), 1):.4f}")
    calibration = {"tile": calibration_table(np.maximum(p, 1 - p), (read == (labels > 0)).astype(float))}
    print("  training on everything", flush=True)
    net = train(tile_net, x, scalars, labels, args.epochs, seed=args.folds, augment=augmented,
                log=lambda m: print(m, flush=True))
    args.out_dir.mkdir(parents=True, exist_ok=True)
    out = args.out_dir / "tile_net.npz"
    np.savez_compressed(out, **net.numpy_weights(mean, scale))
    (args.out_dir / "tile_net.calibration.json").write_text(json.dumps(
        {k: {"chance": [round(v, 4) for v in a], "right": [round(v, 4) for v in b]} for k, (a, b) in calibration.items()}) + "\n")
    print(f"model -> {out} ({out.stat().st_size // 1024} KiB)")


if __name__ == "__main__":
    main()

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

vision reads tiles with two networks paired (vision.tiles.TILE_NETS, paired_chances): the second
is trained with `--pair-with vision/models --pair-on FOLDER,...`, which also writes the table of
the pair's reads ("pair") from the photos of the folders the first never trained on, each read by
this training's network that left that photo out.
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
from vision.convnet import ConvNet, calibration_table  # noqa: E402
from vision.tile_net import CHANNELS, TILE_PX  # noqa: E402
from vision.tiles import paired_chances  # noqa: E402


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


def pairing_arguments(ap) -> None:
    ap.add_argument("--pair-with", type=Path, metavar="DIR",
                    help="the tile network (DIR/tile_net.npz) this one is paired with in vision: also write the "
                         "pair's calibration table")
    ap.add_argument("--pair-on", default="", metavar="FOLDER,...",
                    help="with --pair-with: those of the folders that network never trained on")


def pair_table(other: ConvNet, photos, x, evidence, p, labels, folders) -> tuple:
    """The calibration table of the pair (vision.tiles.paired_chances) of `other`'s chances and
    these out-of-fold chances `p`, on the cells of the photos of `folders`."""
    on = np.flatnonzero(np.concatenate([np.full(len(s["tile_y"]), name.split("/")[0] in folders) for name, s in photos]))
    theirs = np.concatenate([other.probabilities(x[b].transpose(0, 2, 3, 1).astype(np.float32), evidence[b])[:, 1]
                             for b in np.array_split(on, max(1, len(on) // 4096))])
    paired = paired_chances([theirs, p[on]])
    return calibration_table(np.maximum(paired, 1 - paired), ((paired > 0.5) == (labels[on] > 0)).astype(float))


def main(argv=None):
    args = trainer_args(argv, __doc__.splitlines()[0], "tile_net", epochs=12, variants=",turn", variants_help="",
                        own_arguments=pairing_arguments)
    pair_on = {Path(f).name for f in args.pair_on.split(",") if f}
    if bool(pair_on) != (args.pair_with is not None) or not pair_on <= {f.name for f in args.folders}:
        sys.exit("train_tile_net.py: --pair-with and --pair-on go together, --pair-on naming some of the folders")
    other = None if args.pair_with is None else ConvNet.load(args.pair_with / "tile_net.npz")
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
    if other is not None:
        calibration["pair"] = pair_table(other, photos, x, evidence, p, labels, pair_on)
    train_and_write(tile_net, x, scalars, labels, args.epochs, args.folds, augmented, args.out_dir, "tile_net",
                    calibration, mean, scale, checkpoints=args.checkpoints, start=start)


if __name__ == "__main__":
    main()

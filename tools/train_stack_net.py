"""Train the stack network (vision/models/stack_net.npz) on rendered photos with exact truth.

    /work/torchenv/bin/python tools/train_stack_net.py renders/train-seed31 [more folders] [--out-dir DIR]

PyTorch is a developer-only tool, like the renderer's Blender: install it into its own virtualenv
with tools/requirements-train.txt. For every photo of the folders the vision pipeline finds the
World and reads its tiles a first time, as it would for a user; every cell read_stacks would
measure is cut out as vision.stack_net.stack_crop does and labelled with the true height there
(0: no stack), mapped through the true camera. Crops are cached beside each photo
(NAME.crops.npz) and recut when vision/stack_net.py, vision/stacks.py or vision/tiles.py changes.

A k-fold cross-validation grouped by photo prints how often the network finds the stacks and
reads their heights, and gives the tables that turn its chances into how often such reads were
right (stack_net.calibration.json); then it is trained on everything and its weights written,
batch norms folded into the convolutions, for vision/convnet.py to run. Photos of regrouped
discs (tools/render/plan.py --wants restacked, towers or crowded) teach tall stacks, and a mix of
heights no game has: the chances, in the cross-validation and in the weights written (the output
layer's bias), are multiplied back to the mix of the photos of game positions
(training_photos.game_prior_ratio). Never train on sample_images/ or the held-out renders: they
are how the pipeline is measured.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tools"))

from convnet_torch import ConvNetTorch, out_of_fold_chances, train_and_write  # noqa: E402
from training_photos import (first_read, game_prior_ratio, gathered_samples, game_samples, source_version,  # noqa: E402
                             tilt_bands, trainer_args)
from vision.convnet import calibration_table  # noqa: E402
from vision.stack_net import CROP_H, CROP_SCALARS, CROP_W, network_input  # noqa: E402
from vision.stacks import ACTIVITY_GATE, MAX_READ, edge_activity, stack_crops  # noqa: E402

def crop_version() -> str:
    """A digest of the stages that choose and cut the crops: stack_crop's code and the crop's size
    and scale (vision/stack_net.py), the gate and the stack's base (vision/stacks.py), and the
    first tile read that decides which cells are measured and whether on a tile (vision/tiles.py)."""
    return source_version("stack_net.py", "stacks.py", "tiles.py")


def photo_crops(photo: Path, truth: dict, variant: str, sizes: str) -> dict | None:
    """{"crops", "scalars", "heights", "tilt"} of the cells read_stacks would measure, or None when
    the photo is of no use (training_photos.first_read). A turned or shrunk photo (`variant`) shows the
    stacks lit from another side or at a coarser resolution: new examples, with the same truth."""
    read = first_read(photo, truth, variant, sizes)
    if read is None:
        return None
    world, tiles = read.located, read.located.first.tiles
    activity = edge_activity(world.edges, world.geometry, read.profile, read.stack_cells, tiles)
    measured = [c for c, a in zip(read.stack_cells, activity) if a >= ACTIVITY_GATE]
    crops, scalars = stack_crops(world.colours, world.geometry, read.profile, measured, tiles)
    return {"crops": crops.astype(np.float16), "scalars": scalars,
            "heights": np.array([read.true_heights.get(read.mapped[c], 0) for c in measured], np.int64),
            "tilt": world.geometry.camera.tilt_deg}


def network_inputs(photos: list) -> np.ndarray:
    """(N, C, H, W) network inputs of every photo's crops, kept at half precision (a batch is trained
    at full precision: augmented), made a photo at a time and each photo's crops dropped once made:
    all at once in single precision, 77,000 crops (seeds 41-46) did not fit in 23 GB."""
    x = np.empty((sum(len(p["crops"]) for _, p in photos), 6, CROP_H, CROP_W), np.float16)
    k = 0
    for _, p in photos:
        x[k:k + len(p["crops"])] = network_input(p["crops"]).transpose(0, 3, 1, 2)
        k += len(p["crops"])
        p["crops"] = None
    return x


def augmented(x: np.ndarray, scalars: np.ndarray, rng) -> tuple:
    """A batch as another photo might show it: mirrored, lit brighter or dimmer, a pixel or two off;
    in single precision, whatever the precision `x` is kept in."""
    x, scalars = x.astype(np.float32), scalars.copy()
    flip = rng.random(len(x)) < 0.5
    x[flip] = x[flip][..., ::-1]
    scalars[flip, 2] *= -1
    gain = rng.uniform(0.85, 1.15, (len(x), 1, 1, 1)).astype(np.float32)
    x[:, :1] = x[:, :1] * gain + rng.uniform(-0.1, 0.1, (len(x), 1, 1, 1)).astype(np.float32)
    x[:, 3:4] *= gain
    dy, dx = rng.integers(-2, 3, 2)
    return np.ascontiguousarray(np.roll(x, (int(dy), int(dx)), axis=(2, 3))), scalars


def stack_net() -> ConvNetTorch:
    return ConvNetTorch(6, CROP_H, CROP_W, CROP_SCALARS, MAX_READ + 1)


def main(argv=None):
    args = trainer_args(argv, __doc__.splitlines()[0], "stack_net", epochs=25, variants="",
                        variants_help="; the shipped network was trained on the photos as they are, see BENCHMARKS.md")
    torch.set_num_threads(args.threads)
    photos, group, tilt = gathered_samples(
        args, "crops", crop_version(), photo_crops,
        lambda got: f"{len(got['heights'])} cells, {int((got['heights'] > 0).sum())} stacks", labels="heights")
    x = network_inputs(photos)
    scalars = np.concatenate([p["scalars"] for _, p in photos])
    heights = np.concatenate([p["heights"] for _, p in photos])
    print(f"heights 0..{MAX_READ}: {np.bincount(heights, minlength=MAX_READ + 1).tolist()}", flush=True)
    games = game_samples(args.folders, photos, "heights")
    ratio = game_prior_ratio(heights, games, MAX_READ + 1)
    print(f"chances times {np.round(ratio, 3).tolist()}: the height mix of the game positions", flush=True)
    p = out_of_fold_chances(stack_net, x, scalars, heights, group, args.folds, args.epochs, augmented,
                            args.checkpoints, "stack_net", args.start) * ratio
    p /= p.sum(axis=1, keepdims=True)
    present = p[:, 0] < 0.5
    height = np.argmax(p[:, 1:], axis=1) + 1
    stack = heights > 0
    print(f"  {args.folds}-fold cross-validation, grouped by photo (a height is right only on a found stack):")
    for which, cells in (("every photo", np.ones(len(heights), bool)), ("game positions", games)):
        print(f"  {which}:")
        for name, sel in tilt_bands(tilt):
            sel = sel & cells
            found = present & stack & sel
            print(f"  {name:>10}: stacks {int((stack & sel).sum()):5d}  precision {found.sum() / max((present & sel).sum(), 1):.4f}"
                  f"  recall {found.sum() / max((stack & sel).sum(), 1):.4f}  height right {(height[found] == heights[found]).mean():.4f}")
    share_height = np.take_along_axis(p, height[:, None], 1)[:, 0] / np.maximum(p[:, 1:].sum(axis=1), 1e-9)
    calibration = {
        "present": calibration_table(np.maximum(p[:, 0], 1 - p[:, 0]), (present == stack).astype(float)),
        "height": calibration_table(share_height[stack & present], (height == heights)[stack & present].astype(float)),
    }
    train_and_write(stack_net, x, scalars, heights, args.epochs, args.folds, augmented, args.out_dir, "stack_net",
                    calibration, prior_ratio=ratio, checkpoints=args.checkpoints, start=args.start)


if __name__ == "__main__":
    main()

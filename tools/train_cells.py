"""Train the tile classifier (vision/models/tiles.yml.gz) on rendered photos with exact truth.

    .venv/bin/python tools/train_cells.py renders/train-seed31 [more folders] [--out-dir DIR]

For every photo of the folders (NAME.jpg + NAME.json written by tools/render) the vision pipeline
finds the World and reads its tiles a first time as it would for a user; every cell the tile stage
looks at is then mapped to the true lattice through the true camera. With the true stacks placed
(vision.stacks.place_stacks) hiding what they hide, each cell's tile evidence
(vision.tiles.tile_evidence) is labelled with whether a tile lies there. Evidence is cached beside
each photo (NAME.cells.npz) and recomputed when the stack or tile stage changes.

Prints the classifier's accuracy in a 5-fold cross-validation grouped by photo, then trains on
everything and writes the model. The stacks are read by a network trained with
tools/train_stack_net.py. Never train on sample_images/ or the held-out renders: they are how the
pipeline is measured.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from vision.errors import VisionError  # noqa: E402
from vision.hexgrid import plane_to_cells, ring  # noqa: E402
from vision.loading import load_image  # noqa: E402
from vision.pipeline import first_tile_pass, locate_world  # noqa: E402
from vision.profile import profile_from_json  # noqa: E402
from vision.forest import MODEL_DIR, Forest, calibration_table  # noqa: E402
from vision.stacks import MAX_READ, place_stacks  # noqa: E402
from vision.tiles import tile_evidence  # noqa: E402

MIN_AGREEMENT = 0.8           # share of read tiles that must land on true tiles of their colour


def code_version() -> str:
    """A digest of the stages that make the evidence (the geometry only moves it slightly)."""
    h = hashlib.sha256()
    for name in ("stacks.py", "tiles.py"):
        h.update((REPO / "vision" / name).read_bytes())
    return h.hexdigest()[:16]


def true_cell_of(truth: dict, pixels: np.ndarray) -> list:
    """Axial cells of the true lattice under full-resolution pixels of tile-top points."""
    cam = truth["camera"]
    K, R, t = (np.array(cam[k], float) for k in ("K", "R", "t"))
    z0 = truth["lattice"]["tile_top_z_mm"]
    pitch = truth["lattice"]["pitch_mm"]
    centre = -R.T @ t
    rays = (np.column_stack([pixels, np.ones(len(pixels))]) @ np.linalg.inv(K).T) @ R
    lam = (z0 - centre[2]) / rays[:, 2]
    xy = centre[:2] + lam[:, None] * rays[:, :2]
    # the truth's y axis points north, vision's lattice plane's south (both in pitch units there)
    return [tuple(map(int, c)) for c in plane_to_cells(np.column_stack([xy[:, 0], -xy[:, 1]]) / pitch)]


# the photo as it is, mirrored, turned half round, and mirrored at 70% of its size (a World further away)
VARIANTS = {"": (None, 1.0), "mirror": (1, 1.0), "turn": (-1, 1.0), "small": (1, 0.7)}


def variant_of(bgr: np.ndarray, variant: str):
    """(the variant's image, a function taking its pixels (N, 2) back to the photo's)."""
    flip, size = VARIANTS[variant]
    h, w = bgr.shape[:2]
    if flip is not None:
        bgr = cv2.flip(bgr, flip)
    if size != 1.0:
        bgr = cv2.resize(bgr, (round(w * size), round(h * size)), interpolation=cv2.INTER_AREA)

    def original_pixels(pix):
        pix = (np.array(pix, float) + 0.5) / size - 0.5
        if flip is not None:
            pix[:, 0] = w - 1 - pix[:, 0]
            if flip == -1:
                pix[:, 1] = h - 1 - pix[:, 1]
        return pix

    return bgr, original_pixels


@dataclass
class FirstRead:
    """A training photo as the pipeline first reads it, beside its truth."""
    profile: object
    colours: object
    geo: object
    cells: list                 # the tile stage's candidate cells
    edges: object
    outline: object
    first: object               # the first tile reading
    stack_cells: list           # the cells the stack stage looks at: the read tiles and their ring
    mapped: dict                # cell (of cells and stack_cells) -> the true lattice's cell under it
    true_tiles: dict            # true cell -> colour
    true_heights: dict          # true cell -> height (at most MAX_READ)


def first_read(photo: Path, truth: dict, variant: str) -> FirstRead | None:
    """The pipeline's first read of a photo (or its `variant`), its cells mapped to the true lattice
    through the true camera; None when the World is not found (or found wrong: its read tiles
    disagree with the truth). A mirrored, turned or shrunk photo shows another World, seen by
    another camera: a new example, with the same truth once its pixels are turned back."""
    profile = profile_from_json(truth["profile"])
    bgr, original_pixels = variant_of(cv2.imread(str(photo), cv2.IMREAD_COLOR), variant)
    try:
        image, colours, geo = locate_world(load_image(bgr), profile)
    except VisionError:
        return None
    except cv2.error as exc:        # a failure the pipeline should have caught: say so, go on
        print(f"  {photo.name} {variant}: OpenCV error in the pipeline: {str(exc).strip()[-120:]}", flush=True)
        return None
    cells, edges, outline, first = first_tile_pass(colours, geo)
    tiles = first.tiles
    if not tiles:
        return None
    true_tiles = {(t["q"], t["r"]): t["colour"] for t in truth["position"]["tiles"]}
    true_heights = {(s["q"], s["r"]): min(len(s["discs"]), MAX_READ) for s in truth["position"]["stacks"]}
    stack_cells = sorted(set(tiles) | ring(tiles))
    looked_at = sorted(set(cells) | set(stack_cells))
    mapped = dict(zip(looked_at, true_cell_of(truth, original_pixels(geo.project(looked_at, 0.0)))))
    if np.mean([true_tiles.get(mapped[c]) == col for c, col in tiles.items()]) < MIN_AGREEMENT:
        return None
    return FirstRead(profile, colours, geo, cells, edges, outline, first, stack_cells, mapped, true_tiles,
                     true_heights)


def photo_samples(photo: Path, truth: dict, variant: str) -> dict | None:
    """The labelled tile evidence of one photo's cells ({"tile_X", "tile_y", "tilt"}), or None when
    the photo is of no use (first_read)."""
    read = first_read(photo, truth, variant)
    if read is None:
        return None
    mapped, tiles = read.mapped, read.first.tiles
    hidden = np.zeros(read.colours.world_mask.shape, np.uint8)
    stacked = {c: read.true_heights[mapped[c]] for c in read.stack_cells if mapped[c] in read.true_heights}
    for _ in place_stacks(read.colours, read.geo, read.profile, stacked, tiles, read.edges, hidden):
        pass
    tile_X = tile_evidence(read.colours, read.geo, read.cells, read.outline, hidden, read.first, set(stacked))[0]
    tile_y = [int(mapped[c] in read.true_tiles) for c in read.cells]
    return {"tile_X": tile_X, "tile_y": np.array(tile_y, np.int32), "tilt": read.geo.camera.tilt_deg}


def cached_samples(folder: Path, name: str, version: str, variants, make, describe) -> list:
    """[(folder/photo name, samples)] of every usable photo of `folder` and variant: `make(photo,
    truth, variant)` (None: of no use), cached beside the photo (PHOTO.NAME[-VARIANT].npz) and made
    again when `version` changes; `describe(samples)` is printed for each one made."""
    out = []
    for truth_path in sorted(folder.glob("*.json")):
        try:
            truth = json.loads(truth_path.read_text())
        except json.JSONDecodeError:
            continue
        if not isinstance(truth, dict) or truth.get("format") != "exxit-sample/1":
            continue
        photo = truth_path.with_name(truth["image"])
        for variant in variants:
            cache = truth_path.with_name(f"{truth_path.stem}.{name}{'-' + variant if variant else ''}.npz")
            if cache.exists():
                with np.load(cache) as data:
                    data = dict(data)
                if str(data.pop("version")) == version:
                    if data.pop("usable"):
                        out.append((f"{folder.name}/{photo.name}", data))
                    continue
            got = make(photo, truth, variant)
            label = f"{photo.name}{' ' + variant if variant else ''}"
            if got is None:
                np.savez(cache, version=version, usable=False)
                print(f"  {label}: World not found or wrong, skipped", flush=True)
                continue
            np.savez(cache, version=version, usable=True, **got)
            out.append((f"{folder.name}/{photo.name}", got))
            print(f"  {label}: {describe(got)}", flush=True)
    return out


def cross_validate(X, y, group, classes, folds, trees):
    """(predicted class, its vote share) of each sample by a forest trained without its photo's fold."""
    fold = np.random.default_rng(0).permutation(group.max() + 1)[group] % folds
    pred, share = np.zeros_like(y), np.zeros(len(y))
    for k in range(folds):
        model = Forest.train(X[fold != k], y[fold != k], classes, trees=trees)
        p = model.probabilities(X[fold == k])
        pred[fold == k] = decide(p)
        share[fold == k] = p.max(axis=1)
    return pred, share


def decide(p: np.ndarray) -> np.ndarray:
    """The likeliest class of each row of chances (the rule classify_tiles follows)."""
    return np.argmax(p, axis=1)


def report(name: str, truth: np.ndarray, pred: np.ndarray) -> str:
    found = (pred > 0) & (truth > 0)
    precision = found.sum() / max((pred > 0).sum(), 1)
    recall = found.sum() / max((truth > 0).sum(), 1)
    return f"{name:>14}: tiles {int((truth > 0).sum()):5d}  precision {precision:.4f}  recall {recall:.4f}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="+", type=Path)
    ap.add_argument("--out-dir", type=Path, default=MODEL_DIR)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--trees", type=int, default=100)
    args = ap.parse_args(argv)
    for folder in args.folders:
        if folder.resolve() == (REPO / "sample_images").resolve():
            ap.error("sample_images/ measures the pipeline: train on other renders")
    version = code_version()
    photos = []
    for folder in args.folders:
        print(f"{folder}:", flush=True)
        photos += cached_samples(folder, "cells", version, VARIANTS, photo_samples,
                                 lambda got: f"{len(got['tile_y'])} cells, {int(got['tile_y'].sum())} tiles")
    if len(photos) < args.folds:
        sys.exit(f"train_cells: only {len(photos)} usable photos, need at least {args.folds}")
    print(f"{len({n for n, _ in photos})} photos, {len(photos)} with their variants")
    args.out_dir.mkdir(parents=True, exist_ok=True)
    index = {n: i for i, n in enumerate(dict.fromkeys(n for n, _ in photos))}   # variants: one group

    def gather(kind):
        X = np.concatenate([p[f"{kind}_X"] for _, p in photos])
        y = np.concatenate([p[f"{kind}_y"] for _, p in photos])
        group = np.concatenate([np.full(len(p[f"{kind}_y"]), index[n]) for n, p in photos])
        tilt = np.concatenate([np.full(len(p[f"{kind}_y"]), float(p["tilt"])) for _, p in photos])
        return X, y, group, tilt

    X_tiles, y_tiles, group_tiles, tilt_tiles = gather("tile")
    print(f"tiles: {len(y_tiles)} cells, {int(y_tiles.sum())} tiles")
    tiles, tile_share = cross_validate(X_tiles, y_tiles, group_tiles, 2, args.folds, args.trees)
    show(tiles, y_tiles, tilt_tiles, args.folds)
    # the model's confidence is how often reads of its vote share were right in cross-validation
    out = args.out_dir / "tiles.yml.gz"
    model = Forest.train(X_tiles, y_tiles, 2, trees=args.trees)
    model.calibration = calibration_table(tile_share, (tiles == y_tiles).astype(float))
    model.save(out)
    table = ", ".join(f"{a:.2f}->{b:.2f}" for a, b in zip(*model.calibration))
    print(f"model -> {out} ({out.stat().st_size // 1024} KiB); vote share -> right: {table}")


def show(pred, y, tilt, folds):
    print(f"  {folds}-fold cross-validation, grouped by photo:")
    print(report("all", y, pred))
    for lo, hi in ((0, 15), (15, 35), (35, 90)):
        sel = (tilt >= lo) & (tilt < hi)
        print(report(f"tilt {lo}-{min(hi, 60)}", y[sel], pred[sel]))


if __name__ == "__main__":
    main()

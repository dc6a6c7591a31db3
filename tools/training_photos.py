"""The training photos as the vision pipeline reads them, for the tools that train its networks
(tools/train_tile_net.py, tools/train_stack_net.py).

A folder of rendered photos (NAME.jpg + NAME.json written by tools/render) holds exact truth: for
every photo the pipeline finds the World and reads its tiles a first time, as it would for a user
(first_read); every cell it looks at is then mapped to the true lattice through the true camera.
What a trainer learns from a photo is cached beside it (cached_samples) and made again when the
code that makes it changes. Never train on sample_images/ or the held-out renders: they are how
the pipeline is measured (refuse_measuring_sets).
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

from rules.position import DISCS_PER_COLOUR  # noqa: E402
from vision.convnet import MODEL_DIR  # noqa: E402
from vision.errors import VisionError  # noqa: E402
from vision.hexgrid import plane_to_cells, ring  # noqa: E402
from vision.loading import load_image  # noqa: E402
from vision.pipeline import LocatedWorld, locate_world  # noqa: E402
from vision.profile import load_profile, profile_from_json  # noqa: E402
from vision.stacks import MAX_READ, place_stacks  # noqa: E402
from vision.tile_net import tile_input  # noqa: E402
from vision.tiles import tile_evidence  # noqa: E402

MIN_AGREEMENT = 0.8           # share of read tiles that must land on true tiles of their colour
# every set the pipeline is measured on (BENCHMARKS.md), the development sets too: those named below, and any
# folder, wherever it lies, whose name starts with one of MEASURING_KINDS (every unseen batch a session reports)
MEASURING_SETS = ("sample_images", "renders/train-seed37", "renders/sizes-seed48", "renders/plain-seed48")
MEASURING_KINDS = ("fresh-", "hands-", "dev-", "holdout-")
SIZES_READ_WITH = ("rendered", "edition")
TILT_BANDS = (("all", 0, 90), ("tilt 0-15", 0, 15), ("tilt 15-35", 15, 35), ("tilt 35-60", 35, 90))


def trainer_args(argv, description: str, network: str, epochs: int, variants: str, variants_help: str,
                 own_arguments=None):
    """The arguments the trainer of `network` (its weights' name, e.g. "stack_net") takes (folders of
    renders, --out-dir, --folds, --epochs, --threads, --variants, --checkpoints, --sizes,
    --start-from, and those `own_arguments(parser)` adds), parsed: the measuring sets refused, the
    variants checked, and `args.start` the weights --start-from names (DIR/NETWORK.npz), None
    without it."""
    ap = argparse.ArgumentParser(description=description)
    if own_arguments is not None:
        own_arguments(ap)
    ap.add_argument("folders", nargs="+", type=Path)
    ap.add_argument("--out-dir", type=Path, default=MODEL_DIR)
    ap.add_argument("--folds", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=epochs)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--checkpoints", type=Path, metavar="DIR",
                    help="save every training (each fold's, the final one) in DIR after each epoch, and go on "
                         "from there when run again: a training cut short loses at most an epoch")
    ap.add_argument("--sizes", choices=SIZES_READ_WITH, default="rendered",
                    help="the piece sizes the photos are read with: those rendered (the truth's profile, as after "
                         "python -m calibration profile; the shipped networks) or the edition's (as vision reads "
                         "a set nobody measured; renders of tools/render/plan.py --sizes-off differ)")
    ap.add_argument("--start-from", type=Path, metavar="DIR",
                    help=f"fine-tune the network DIR/{network}.npz (as vision loads it, e.g. vision/models) on "
                         "these photos instead of training one from scratch")
    ap.add_argument("--variants", default=variants,
                    help=f"comma-separated, of {sorted(VARIANTS)} ('' is the photo as it is{variants_help})")
    args = ap.parse_args(argv)
    refuse_measuring_sets(ap, args.folders)
    args.variants = parse_variants(ap, args.variants)
    args.start = None
    if args.start_from is not None:
        weights = args.start_from / f"{network}.npz"
        if not weights.is_file():
            ap.error(f"--start-from {args.start_from}: no {network}.npz there")
        with np.load(weights) as data:
            args.start = dict(data)
    return args


def refuse_measuring_sets(ap, folders) -> None:
    """Stop (argparse's error) if any of `folders` is a set the pipeline is measured on: one of
    MEASURING_SETS, or any folder whose name starts with one of MEASURING_KINDS."""
    for folder in folders:
        path = Path(folder).resolve()
        if path.name.startswith(MEASURING_KINDS) or any(path == (REPO / m).resolve() for m in MEASURING_SETS):
            ap.error(f"{folder} measures the pipeline: train on other renders")


def parse_variants(ap, text: str) -> list:
    """The variants named in `text` (comma-separated keys of VARIANTS, '' the photo as it is);
    argparse's error for an unknown one."""
    variants = text.split(",")
    unknown = set(variants) - set(VARIANTS)
    if unknown:
        ap.error(f"--variants: unknown {sorted(unknown)}; choose from {sorted(VARIANTS)}")
    return variants


def source_version(*names) -> str:
    """A digest of vision's source files `names`: a cache made by them is stale once it differs."""
    h = hashlib.sha256()
    for name in names:
        h.update((REPO / "vision" / name).read_bytes())
    return h.hexdigest()[:16]


def tile_version() -> str:
    """A digest of the stages that make a cell's tile samples (the geometry only moves them
    slightly)."""
    return source_version("stacks.py", "tiles.py", "tile_net.py")


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
# name -> (cv2.flip code or None, scale, worn: a real camera's losses drawn for each photo, worn_photo)
VARIANTS = {"": (None, 1.0, False), "mirror": (1, 1.0, False), "turn": (-1, 1.0, False), "small": (1, 0.7, False),
            "worn": (None, 1.0, True)}


def worn_photo(bgr: np.ndarray, rng) -> tuple:
    """(the photo as a worse camera or room gives it, its scale): each with a chance of one half,
    under-exposed (0.35-1 of the light), out of focus (Gaussian, sigma 0.5-2 px at 1600 wide),
    smaller (560-1100 px on its longer side), sensor noise (sigma 2-9 grey levels), heavily
    compressed (JPEG 30-75). The renders' own camera (tools/render/photo.py) is milder than real
    photos; bench/vision_robustness.py measures what each of these costs the reading."""
    h, w = bgr.shape[:2]
    if rng.random() < 0.5:
        linear = (bgr.astype(np.float32) / 255.0) ** 2.2 * rng.uniform(0.35, 1.0)
        bgr = (linear ** (1 / 2.2) * 255 + 0.5).astype(np.uint8)
    if rng.random() < 0.5:
        bgr = cv2.GaussianBlur(bgr, (0, 0), rng.uniform(0.5, 2.0) * w / 1600)
    scale = min(1.0, rng.uniform(560, 1100) / max(h, w)) if rng.random() < 0.5 else 1.0
    if scale < 1.0:
        bgr = cv2.resize(bgr, (round(w * scale), round(h * scale)), interpolation=cv2.INTER_AREA)
    if rng.random() < 0.5:
        bgr = np.clip(bgr + rng.normal(0.0, rng.uniform(2.0, 9.0), bgr.shape), 0, 255).astype(np.uint8)
    if rng.random() < 0.5:
        quality = int(rng.integers(30, 76))
        bgr = cv2.imdecode(cv2.imencode(".jpg", bgr, [cv2.IMWRITE_JPEG_QUALITY, quality])[1], cv2.IMREAD_COLOR)
    return bgr, scale


def variant_of(bgr: np.ndarray, variant: str, name: str = ""):
    """(the variant's image, a function taking its pixels (N, 2) back to the photo's); a worn
    variant's losses are drawn from the photo's `name`, the same every time."""
    flip, size, worn = VARIANTS[variant]
    h, w = bgr.shape[:2]
    if flip is not None:
        bgr = cv2.flip(bgr, flip)
    if size != 1.0:
        bgr = cv2.resize(bgr, (round(w * size), round(h * size)), interpolation=cv2.INTER_AREA)
    if worn:
        seed = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "little")
        bgr, scale = worn_photo(bgr, np.random.default_rng(seed))
        size *= scale

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
    located: LocatedWorld       # the World's colours, geometry and first tile reading (located.first)
    stack_cells: list           # the cells the stack stage looks at: the read tiles and their ring
    mapped: dict                # cell (of located.cells and stack_cells) -> the true lattice's cell under it
    true_tiles: dict            # true cell -> colour
    true_heights: dict          # true cell -> height (at most MAX_READ)


def first_read(photo: Path, truth: dict, variant: str, sizes: str) -> FirstRead | None:
    """The pipeline's first read of a photo (or its `variant`), its cells mapped to the true lattice
    through the true camera; None when the World is not found (or found wrong: its read tiles
    disagree with the truth). A mirrored, turned or shrunk photo shows another World, seen by
    another camera: a new example, with the same truth once its pixels are turned back. `sizes`
    (SIZES_READ_WITH): read with the profile of the pieces rendered, or with their edition's."""
    profile = profile_from_json(truth["profile"]) if sizes == "rendered" else load_profile(truth["profile"]["name"])
    bgr, original_pixels = variant_of(cv2.imread(str(photo), cv2.IMREAD_COLOR), variant, photo.name)
    try:
        located = locate_world(load_image(bgr), profile)
    except VisionError:
        return None
    except cv2.error as exc:        # a failure the pipeline should have caught: say so, go on
        print(f"  {photo.name} {variant}: OpenCV error in the pipeline: {str(exc).strip()[-120:]}", flush=True)
        return None
    geo, tiles = located.geometry, located.first.tiles
    true_tiles = {(t["q"], t["r"]): t["colour"] for t in truth["position"]["tiles"]}
    true_heights = {(s["q"], s["r"]): min(len(s["discs"]), MAX_READ) for s in truth["position"]["stacks"]}
    stack_cells = sorted(set(tiles) | ring(tiles))
    looked_at = sorted(set(located.cells) | set(stack_cells))
    mapped = dict(zip(looked_at, true_cell_of(truth, original_pixels(geo.project(looked_at, 0.0)))))
    if np.mean([true_tiles.get(mapped[c]) == col for c, col in tiles.items()]) < MIN_AGREEMENT:
        return None
    return FirstRead(profile, located, stack_cells, mapped, true_tiles, true_heights)


def tile_samples(photo: Path, truth: dict, variant: str, sizes: str) -> dict | None:
    """What the tile network learns from one photo's cells, with the true stacks hiding what they
    hide: {"tile_X": evidence (vision.tiles.tile_evidence), "tile_crops": pictures
    (vision.tile_net.tile_input), "tile_y": whether a tile lies there, "tilt"}; None when the photo
    is of no use (first_read)."""
    read = first_read(photo, truth, variant, sizes)
    if read is None:
        return None
    mapped, world = read.mapped, read.located
    colours, geo, cells, tiles = world.colours, world.geometry, world.cells, world.first.tiles
    hidden = np.zeros(colours.world_mask.shape, np.uint8)
    stacked = {c: read.true_heights[mapped[c]] for c in read.stack_cells if mapped[c] in read.true_heights}
    for _ in place_stacks(colours, geo, read.profile, stacked, tiles, world.edges, hidden):
        pass
    tile_X = tile_evidence(colours, geo, cells, world.outline, hidden, world.first, set(stacked))[0]
    tile_y = [int(mapped[c] in read.true_tiles) for c in cells]
    return {"tile_X": tile_X, "tile_y": np.array(tile_y, np.int32), "tilt": geo.camera.tilt_deg,
            "tile_crops": tile_input(colours, geo, cells, hidden).astype(np.float16)}


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


def gathered_samples(args, name: str, version: str, make, describe, labels: str):
    """(photos, group, tilt) for a trainer: the cached samples of every folder of `args`
    (cached_samples; `make(photo, truth, variant, sizes)` with the sizes args.sizes, which the cache's
    version names), and for each of their `labels` the photo's index (a photo's variants are one
    group) and its camera's tilt. Exits when there are fewer usable photos than folds."""
    photos = []
    read_with_sizes = lambda photo, truth, variant: make(photo, truth, variant, args.sizes)
    for folder in args.folders:
        print(f"{folder}:", flush=True)
        photos += cached_samples(folder, name, f"{version}-{args.sizes}", args.variants, read_with_sizes, describe)
    index = {n: i for i, n in enumerate(dict.fromkeys(n for n, _ in photos))}
    if len(index) < args.folds:
        sys.exit(f"{Path(sys.argv[0]).name}: only {len(index)} usable photos, need at least {args.folds}")
    group = np.concatenate([np.full(len(p[labels]), index[n]) for n, p in photos])
    tilt = np.concatenate([np.full(len(p[labels]), float(p["tilt"])) for _, p in photos])
    print(f"{len(index)} photos, {len(photos)} with their variants, {len(group)} cells", flush=True)
    return photos, group, tilt


def tilt_bands(tilt: np.ndarray):
    """(name, selection) of the samples in each tilt band, all of them first."""
    return [(band, (tilt >= lo) & (tilt < hi)) for band, lo, hi in TILT_BANDS]


def game_samples(folders, photos, labels: str) -> np.ndarray:
    """Which samples of `photos` ([(FOLDER/PHOTO name, samples)], as gathered_samples gives them)
    come from a game's position: not from a photo whose discs were regrouped (tools/render/plan.py
    --wants restacked, crowded or towers, marked "regrouped" in the truth's meta), nor from one with
    more than DISCS_PER_COLOUR of a colour (crowded photos rendered before that mark)."""
    where = {Path(f).name: Path(f) for f in folders}
    out = []
    for name, samples in photos:
        folder, photo = name.split("/", 1)
        truth = json.loads((where[folder] / photo).with_suffix(".json").read_text())
        discs = [d for s in truth["position"]["stacks"] for d in s["discs"]]
        game = (truth.get("meta", {}).get("regrouped") is None
                and max(discs.count("white"), discs.count("black")) <= DISCS_PER_COLOUR)
        out.append(np.full(len(samples[labels]), game))
    return np.concatenate(out)


def game_prior_ratio(labels: np.ndarray, of_games: np.ndarray, classes: int) -> np.ndarray:
    """Per class (for the stack network: no stack, 1..8 discs) how much more often the samples of
    game positions have it than all samples. Regrouped photos teach a network tall stacks, and with
    them a prior no game has; its chances are multiplied back to the games' mix. A class only the
    regrouped photos have counts half a sample in the games (as rare as they can tell); a class
    nobody has, or every class when no photo is of a game, keeps 1."""
    count = lambda h: np.bincount(h, minlength=classes).astype(float)
    every, games = count(labels), count(labels[of_games])
    ratio = np.ones(classes)
    if games.sum() == 0:
        return ratio
    seen = every > 0
    games[seen] = np.maximum(games[seen], 0.5)
    ratio[seen] = (games[seen] / games.sum()) / (every[seen] / every.sum())
    return ratio

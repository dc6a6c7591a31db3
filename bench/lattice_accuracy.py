"""How far is the World's fitted lattice from the true one?

    .venv/bin/python bench/lattice_accuracy.py FOLDER [--only PREFIX,...] [--jobs 2] [--worst N] [--json OUT]

Locates the World in every photo of FOLDER that has a truth file (exxit-sample/1; geometry alone,
vision.pipeline.locate_world, with the photo's edition's profile) and measures the fitted lattice and
camera against the render's true tile centres: for every true tile (seen or hidden by a stack), the
distance of its true centre on the tile tops from the nearest lattice point, in units of the pitch (the
truth's cells off the World are where their stacks were set down, not cell centres). No alignment
of cell names is needed, so a four-tile opening, which matches itself turned by 180 degrees, is measured
like any World. A stack crop is cut at its cell's lattice point, so a lattice a tenth of a cell off
misplaces every crop by a few millimetres (BENCHMARKS.md, sessions 51 and 52).

Prints, for the whole folder and by tilt band: photos, World found, the lattice right (every true tile
within a fifth of a cell of a lattice point), the median over photos of each photo's median tile error,
its 90th percentile and, of the photos whose World was found, the share whose median tile error passes
0.05 of a cell; then the `--worst` photos.
"""
from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from vision_accuracy import load_truths  # noqa: E402

WRONG = 0.2          # a tile centre this far (pitch units) from every lattice point: the lattice is wrong
OFF = 0.05           # a photo whose median tile error passes this has its crops misplaced
BANDS = (("0-15", 0, 15), ("15-35", 15, 35), ("35-60", 35, 90))


def lattice_offsets(geo, pixels: np.ndarray) -> np.ndarray:
    """Per true tile centre (full-resolution `pixels`, on the tile tops), its distance from the
    nearest lattice point of `geo`, in pitch units."""
    from vision.hexgrid import cells_to_plane, plane_to_cells
    plane = geo.camera.pixel_to_plane(pixels) / geo.pitch_mm
    return np.linalg.norm(plane - cells_to_plane([tuple(c) for c in plane_to_cells(plane)]), axis=1)


def measure(task) -> dict:
    """One photo's row: World found, its tiles' errors (median, max)."""
    from vision.errors import VisionError
    from vision.loading import load_image
    from vision.pipeline import locate_world
    from vision.profile import load_profile
    path, truth = task
    meta = truth.get("meta", {})
    row = {"name": Path(path).stem, "tilt": float(meta.get("tilt_deg", truth.get("camera", {}).get("tilt_deg", 0.0))),
           "table": meta.get("table"), "found": False}
    profile = load_profile(meta.get("edition"))
    try:
        located = locate_world(load_image(path), profile)
    except VisionError:
        return row
    pixels = np.array([c["pixel"] for c in truth["pixels"]["cells"] if c["tile"]], float)
    offsets = lattice_offsets(located.geometry, pixels)
    row.update(found=True, tiles=len(pixels), tile_median=float(np.median(offsets)),
               tile_max=float(offsets.max()), lattice_right=bool(offsets.max() <= WRONG))
    return row


def summary(rows: list) -> dict:
    found = [r for r in rows if r["found"]]
    medians = np.array([r["tile_median"] for r in found])
    return {"photos": len(rows), "World found": len(found) / max(len(rows), 1),
            "lattice right": sum(r["lattice_right"] for r in found) / max(len(rows), 1),
            "median tile error": float(np.median(medians)) if len(found) else float("nan"),
            "90th percentile": float(np.percentile(medians, 90)) if len(found) else float("nan"),
            f"photos over {OFF}": float((medians > OFF).mean()) if len(found) else float("nan")}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", help="folder of NAME.jpg + NAME.json (tools/render truth)")
    ap.add_argument("--only", help="comma-separated name prefixes of the photos to measure")
    ap.add_argument("--jobs", type=int, default=2, help="processes locating Worlds at once")
    ap.add_argument("--worst", type=int, default=5, help="how many of the photos with the largest tile error to list")
    ap.add_argument("--json", metavar="OUT", help="also write every photo's row and the summaries")
    args = ap.parse_args(argv)
    if not Path(args.folder).is_dir():
        ap.error(f"{args.folder} is not a folder")
    items = [(str(image), truth) for image, truth in load_truths(Path(args.folder))
             if (not args.only or image.name.startswith(tuple(args.only.split(","))))
             and any(c["tile"] for c in truth.get("pixels", {}).get("cells", []))]
    if not items:
        ap.error(f"no photos with truth (exxit-sample/1, with its tiles' pixels) in {args.folder}")
    with ProcessPoolExecutor(max(1, args.jobs)) as pool:
        rows = list(pool.map(measure, items, chunksize=4))
    groups = {"all": rows}
    for name, lo, hi in BANDS:
        groups[f"tilt {name}"] = [r for r in rows if lo <= r["tilt"] < hi]
    summaries = {name: summary(group) for name, group in groups.items() if group}
    labels = list(next(iter(summaries.values())))
    print(f"lattice accuracy on {len(rows)} photos of {args.folder} (errors in units of the pitch)")
    print(f"{'':12s}" + "".join(f"{label:>21s}" for label in labels))
    for name, s in summaries.items():
        cells = [f"{s[label]:21d}" if label == "photos" else
                 f"{100 * s[label]:20.1f}%" if label in ("World found", "lattice right", f"photos over {OFF}") else
                 f"{s[label]:21.3f}" for label in labels]
        print(f"{name:12s}" + "".join(cells))
    worst = sorted((r for r in rows if r["found"]), key=lambda r: -r["tile_median"])[:max(args.worst, 0)]
    if worst:
        print("largest tile errors: " + ", ".join(f"{r['name']} {r['tile_median']:.3f} ({r['tiles']} tiles)" for r in worst))
    missed = [r["name"] for r in rows if not r["found"]]
    if missed:
        print("no World found: " + ", ".join(missed))
    if args.json:
        Path(args.json).write_text(json.dumps({"summaries": summaries, "photos": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

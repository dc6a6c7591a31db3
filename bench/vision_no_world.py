"""How often does vision find a World in a photo that shows none?

    .venv/bin/python bench/vision_no_world.py sample_images [--jobs 2] [--json OUT]

Cuts from every photo of FOLDER that has a truth file (exxit-sample/1) the widest strip beside its
World: the part of the photo left of, right of, above or below the box around the truth's cells
(the World and its perimeter) and its stacks' tops, that box widened by MARGIN of its longer side
and MARGIN_OF_PHOTO of the photo's. What such a strip shows is what lies about a World on a table:
the table itself, piles of spare tiles, reserve discs, a cup or a phone; no World. Strips under
MIN_SIDE pixels across are left out. Each is read as a photo with its edition's profile,
in-process (vision.analyze_photo, `--jobs` processes); a reading that finds a World there is a
false World, where the CLI should have said that it found none (exit 3). Prints how many strips
were read and how many held a false World, naming each with the tiles read on it; the last line
reads `false_worlds=N strips=N`.
"""
from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import cv2
import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from vision_accuracy import load_truths  # noqa: E402

MARGIN = 0.08                   # of the World's box's longer side, around it
MARGIN_OF_PHOTO = 0.04          # of the photo's longer side, around it too (a tall stack's side, a shadow)
MIN_SIDE = 300                  # pixels across a strip at least


def strip_beside_world(image: np.ndarray, truth: dict) -> tuple | None:
    """(strip, side) of the widest part of `image` clear of its World (its truth's cells and stack
    tops, with the margins), side one of "left", "right", "above", "below"; None when that part is
    under MIN_SIDE pixels across."""
    pixels = truth["pixels"]
    points = np.array([c["pixel"] for c in pixels["cells"]] + [s["top_pixel"] for s in pixels["stacks"]], float)
    h, w = image.shape[:2]
    (x0, y0), (x1, y1) = points.min(axis=0), points.max(axis=0)
    margin = MARGIN * max(x1 - x0, y1 - y0) + MARGIN_OF_PHOTO * max(h, w)
    x0, y0 = int(max(0, x0 - margin)), int(max(0, y0 - margin))
    x1, y1 = int(min(w, np.ceil(x1 + margin))), int(min(h, np.ceil(y1 + margin)))
    parts = {"left": image[:, :x0], "right": image[:, x1:], "above": image[:y0], "below": image[y1:]}
    side, strip = max(parts.items(), key=lambda part: part[1].shape[0] * part[1].shape[1])
    if min(strip.shape[:2]) < MIN_SIDE:
        return None
    return np.ascontiguousarray(strip), side


def read_strip(task) -> dict | None:
    """The row of one photo's strip: its name, side and size, and the tiles vision read on it (None
    where it found no World); None when the photo has no strip wide enough."""
    import vision
    path, truth = task
    cut = strip_beside_world(cv2.imread(str(path)), truth)
    if cut is None:
        return None
    strip, side = cut
    try:
        tiles = len(vision.analyze_photo(strip, truth["meta"].get("edition")).tiles.tiles)
    except vision.VisionError:
        tiles = None
    return {"name": Path(path).stem, "side": side, "size": [strip.shape[1], strip.shape[0]], "tiles": tiles}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", help="folder of NAME.jpg + NAME.json (tools/render truth)")
    ap.add_argument("--jobs", type=int, default=2, help="processes reading strips at once")
    ap.add_argument("--json", metavar="OUT", help="also write every strip's row")
    args = ap.parse_args(argv)
    if args.jobs < 1:
        ap.error("--jobs takes 1 or more")
    if not Path(args.folder).is_dir():
        ap.error(f"{args.folder} is not a folder")
    tasks = [(str(image), truth) for image, truth in load_truths(Path(args.folder))]
    if not tasks:
        ap.error(f"no photos with truth (exxit-sample/1) in {args.folder}")
    with ProcessPoolExecutor(args.jobs) as pool:
        rows = [row for row in pool.map(read_strip, tasks, chunksize=4) if row is not None]
    false_worlds = [row for row in rows if row["tiles"] is not None]
    print(f"vision on the strips beside the World of {len(tasks)} photos of {args.folder}: "
          f"{len(rows)} strips of {MIN_SIDE} px across or more")
    for row in false_worlds:
        print(f"  {row['name']} ({row['side']}, {row['size'][0]}x{row['size'][1]}): a World of {row['tiles']} tile(s)")
    share = len(false_worlds) / len(rows) if rows else float("nan")
    print(f"no World found on {len(rows) - len(false_worlds)} of {len(rows)}; a false World on {len(false_worlds)} "
          f"({100 * share:.1f}%)")
    if args.json:
        Path(args.json).write_text(json.dumps({"strips": rows}, indent=1))
    print(f"false_worlds={len(false_worlds)} strips={len(rows)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How long does vision take per photo, in one process (as the web app runs it)?

    .venv/bin/python bench/vision_speed.py sample_images [--size 4000x3000] [--count N] [--repeat 2]

Loads the models with one warm-up call, then times `vision.analyze_photo` on the JPEG bytes of
every photo of FOLDER (or the first N), each `--repeat` times, and prints the median and 95th
percentile of the wall time and of each stage's time (the reading's own `timing`). `--size WxH`
first rescales every photo to that size and re-encodes it (JPEG quality 92), to time large camera
photos. Photos where no World is found are timed too (they end early, with exit 3 in the CLI);
the last line reads `median_s=N p95_s=N`.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import cv2
import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from vision import analyze_photo  # noqa: E402
from vision.errors import VisionError  # noqa: E402


def photo_bytes(path: Path, size) -> bytes:
    if size is None:
        return path.read_bytes()
    image = cv2.imread(str(path))
    if image is None:
        raise SystemExit(f"vision_speed: cannot read {path}")
    ok, data = cv2.imencode(".jpg", cv2.resize(image, size, interpolation=cv2.INTER_CUBIC),
                            [cv2.IMWRITE_JPEG_QUALITY, 92])
    return data.tobytes()


def percentile(values, p) -> float:
    return float(np.percentile(values, p)) if values else float("nan")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--size", help="rescale every photo to WIDTHxHEIGHT first (e.g. 4000x3000)")
    ap.add_argument("--count", type=int, help="only the first N photos")
    ap.add_argument("--repeat", type=int, default=2, help="timed runs per photo")
    args = ap.parse_args(argv)
    size = None
    if args.size:
        try:
            size = tuple(int(v) for v in args.size.lower().split("x"))
            if len(size) != 2 or min(size) < 1:
                raise ValueError
        except ValueError:
            ap.error(f"--size {args.size!r}: expected WIDTHxHEIGHT, e.g. 4000x3000")
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    photos = sorted(p for p in args.folder.glob("*") if p.suffix.lower() in (".jpg", ".jpeg", ".png", ".webp"))
    if not photos:
        sys.exit(f"vision_speed: no photos in {args.folder}")
    photos = photos[:args.count] if args.count else photos
    data = [photo_bytes(p, size) for p in photos]
    try:
        analyze_photo(data[0])                     # imports, models, caches: once, as in the web app
    except VisionError:
        pass
    walls, stages, no_world = [], {}, 0
    for blob in data:
        for _ in range(args.repeat):
            started = time.perf_counter()
            try:
                reading = analyze_photo(blob)
            except VisionError:
                walls.append(time.perf_counter() - started)
                no_world += 1
                continue
            walls.append(time.perf_counter() - started)
            for stage, seconds in reading.timing.items():
                stages.setdefault(stage, []).append(seconds)
    label = f"{size[0]}x{size[1]}" if size else "as stored"
    print(f"vision speed, in one process: {len(photos)} photos of {args.folder} ({label}), "
          f"{args.repeat} runs each; {no_world} runs found no World")
    for stage, values in stages.items():
        print(f"  {stage:12s} median {statistics.median(values):.3f} s   p95 {percentile(values, 95):.3f} s")
    print(f"median_s={statistics.median(walls):.3f} p95_s={percentile(walls, 95):.3f}")


if __name__ == "__main__":
    main()

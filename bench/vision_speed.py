"""How long does vision take per photo, in one process (as the web app runs it)?

    .venv/bin/python bench/vision_speed.py sample_images [--size 4000x3000] [--count N] [--repeat 2]

Loads the models with one warm-up call, then times `vision.analyze_photo` on the JPEG bytes of
every photo of FOLDER (or the first N), each `--repeat` times, and prints the median and 95th
percentile of the wall time and of each stage's time (the reading's own `timing`). `--size WxH`
first rescales every photo to that size and re-encodes it (JPEG quality 92), to time large camera
photos. Photos where no World is found are timed too (they end early, with exit 3 in the CLI);
the last line reads `median_s=N p95_s=N`.

    .venv/bin/python bench/vision_speed.py sample_images --against /tmp/old

times this checkout against another one (e.g. made by `git worktree add /tmp/old HEAD~1`), for a
change whose gain is smaller than the machine's drift between runs: each checkout reads in its own
process, the two in turns photo by photo, and the figure is the median of the per-photo ratios of
their times. It also says on how many photos their readings differ. The last line then reads
`median_ratio=N differ=N` (this checkout's time over the other's).
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
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
    ap.add_argument("--against", type=Path, metavar="CHECKOUT",
                    help="time this checkout against another one, in turns (see above)")
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
    label = f"{size[0]}x{size[1]}" if size else "as stored"
    if args.against:
        if not (args.against / "vision" / "__init__.py").is_file():
            ap.error(f"--against {args.against}: not a checkout of this project (it has no vision/)")
        compare_checkouts(data, args, label)
        return
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
    print(f"vision speed, in one process: {len(photos)} photos of {args.folder} ({label}), "
          f"{args.repeat} runs each; {no_world} runs found no World")
    for stage, values in stages.items():
        print(f"  {stage:12s} median {statistics.median(values):.3f} s   p95 {percentile(values, 95):.3f} s")
    print(f"median_s={statistics.median(walls):.3f} p95_s={percentile(walls, 95):.3f}")


WORKER = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
from vision import analyze_photo
from vision.errors import VisionError
for line in sys.stdin:
    data = open(line.rstrip("\\n"), "rb").read()
    started = time.perf_counter()
    try:
        reading = analyze_photo(data).to_json()
        reading.pop("timing", None)
    except VisionError as exc:
        reading = {"error": str(exc)}
    print(json.dumps({"seconds": time.perf_counter() - started, "reading": reading}, sort_keys=True), flush=True)
"""


class Reader:
    """One checkout's vision in its own process, reading photos (paths) one at a time."""

    def __init__(self, checkout: Path):
        self.checkout = checkout
        self.process = subprocess.Popen([sys.executable, "-c", WORKER, str(checkout)], cwd=checkout,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True)

    def read(self, path: Path) -> tuple:
        """(seconds, the reading as JSON text without its timing)."""
        self.process.stdin.write(f"{path}\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            self.process.kill()
            sys.exit(f"vision_speed: the vision of {self.checkout} stopped:\n{self.process.stderr.read()[-2000:]}")
        answer = json.loads(line)
        return answer["seconds"], json.dumps(answer["reading"], sort_keys=True)

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=60)


def compare_checkouts(data: list, args, label: str):
    """Paired timing of this checkout and `args.against` (see the module's docstring)."""
    readers = {"this": Reader(REPO), "other": Reader(args.against.resolve())}
    times = {side: [] for side in readers}
    readings = {side: [] for side in readers}
    with tempfile.TemporaryDirectory() as folder:
        paths = []
        for i, blob in enumerate(data):
            paths.append(Path(folder) / f"{i:04d}.jpg")
            paths[-1].write_bytes(blob)
        for side, reader in readers.items():
            reader.read(paths[0])                  # imports, models, caches: once
        for run in range(args.repeat):
            for i, path in enumerate(paths):
                for side in (("this", "other") if (i + run) % 2 == 0 else ("other", "this")):
                    seconds, reading = readers[side].read(path)
                    times[side].append(seconds)
                    if run == 0:
                        readings[side].append(reading)
    for reader in readers.values():
        reader.close()
    ratios = list(np.array(times["this"]) / np.array(times["other"]))
    differ = sum(a != b for a, b in zip(readings["this"], readings["other"]))
    print(f"paired timing: {len(data)} photos of {args.folder} ({label}), {args.repeat} runs each, "
          f"this checkout and {args.against} in turns, each in its own process")
    for side, values in times.items():
        print(f"  {side:6s} median {statistics.median(values):.3f} s   p95 {percentile(values, 95):.3f} s")
    print(f"  time per photo, this / other: median {np.median(ratios):.3f} "
          f"(10-90%: {percentile(ratios, 10):.3f} - {percentile(ratios, 90):.3f})")
    print(f"  readings: {differ} of {len(data)} photos read differently")
    print(f"median_ratio={np.median(ratios):.3f} differ={differ}")


if __name__ == "__main__":
    main()

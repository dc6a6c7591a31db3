"""How well does vision read photos that differ from the renders the way real photos do?

    .venv/bin/python bench/vision_robustness.py sample_images [--changes NAME,...] [--only PREFIX,...]
        [--jobs 2] [--json OUT]

Reads every photo of FOLDER that has a truth file (exxit-sample/1) as rendered and changed the ways
a real camera or a real room changes a photo, each with its edition's profile, in-process
(vision.analyze_photo, `--jobs` processes), and prints for each change the measures of
bench/vision_accuracy.py (its score_image and summarise): World found and exactly right, tile cells,
stacks found, top colours, heights, forced dances, score, and the median seconds a photo. The
renders are clean in ways real photos are not (chesscog's renders read 94% of boards right, real
phone photos 2%); this says which of those ways costs the reading most. Changes (`--changes`):

  as-rendered    the photo itself
  1024x768       a smaller photo (a webcam's, a video frame's), and 640x480
  jpeg-35        heavy JPEG compression (a messaging app, a video stream)
  blur-2         out of focus (Gaussian, sigma 2 px at 1600x1200)
  shake-9        a shaking hand: the camera moved 9 px (at 1600x1200) across the exposure, 30° from
                 the horizontal
  noise-8        a dim room's sensor noise (Gaussian, sigma 8 grey levels a channel)
  dark-0.4       under-exposed: 0.4 times the light, as a camera that did not adjust
  lens-k1-0.3    a wide webcam's barrel distortion (tools/lens_distort.py), read without, and
  lens-k1-0.3+camera  with the lens's camera file (`vision analyze --camera`)
"""
from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import cv2
import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from vision_accuracy import load_truths, score_image, summarise  # noqa: E402

SIZE = (1600, 1200)                     # the size the blur is given at; other photos are scaled
QUALITY = 92                            # JPEG quality a changed photo is handed over at
LENS_K1 = -0.3
MEASURES = {"no World found": "no World", "World exactly right": "World exact", "tile accuracy per cell": "tile cells",
            "stack precision": "stacks P", "stack recall": "stacks R", "top colour right": "top colour",
            "height exactly right": "heights", "forced dances exactly right": "dances", "score exactly right": "score"}


@functools.cache
def _lens_distort():
    """tools/lens_distort.py, loaded once per process."""
    spec = importlib.util.spec_from_file_location("lens_distort", REPO / "tools" / "lens_distort.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _resized(size):
    return lambda image, truth: (cv2.resize(image, size, interpolation=cv2.INTER_AREA), None, QUALITY)


def _blurred(image, truth):
    sigma = 2.0 * image.shape[1] / SIZE[0]
    return cv2.GaussianBlur(image, (0, 0), sigma), None, QUALITY


def _shaken(image, truth):
    length = 9.0 * image.shape[1] / SIZE[0]
    size = int(np.ceil(length)) | 1
    kernel = np.zeros((size, size), np.float32)
    c = size // 2
    dx, dy = np.cos(np.radians(30)) * length / 2, -np.sin(np.radians(30)) * length / 2
    cv2.line(kernel, (round(c * 16 - dx * 16), round(c * 16 - dy * 16)), (round(c * 16 + dx * 16), round(c * 16 + dy * 16)),
             1.0, 1, cv2.LINE_AA, shift=4)
    return cv2.filter2D(image, -1, kernel / kernel.sum()), None, QUALITY


def _noisy(image, truth):
    noise = np.random.default_rng(0).normal(0.0, 8.0, image.shape)
    return np.clip(image + noise, 0, 255).astype(np.uint8), None, QUALITY


def _dark(image, truth):
    linear = (image.astype(np.float32) / 255.0) ** 2.2 * 0.4
    return (np.clip(linear ** (1 / 2.2), 0, 1) * 255 + 0.5).astype(np.uint8), None, QUALITY


def _through_lens(with_camera: bool):
    def change(image, truth):
        K = np.array(truth["camera"]["K"], np.float64)
        K[:2] *= image.shape[1] / truth["camera"]["image_size"][0]
        photo, lens = _lens_distort().distort_photo(image, K, [LENS_K1, 0.0, 0.0, 0.0, 0.0])
        return photo, lens if with_camera else None, QUALITY
    return change


CHANGES = {
    "as-rendered": None,
    "1024x768": _resized((1024, 768)),
    "640x480": _resized((640, 480)),
    "jpeg-35": lambda image, truth: (image, None, 35),
    "blur-2": _blurred,
    "shake-9": _shaken,
    "noise-8": _noisy,
    "dark-0.4": _dark,
    f"lens-k1{LENS_K1}": _through_lens(False),
    f"lens-k1{LENS_K1}+camera": _through_lens(True),
}


def read_changed(task) -> dict:
    """One photo read after one change: its score row (score_image) and seconds."""
    import vision
    change, path, truth = task
    data, lens = Path(path).read_bytes(), None
    if CHANGES[change] is not None:
        image, lens, quality = CHANGES[change](cv2.imread(str(path)), truth)
        data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])[1].tobytes()
    started = time.perf_counter()
    try:
        pred = vision.analyze_photo(data, truth["meta"].get("edition"), lens=lens).to_json()
    except vision.VisionError:
        pred = None
    row = score_image(truth["position"], pred)
    row.update(change=change, name=Path(path).stem, vision_s=time.perf_counter() - started)
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", help="folder of NAME.jpg + NAME.json (tools/render truth)")
    ap.add_argument("--changes", default=",".join(CHANGES), help=f"comma-separated, of: {', '.join(CHANGES)}")
    ap.add_argument("--only", help="comma-separated name prefixes of the photos to read")
    ap.add_argument("--jobs", type=int, default=2, help="processes reading photos at once")
    ap.add_argument("--json", metavar="OUT", help="also write every photo's score row and the summaries")
    args = ap.parse_args(argv)
    changes = [c.strip() for c in args.changes.split(",") if c.strip()]
    unknown = [c for c in changes if c not in CHANGES]
    if unknown or not changes:
        ap.error(f"--changes takes some of {', '.join(CHANGES)}, not {', '.join(unknown) or 'nothing'}")
    if not Path(args.folder).is_dir():
        ap.error(f"{args.folder} is not a folder")
    items = [(image, truth) for image, truth in load_truths(Path(args.folder))
             if not args.only or image.name.startswith(tuple(args.only.split(",")))]
    if not items:
        ap.error(f"no photos with truth (exxit-sample/1) in {args.folder}")
    tasks = [(change, str(image), truth) for change in changes for image, truth in items]
    with ProcessPoolExecutor(max(1, args.jobs)) as pool:
        rows = list(pool.map(read_changed, tasks, chunksize=4))
    summaries = {}
    print(f"vision robustness on {len(items)} photos of {args.folder}, read as changed")
    print(f"{'change':20s}" + "".join(f"{label:>12s}" for label in MEASURES.values()) + f"{'median s':>10s}")
    for change in changes:
        mine = [r for r in rows if r["change"] == change]
        summary = summarise(mine)
        summary["median s"] = float(np.median([r["vision_s"] for r in mine]))
        summaries[change] = summary
        print(f"{change:20s}" + "".join(f"{100 * summary[m]:11.1f}%" for m in MEASURES) + f"{summary['median s']:10.3f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"summaries": summaries, "images": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Photos with ground truth as a lens with radial distortion would have taken them.

    .venv/bin/python tools/lens_distort.py sample_images OUT_DIR --k1 -0.3 [--k2 0.0]

The renders are pinhole photos (tools/render); webcams and wide lenses bend straight lines. Each
photo of the folder is taken again through a lens with OpenCV's distortion (k1, k2) whose focal
length is the render's, lengthened until the whole distorted frame lies inside the render (a
strong barrel lens sees further out than its pinhole: that part is cut, as a zoom would). Writes
NAME.jpg, its truth NAME.json (the lens noted in meta.lens) and NAME.camera.json (exxit-camera/1,
the lens as `python -m calibration camera` would measure it) for each photo: what
`bench/vision_accuracy.py OUT_DIR --camera-files` measures.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from vision.lens import Lens  # noqa: E402

FOCAL_STEP = 1.02
GRID_PX = 8


def distort_photo(render: np.ndarray, K: np.ndarray, distortion) -> tuple:
    """(the photo `render`, a pinhole image with intrinsics K, would be through a lens with
    `distortion`, that lens): the lens's K is K with its focal length lengthened (by 2% steps) until
    every pixel of the distorted frame sees a point of the render. The mapping is computed every
    GRID_PX pixels and interpolated between (it is smooth: well under a tenth of a pixel off)."""
    h, w = render.shape[:2]
    dist = np.asarray(distortion, np.float64)
    gw, gh = (w - 1) // GRID_PX + 2, (h - 1) // GRID_PX + 2
    gx, gy = np.meshgrid(np.linspace(0, w - 1, gw), np.linspace(0, h - 1, gh))
    grid = np.column_stack([gx.ravel(), gy.ravel()])
    lens = Lens(K=np.asarray(K, np.float64).copy(), distortion=dist, image_size=(w, h))
    while True:
        straight = lens.undistort_points(grid)            # in the lens's own pinhole pixels
        rays = (straight - lens.K[:2, 2]) / lens.K[0, 0]
        source = rays * K[0, 0] + np.asarray(K)[:2, 2]    # ... and where the render saw those rays
        inside = (source.min(axis=0) >= -0.5).all() and (source.max(axis=0) <= [w - 0.5, h - 0.5]).all()
        if inside and np.abs(lens.to_photo(straight) - grid).max() < 0.5:   # the inverse held: no fold
            break
        K_lens = lens.K.copy()
        K_lens[0, 0] *= FOCAL_STEP
        K_lens[1, 1] *= FOCAL_STEP
        lens = Lens(K=K_lens, distortion=dist, image_size=(w, h))
    coarse = source.reshape(gh, gw, 2).astype(np.float32)
    at_x = np.tile(np.arange(w, dtype=np.float32) * (gw - 1) / (w - 1), (h, 1))
    at_y = np.tile((np.arange(h, dtype=np.float32) * (gh - 1) / (h - 1))[:, None], (1, w))
    maps = cv2.remap(coarse, at_x, at_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    photo = cv2.remap(render, maps[..., 0], maps[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return photo, lens


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", help="photos with truth (NAME.jpg + NAME.json, exxit-sample/1)")
    ap.add_argument("out", help="folder to write the distorted photos, truths and camera files to")
    ap.add_argument("--k1", type=float, required=True, help="radial distortion k1 (barrel < 0)")
    ap.add_argument("--k2", type=float, default=0.0, help="radial distortion k2")
    ap.add_argument("--quality", type=int, default=92, help="JPEG quality of the photos written")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    photos = sorted(p for p in Path(args.folder).glob("*.jpg") if p.with_suffix(".json").is_file())
    if not photos:
        sys.exit(f"lens_distort: no photos with truth in {args.folder}")
    for path in photos:
        truth = json.loads(path.with_suffix(".json").read_text())
        render = cv2.imread(str(path))
        K = np.array(truth["camera"]["K"], np.float64)
        K[:2] *= render.shape[1] / truth["camera"]["image_size"][0]
        photo, lens = distort_photo(render, K, [args.k1, args.k2, 0.0, 0.0, 0.0])
        cv2.imwrite(str(out / path.name), photo, [cv2.IMWRITE_JPEG_QUALITY, args.quality])
        truth["meta"]["lens"] = lens.to_json()
        (out / path.with_suffix(".json").name).write_text(json.dumps(truth))
        (out / f"{path.stem}.camera.json").write_text(json.dumps(lens.to_json(), indent=1))
    print(f"lens_distort: {len(photos)} photos through k1={args.k1}, k2={args.k2} in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

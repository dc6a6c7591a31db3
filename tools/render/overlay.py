"""Draw a sample's ground truth on its photo, to check it by eye (shared venv: needs cv2).

    .venv/bin/python tools/render/overlay.py sample_images/s001-....json OUT.png [--scale 0.5]

Tile centres: a circle in the tile's role colour (white role: white ring, black role: black ring),
crossed when hidden; stack tops: a cyan ring with the height, joined to the stack's base.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import cv2


def draw(truth: dict, image):
    colours = {(t["q"], t["r"]): t["colour"] for t in truth["position"]["tiles"]}
    ring = {"white": (255, 255, 255), "black": (0, 0, 0)}
    for c in truth["pixels"]["cells"]:
        x, y = (int(round(v)) for v in c["pixel"])
        if c["tile"]:
            cv2.circle(image, (x, y), 9, ring[colours[(c["q"], c["r"])]], 3)
            if not c["visible"]:
                cv2.line(image, (x - 7, y - 7), (x + 7, y + 7), (0, 0, 255), 2)
        else:
            cv2.drawMarker(image, (x, y), (0, 0, 255), cv2.MARKER_SQUARE, 14, 2)
        cv2.putText(image, f"{c['q']},{c['r']}", (x + 10, y - 8), cv2.FONT_HERSHEY_SIMPLEX, 0.45,
                    (0, 255, 255), 1, cv2.LINE_AA)
    for s in truth["pixels"]["stacks"]:
        top = tuple(int(round(v)) for v in s["top_pixel"])
        base = tuple(int(round(v)) for v in s["base_pixel"])
        cv2.line(image, base, top, (255, 255, 0), 2)
        cv2.circle(image, top, 6, (255, 255, 0), 2)
        cv2.putText(image, str(s["height"]), (top[0] - 20, top[1] - 6), cv2.FONT_HERSHEY_SIMPLEX, 0.6,
                    (255, 255, 0), 2, cv2.LINE_AA)
    return image


def main(argv=None):
    ap = argparse.ArgumentParser(description="Draw a sample's ground truth on its photo.")
    ap.add_argument("truth")
    ap.add_argument("out")
    ap.add_argument("--scale", type=float, default=1.0)
    args = ap.parse_args(argv)
    path = Path(args.truth)
    truth = json.loads(path.read_text())
    image = cv2.imread(str(path.with_name(truth["image"])))
    if image is None:
        sys.exit(f"overlay: cannot read the photo of {path}")
    image = draw(truth, image)
    if args.scale != 1.0:
        image = cv2.resize(image, None, fx=args.scale, fy=args.scale, interpolation=cv2.INTER_AREA)
    cv2.imwrite(args.out, image)


if __name__ == "__main__":
    main()

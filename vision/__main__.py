"""`python -m vision analyze PHOTO [--second-photo PHOTO2 ...] [--profile SET.json] [--camera CAMERA.json]
[--debug OUT.png] [--json] [--reserves W,B]`.

Exit codes: 0 success, 2 unreadable or invalid input, 3 no EXXIT World found.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import cv2

from rules.position import DISCS_PER_COLOUR

from .cli import OneLineParser, report
from .fitting import fit_heights


def reserves_arg(text: str) -> dict:
    """"W,B" -> {"white": W, "black": B}."""
    parts = text.split(",")
    if len(parts) != 2 or not all(p.strip().isdigit() and int(p) <= DISCS_PER_COLOUR for p in parts):
        raise argparse.ArgumentTypeError(f"{text!r} is not W,B: two counts 0..{DISCS_PER_COLOUR}, e.g. 2,0")
    return {"white": int(parts[0]), "black": int(parts[1])}


def debug_image_path(path: str) -> str:
    """`path` if the debug overlay can be written there: an image name (.png, .jpg, ...) in an
    existing folder. Checked before the photo is read, so a slow read is not lost to a typo."""
    if not cv2.haveImageWriter(path):
        raise argparse.ArgumentTypeError(f"{path!r} is not an image file name: use e.g. debug.png or debug.jpg")
    folder = os.path.dirname(path) or "."
    if not os.path.isdir(folder):
        raise argparse.ArgumentTypeError(f"{path!r}: no such folder {folder!r}")
    return path


def fitted_to_reserves(reading: dict, reserves: dict) -> dict:
    """The reading's heights fitted to the reserves (vision.fitting), the changes named in a warning."""
    fitted, changes = fit_heights(reading, reserves)
    if changes:
        told = "; ".join(f"{c['at'][0]},{c['at'][1]}: " + ", ".join(
            ([f"read as {c['read']}, now {c['height']}"] if c["read"] != c["height"] else []) +
            ([f"{c['unread']} side colour(s) left unread"] if c.get("unread") else [])) for c in changes)
        fitted["warnings"] = reading.get("warnings", []) + [{
            "code": "fitted-to-reserves", "cells": [c["at"] for c in changes],
            "message": f"{len(changes)} stack(s) changed so that the discs on the table and in the reserves "
                       f"make a set ({told}); please check"}]
    return fitted


def main(argv=None) -> int:
    parser = OneLineParser(prog="python -m vision", description="Read an EXXIT position from a photo.")
    sub = parser.add_subparsers(dest="command", required=True)
    an = sub.add_parser("analyze", help="print the position seen in PHOTO as exxit-position/1 JSON")
    an.add_argument("photo")
    an.add_argument("--second-photo", metavar="PHOTO2", action="append", default=[],
                    help="another photo of the same table from another side (35-60° from vertical reads "
                         "heights best): every stack both photos show is read from both; given again, "
                         "a third photo from a third side is read with them")
    an.add_argument("--profile", help="set profile: a JSON file or an edition name "
                                      "(jactalea-red-black, silver-red, black-white)")
    an.add_argument("--camera", metavar="CAMERA.json",
                    help="the camera's lens, measured by `python -m calibration camera`: the photos "
                         "(both, with --second-photo) are undistorted before they are read")
    an.add_argument("--debug", metavar="OUT.png", type=debug_image_path, help="also write the debug overlay image")
    an.add_argument("--json", action="store_true", help="print compact one-line JSON")
    an.add_argument("--reserves", metavar="W,B", type=reserves_arg,
                    help="the white and black discs off the table, counted by the players: the "
                         "stacks' heights are fitted to the discs that are then on the table (the "
                         "debug overlay shows them as read)")
    args = parser.parse_args(argv)
    from . import add_second_photo, analyze_photo, photo_name
    from .lens import load_lens
    from .loading import load_image
    try:
        lens = None if args.camera is None else load_lens(args.camera)
        reading = analyze_photo(args.photo, profile=args.profile, lens=lens)
        for k, another in enumerate(args.second_photo, start=2):
            reading = add_second_photo(reading, another, profile=args.profile, lens=lens, which=photo_name(k))
        obj = reading.to_json()
        if args.reserves:
            obj = fitted_to_reserves(obj, args.reserves)
    except Exception as exc:             # VisionError: the photo's fault; anything else: ours
        return report("vision", exc)
    if args.debug:
        overlay = reading.draw_overlay(load_image(args.photo, lens).full)
        if not cv2.imwrite(args.debug, overlay):
            print(f"vision: cannot write the debug image {args.debug}", file=sys.stderr)
            return 2
    try:
        print(json.dumps(obj) if args.json else json.dumps(obj, indent=1))
        sys.stdout.flush()
    except BrokenPipeError:
        sys.stderr.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

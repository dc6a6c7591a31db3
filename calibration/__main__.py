"""`python -m calibration profile PHOTO --out SET.json [--stack-photo P --stack-height N]`,
`python -m calibration board --out BOARD.png [board options] [--dpi 300]` (the board to print) and
`python -m calibration camera PHOTO [PHOTO ...] --out CAMERA.json [board options]` (the lens, from
10-20 photos of the printed board from different angles, reaching the frame's corners). The board
options: `--squares 7x5 --square-mm 30 --marker-mm 22 --dictionary DICT_5X5_100`; `camera` needs
the ones `board` was printed with, and the square size as measured on the print.

Exit codes: 0 written, 2 unreadable input or a photo that does not show what it should, 3 no World.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import cv2

from vision.cli import OneLineParser, report


def _squares(text: str) -> tuple:
    """`7x5` -> (7, 5): columns x rows of chessboard squares."""
    columns, sep, rows = text.lower().partition("x")
    if not (sep and columns.strip().isdigit() and rows.strip().isdigit()):
        raise argparse.ArgumentTypeError(f"expected COLUMNSxROWS such as 7x5, got {text!r}")
    return int(columns), int(rows)


def _board_options() -> argparse.ArgumentParser:
    options = argparse.ArgumentParser(add_help=False)
    options.add_argument("--squares", type=_squares, default=(7, 5), metavar="COLSxROWS",
                         help="chessboard squares across x down (default 7x5)")
    options.add_argument("--square-mm", type=float, default=30.0, help="side of a square, mm (default 30)")
    options.add_argument("--marker-mm", type=float, default=22.0, help="side of a marker, mm (default 22)")
    options.add_argument("--dictionary", default="DICT_5X5_100", help="OpenCV ArUco dictionary (default DICT_5X5_100)")
    return options


def main(argv=None) -> int:
    parser = OneLineParser(prog="python -m calibration", description="Measure an EXXIT set or a camera from photos.")
    sub = parser.add_subparsers(dest="command", required=True)
    pr = sub.add_parser("profile", help="write a set profile from a photo of the opening diamond")
    pr.add_argument("photo", help="the opening diamond: 2 + 2 tiles of the two colours, no discs")
    pr.add_argument("--out", required=True, metavar="SET.json")
    pr.add_argument("--name", default="custom", help="name stored in the profile")
    pr.add_argument("--base", help="profile whose sizes are the starting point (edition name or file)")
    pr.add_argument("--stack-photo", help="a photo with exactly one stack of --stack-height discs")
    pr.add_argument("--stack-height", type=int, help="number of discs in the stack photo's stack")
    board_options = _board_options()
    bd = sub.add_parser("board", parents=[board_options], help="write a ChArUco board to print for `camera`")
    bd.add_argument("--out", required=True, metavar="BOARD.png")
    bd.add_argument("--dpi", type=int, default=300, help="print resolution (default 300)")
    cam = sub.add_parser("camera", parents=[board_options],
                         help="write a camera file from photos of the printed board")
    cam.add_argument("photos", nargs="+", metavar="PHOTO",
                     help="10-20 photos of the board from different angles, all at the camera's one resolution")
    cam.add_argument("--out", required=True, metavar="CAMERA.json")
    args = parser.parse_args(argv)
    if args.command == "profile":
        if (args.stack_photo is None) != (args.stack_height is None):
            parser.error("--stack-photo and --stack-height go together")
        return _profile(args)
    return _board(args) if args.command == "board" else _camera(args)


def _profile(args) -> int:
    from .profile import measure_set
    try:
        profile = measure_set(args.photo, base=args.base, stack_photo=args.stack_photo,
                              stack_height=args.stack_height, name=args.name)
    except Exception as exc:             # VisionError: the photo's fault; anything else: ours
        return report("calibration", exc)
    if not _write(args.out, _json_bytes(profile.to_json())):
        return 2
    print(f"wrote {args.out}")
    return 0


def _board_spec(args):
    from .camera import BoardSpec
    return BoardSpec(args.squares, args.square_mm, args.marker_mm, args.dictionary)


def _board(args) -> int:
    from .camera import board_image
    try:
        spec = _board_spec(args)
        image = board_image(spec, dpi=args.dpi)
    except Exception as exc:
        return report("calibration", exc)
    try:
        ok, encoded = cv2.imencode(Path(args.out).suffix, image)
    except cv2.error:
        ok = False
    if not ok:
        print(f"calibration: cannot write {args.out}: not an image file name (use .png)", file=sys.stderr)
        return 2
    if not _write(args.out, encoded.tobytes()):
        return 2
    print(f"wrote {args.out} (print at 100% scale: squares of {spec.square_mm:g} mm)")
    return 0


def _camera(args) -> int:
    from .camera import measure_camera
    try:
        lens, measured = measure_camera(args.photos, _board_spec(args))
    except Exception as exc:
        return report("calibration", exc)
    if not _write(args.out, _json_bytes(lens.to_json(**measured))):
        return 2
    print(f"wrote {args.out}: {measured['views']} of {measured['photos']} photos used, "
          f"reprojection error {measured['rms_px']:.2f} px")
    for warning in measured["warnings"]:
        print(f"calibration: warning: {warning}", file=sys.stderr)
    return 0


def _json_bytes(document: dict) -> bytes:
    return (json.dumps(document, indent=2) + "\n").encode("utf-8")


def _write(path: str, data: bytes) -> bool:
    """Write `data` to `path`; on failure say so in one line and return False."""
    try:
        with open(path, "wb") as fh:
            fh.write(data)
    except OSError as exc:
        print(f"calibration: cannot write {path}: {exc.strerror}", file=sys.stderr)
        return False
    return True


if __name__ == "__main__":
    sys.exit(main())

"""`python -m vision analyze PHOTO [--profile SET.json] [--debug OUT.png] [--json]`.

Exit codes: 0 success, 2 unreadable or invalid input, 3 no EXXIT World found.
"""
from __future__ import annotations

import json
import sys

import cv2

from .cli import OneLineParser, report


def main(argv=None) -> int:
    parser = OneLineParser(prog="python -m vision", description="Read an EXXIT position from a photo.")
    sub = parser.add_subparsers(dest="command", required=True)
    an = sub.add_parser("analyze", help="print the position seen in PHOTO as exxit-position/1 JSON")
    an.add_argument("photo")
    an.add_argument("--profile", help="set profile: a JSON file or an edition name "
                                      "(jactalea-red-black, silver-red, black-white)")
    an.add_argument("--debug", metavar="OUT.png", help="also write the debug overlay image")
    an.add_argument("--json", action="store_true", help="print compact one-line JSON")
    args = parser.parse_args(argv)
    from . import analyze_photo
    from .loading import load_image
    try:
        reading = analyze_photo(args.photo, profile=args.profile)
    except Exception as exc:             # VisionError: the photo's fault; anything else: ours
        return report("vision", exc)
    obj = reading.to_json()
    if args.debug:
        overlay = reading.draw_overlay(load_image(args.photo).full)
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

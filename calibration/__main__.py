"""`python -m calibration profile PHOTO --out SET.json [--stack-photo P --stack-height N]`.

Exit codes: 0 written, 2 unreadable input or a photo that does not show what it should, 3 no World.
"""
from __future__ import annotations

import json
import sys

from vision.cli import OneLineParser, report


def main(argv=None) -> int:
    parser = OneLineParser(prog="python -m calibration", description="Measure an EXXIT set from photos.")
    sub = parser.add_subparsers(dest="command", required=True)
    pr = sub.add_parser("profile", help="write a set profile from a photo of the opening diamond")
    pr.add_argument("photo", help="the opening diamond: 2 + 2 tiles of the two colours, no discs")
    pr.add_argument("--out", required=True, metavar="SET.json")
    pr.add_argument("--name", default="custom", help="name stored in the profile")
    pr.add_argument("--base", help="profile whose sizes are the starting point (edition name or file)")
    pr.add_argument("--stack-photo", help="a photo with exactly one stack of --stack-height discs")
    pr.add_argument("--stack-height", type=int, help="number of discs in the stack photo's stack")
    args = parser.parse_args(argv)
    if (args.stack_photo is None) != (args.stack_height is None):
        parser.error("--stack-photo and --stack-height go together")
    from .profile import measure_set
    try:
        profile = measure_set(args.photo, base=args.base, stack_photo=args.stack_photo,
                              stack_height=args.stack_height, name=args.name)
    except Exception as exc:             # VisionError: the photo's fault; anything else: ours
        return report("calibration", exc)
    try:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump(profile.to_json(), fh, indent=2)
            fh.write("\n")
    except OSError as exc:
        print(f"calibration: cannot write {args.out}: {exc.strerror}", file=sys.stderr)
        return 2
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Command-line plumbing shared by `python -m vision` and `python -m calibration`."""
from __future__ import annotations

import argparse
import sys

from .errors import NoWorldFoundError, VisionError


class OneLineParser(argparse.ArgumentParser):
    """argparse whose usage errors are one line, `NAME: message`, with exit status 2."""

    def error(self, message):
        words = self.prog.split()            # "python -m NAME [command]"
        name = words[2] if words[:2] == ["python", "-m"] and len(words) > 2 else words[0]
        print(f"{name}: {message}", file=sys.stderr)
        sys.exit(2)


def report(name: str, exc: Exception) -> int:
    """Print an error as one line and return its exit status: 3 no World, 2 any other vision error
    (the input's fault), 1 anything else (a bug of ours: named, to be reported, not a traceback)."""
    if not isinstance(exc, VisionError):
        print(f"{name}: internal error ({type(exc).__name__}: {exc}); please report it with the photo",
              file=sys.stderr)
        return 1
    print(f"{name}: {exc}", file=sys.stderr)
    return 3 if isinstance(exc, NoWorldFoundError) else 2

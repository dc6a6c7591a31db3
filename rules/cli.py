"""Command line: ``python -m rules analyze|replay|show|sgf [FILE|-]`` (FORMATS.md).

Exit codes: 0 success; 1 a game met an illegal move (stderr names its index); 2 malformed or
impossible input (one line on stderr, never a traceback).

A game is ``{"setup": POSITION, "moves": [MOVE, ...]}`` or a Boardspace record (text starting
with ``(;``).
"""

import argparse
import json
import os
import sys

from .ascii import render_ascii
from .engine import analyze
from .game import game_from_json
from .moves import MoveFormatError
from .position import IllegalMoveError, PositionError, position_from_json, position_to_json
from .sgf import game_from_sgf, game_to_sgf


class InputError(Exception):
    """Input the command cannot use (exit 2)."""


class IllegalGameError(Exception):
    """A game whose move ``index`` is illegal (exit 1)."""


def _read_text(source):
    try:
        if source == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(source, "rb") as handle:
                data = handle.read()
    except OSError as error:
        raise InputError(f"cannot read {source}: {error.strerror or error}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{source}: not UTF-8 text") from None


def _parse_json(text, source):
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"{source}: not JSON ({error.msg} at line {error.lineno} column {error.colno})") from None
    except RecursionError:
        raise InputError(f"{source}: JSON nested too deeply") from None


def _is_record(text):
    return text.lstrip().startswith("(;")


def _game(text, obj=None, source="-"):
    """The game of a JSON text (or of ``obj`` already parsed) or of a Boardspace record."""
    try:
        if _is_record(text):
            return game_from_sgf(text)
        return game_from_json(_parse_json(text, source) if obj is None else obj)
    except IllegalMoveError as error:
        raise IllegalGameError(f"illegal move at index {error.index}: {error}") from None


def _print_json(obj):
    print(json.dumps(obj))


def cmd_analyze(args):
    _print_json(analyze(position_from_json(_parse_json(_read_text(args.file), args.file))))


def cmd_replay(args):
    game = _game(_read_text(args.file), source=args.file)
    _print_json({"position": position_to_json(game.position), "analysis": game.analyze()})


def cmd_show(args):
    text = _read_text(args.file)
    obj = None if _is_record(text) else _parse_json(text, args.file)
    if obj is None or (isinstance(obj, dict) and "setup" in obj):
        pos = _game(text, obj, args.file).position
    else:
        pos = position_from_json(obj)
    print(render_ascii(pos))


def cmd_sgf(args):
    game = _game(_read_text(args.file), source=args.file)
    sys.stdout.write(game_to_sgf(game, args.white, args.black))


def _one_line(error, limit=300):
    text = " ".join(str(error).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise InputError(message)


def build_parser():
    parser = _Parser(prog="python -m rules", description="EXXIT rules engine.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    command = commands.add_parser("analyze", help="forced dances, score, islands and legal moves of a position")
    command.add_argument("file", nargs="?", default="-", help="position JSON (default: stdin)")
    command.set_defaults(run=cmd_analyze)
    command = commands.add_parser("replay", help="play a game; print the final position and its analysis")
    command.add_argument("file", nargs="?", default="-", help="game JSON or Boardspace record (default: stdin)")
    command.set_defaults(run=cmd_replay)
    command = commands.add_parser("show", help="draw a position (or a game's final position) as an ASCII hex map")
    command.add_argument("file", help="position JSON, game JSON or Boardspace record ('-' for stdin)")
    command.set_defaults(run=cmd_show)
    command = commands.add_parser("sgf", help="write a game as a Boardspace record (SGF, GM[28])")
    command.add_argument("file", nargs="?", default="-", help="game JSON (default: stdin)")
    command.add_argument("--white", default="white", help="name of player 0 (white)")
    command.add_argument("--black", default="black", help="name of player 1 (black)")
    command.set_defaults(run=cmd_sgf)
    return parser


def main(argv=None):
    try:
        args = build_parser().parse_args(argv)
        args.run(args)
        return 0
    except IllegalGameError as error:
        print(_one_line(error), file=sys.stderr)
        return 1
    except (InputError, PositionError, MoveFormatError) as error:
        print(f"error: {_one_line(error)}", file=sys.stderr)
        return 2
    except (RecursionError, MemoryError) as error:
        print(f"error: input too large or too deeply nested ({type(error).__name__})", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader went away (e.g. `| head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141

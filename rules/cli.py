"""Command line: ``python -m rules analyze|replay|show [FILE|-]`` (FORMATS.md).

Exit codes: 0 success; 1 ``replay`` met an illegal move (stderr names its index); 2 malformed or
impossible input (one line on stderr, never a traceback).
"""

import argparse
import json
import sys

from .ascii import render_ascii
from .engine import analyze
from .game import game_from_json
from .moves import MoveFormatError
from .position import IllegalMoveError, PositionError, position_from_json, position_to_json


class InputError(Exception):
    """Input the command cannot use (exit 2)."""


def _read_json(source):
    try:
        if source == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(source, "rb") as handle:
                data = handle.read()
    except OSError as error:
        raise InputError(f"cannot read {source}: {error.strerror or error}") from None
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise InputError(f"{source}: not UTF-8 text") from None
    except json.JSONDecodeError as error:
        raise InputError(f"{source}: not JSON ({error.msg} at line {error.lineno} column {error.colno})") from None
    except RecursionError:
        raise InputError(f"{source}: JSON nested too deeply") from None


def _print_json(obj):
    print(json.dumps(obj))


def _load_game(obj):
    try:
        return game_from_json(obj), None
    except IllegalMoveError as error:
        return None, error


def cmd_analyze(args):
    _print_json(analyze(position_from_json(_read_json(args.file))))
    return 0


def cmd_replay(args):
    obj = _read_json(args.file)
    game, error = _load_game(obj)
    if error is not None:
        print(f"illegal move at index {error.index}: {error}", file=sys.stderr)
        return 1
    _print_json({"position": position_to_json(game.position), "analysis": game.analyze()})
    return 0


def cmd_show(args):
    obj = _read_json(args.file)
    if isinstance(obj, dict) and "setup" in obj:
        game, error = _load_game(obj)
        if error is not None:
            print(f"illegal move at index {error.index}: {error}", file=sys.stderr)
            return 1
        pos = game.position
    else:
        pos = position_from_json(obj)
    print(render_ascii(pos))
    return 0


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise InputError(message)


def build_parser():
    parser = _Parser(prog="python -m rules", description="EXXIT rules engine.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    analyze_cmd = commands.add_parser("analyze", help="forced dances, score, islands and legal moves of a position")
    analyze_cmd.add_argument("file", nargs="?", default="-", help="position JSON (default: stdin)")
    analyze_cmd.set_defaults(run=cmd_analyze)
    replay_cmd = commands.add_parser("replay", help="play a game {setup, moves}; print the final position and analysis")
    replay_cmd.add_argument("file", nargs="?", default="-", help="game JSON (default: stdin)")
    replay_cmd.set_defaults(run=cmd_replay)
    show_cmd = commands.add_parser("show", help="draw a position (or a game's final position) as an ASCII hex map")
    show_cmd.add_argument("file", help="position or game JSON ('-' for stdin)")
    show_cmd.set_defaults(run=cmd_show)
    return parser


def main(argv=None):
    try:
        args = build_parser().parse_args(argv)
        return args.run(args)
    except (InputError, PositionError, MoveFormatError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except (RecursionError, MemoryError) as error:
        print(f"error: input too large or too deeply nested ({type(error).__name__})", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130

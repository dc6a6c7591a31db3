"""EXXIT rules engine: positions, moves, forced dances, enlargement, scoring, notation.

Pure Python, no third-party imports.  The rulings followed are those of the project's RULES.md;
the Python surface is described in docs/INTERFACES.md.

>>> import rules
>>> pos = rules.Position.standard()
>>> pos = rules.apply_move(pos, rules.parse_move_text("place 0,0"))
>>> [m.text for m in rules.legal_moves(pos)][:2]
['place 0,1', 'place 1,-1']
"""

from .ascii import render_ascii
from .engine import (all_dances, analyze, apply_move, dances_a_disc_moved, dances_a_disc_off, end_reason,
                     forced_dances, islands, legal_moves, move_from_json, score, winner)
from .game import Game, Outcome, game_from_json, game_to_json, moves_to_text, parse_moves_text
from .geometry import DIRECTIONS, STEPS, neighbours
from .moves import (Dance, Enlarge, LayTile, Move, MoveFormatError, Pass, Place, dance_to_json,
                    move_to_json, parse_move_text)
from .position import (BLACK, COLOURS, WHITE, IllegalMoveError, Position, PositionError,
                       UnknownDiscsError, position_from_json, position_to_json)
from .sgf import RecordError, game_from_sgf, game_to_sgf

__all__ = [
    "WHITE", "BLACK", "COLOURS", "DIRECTIONS", "STEPS", "neighbours",
    "Position", "Move", "Dance", "Enlarge", "Place", "Pass", "LayTile",
    "PositionError", "IllegalMoveError", "UnknownDiscsError", "MoveFormatError",
    "position_from_json", "position_to_json", "move_from_json", "move_to_json", "dance_to_json", "parse_move_text",
    "forced_dances", "all_dances", "dances_a_disc_off", "dances_a_disc_moved", "legal_moves", "apply_move", "islands", "score", "winner", "end_reason", "analyze",
    "Game", "Outcome", "game_from_json", "game_to_json", "moves_to_text", "parse_moves_text",
    "RecordError", "game_from_sgf", "game_to_sgf", "render_ascii",
]

"""A game: a starting position, the moves played, the repetition history and the outcome.

>>> from rules import Place
>>> game = Game.standard()
>>> game.play(Place((0, 0)))
>>> game.play(Place((0, 1)))
>>> game.position.to_move, len(game.moves), game.outcome
('white', 2, None)
>>> game.resign("black")
>>> game.outcome
Outcome('resignation', {'white': 4, 'black': 3}, winner='white')
"""

import re

from .engine import analyze, apply_move, end_reason, legal_moves, move_from_json, score, winner
from .moves import MoveFormatError, move_shape_from_json, move_to_json, parse_move_text
from .position import (COLOURS, OTHER, IllegalMoveError, Position, PositionError, position_from_json,
                       position_to_json)

REASONS = ("supply_exhausted", "two_passes", "threefold_repetition", "resignation")


class Outcome:
    """How a game ended: ``reason`` (one of ``REASONS``), ``score``, ``winner`` (None = draw).

    On resignation the winner is the resigner's opponent, whatever the score.
    """

    __slots__ = ("reason", "score", "winner")

    def __init__(self, reason, score, winner=None):
        if reason not in REASONS:
            raise ValueError(f"unknown end reason {reason!r}")
        self.reason = reason
        self.score = dict(score)
        self.winner = winner

    def to_json(self):
        return {"reason": self.reason, "winner": self.winner, "score": dict(self.score)}

    def __eq__(self, other):
        return isinstance(other, Outcome) and self.to_json() == other.to_json()

    def __hash__(self):
        return hash((self.reason, self.winner))

    def __repr__(self):
        return f"Outcome({self.reason!r}, {self.score!r}, winner={self.winner!r})"


class Game:
    """A game from any starting position (side to move known): moves, history, outcome.

    The game ends when the supply is empty, after two passes in a row, when a position (tiles,
    stacks and side to move: ruling A22) occurs for the third time counting the start, or on
    resignation.  A placement, enlargement or set-up tile can never be undone, so the repetition
    history restarts after one.
    """

    def __init__(self, start=None):
        if start is None:
            start = Position.standard()
        if not isinstance(start, Position):
            raise TypeError(f"a game starts from a Position, not {type(start).__name__}")
        if start.to_move is None:
            raise PositionError("a game needs the side to move in its starting position")
        self.start = start
        self._position = start
        self._positions = [start]
        self._moves = []
        self._seen = {}
        self._resigned = None
        self._outcome = None
        self._record(start)

    @classmethod
    def standard(cls, total_tiles=39):
        """A game from the opening diamond (29 or 19 tiles for blitz)."""
        return cls(Position.standard(total_tiles))

    @classmethod
    def experienced(cls):
        """A game from the experienced players' set-up (4 set-up tiles to lay first)."""
        return cls(Position.experienced())

    @property
    def position(self):
        """The current position."""
        return self._position

    @property
    def moves(self):
        """The moves played, in order (a tuple)."""
        return tuple(self._moves)

    @property
    def positions(self):
        """Every position of the game from the start, one more than the moves.

        Replayed from the moves when first asked (keeping every position during play costs
        memory and garbage-collector time for nothing in most uses).
        """
        positions = self._positions
        for move in self._moves[len(positions) - 1:]:
            positions.append(apply_move(positions[-1], move))
        return tuple(positions)

    @property
    def resigned(self):
        """The colour that resigned, or None."""
        return self._resigned

    @property
    def outcome(self):
        """The :class:`Outcome` once the game is over, else None."""
        return self._outcome

    def is_over(self):
        return self._outcome is not None

    def legal_moves(self):
        """The legal moves now (none once the game is over, by whatever reason)."""
        return [] if self._outcome is not None else legal_moves(self._position)

    def play(self, move):
        """Play ``move``; raises :class:`IllegalMoveError` if it is not legal now."""
        if self._outcome is not None:
            raise IllegalMoveError(f"{move.text}: the game is over ({self._outcome.reason})")
        pos = apply_move(self._position, move)
        if move.kind != "dance" and move.kind != "pass":
            self._seen.clear()  # no earlier position can recur after this move
        self._position = pos
        self._moves.append(move)
        self._record(pos)

    def resign(self, colour=None):
        """``colour`` (default: the side to move) resigns; the other colour wins."""
        colour = self.position.to_move if colour is None else colour
        if colour not in COLOURS:
            raise ValueError(f"unknown colour {colour!r}")
        if self._outcome is not None:
            raise IllegalMoveError(f"{colour} cannot resign: the game is over ({self._outcome.reason})")
        self._resigned = colour
        self._outcome = Outcome("resignation", score(self.position), OTHER[colour])

    def _record(self, pos):
        """Count the occurrence of ``pos`` and end the game if it is over."""
        key = (pos._tiles_hash, pos._stacks_hash, pos.to_move)
        earlier = self._seen.get(key)
        count = 1
        if earlier is None:
            self._seen[key] = [pos]
        else:
            count += sum(1 for other in earlier if other._same_placement(pos))
            earlier.append(pos)
        if pos.tiles_left == 0 or pos.passes >= 2 or count >= 3:
            scores = score(pos)
            self._outcome = Outcome(end_reason(pos) or "threefold_repetition", scores, winner(scores))

    def analyze(self):
        """``rules.analyze`` of the current position, with the game's own end (repetition,
        resignation): then ``legal_moves`` is empty and ``outcome`` says why."""
        result = analyze(self.position)
        if self._outcome is not None:
            if "legal_moves" in result:
                result["legal_moves"] = []
            result["game_over"] = True
            result["outcome"] = self._outcome.to_json()
        return result

    def __repr__(self):
        return f"<Game {len(self._moves)} moves, outcome={self._outcome!r}>"


VARIANTS = {
    "standard": lambda: Position.standard(39),
    "blitz-29": lambda: Position.standard(29),
    "blitz-19": lambda: Position.standard(19),
    "experienced": lambda: Position.experienced(),
}


def _setup_from_json(setup):
    if isinstance(setup, str):
        if setup not in VARIANTS:
            raise PositionError(f"unknown set-up {setup!r} (expected a position or one of {', '.join(VARIANTS)})")
        return VARIANTS[setup]()
    if isinstance(setup, dict) and setup.get("to_move") is None:
        setup = dict(setup, to_move="white")
    return position_from_json(setup)


def game_from_json(obj):
    """A :class:`Game` from ``{"setup": POSITION, "moves": [MOVE, ...]}``.

    ``setup`` may also name a variant (``"standard"``, ``"blitz-29"``, ``"blitz-19"``,
    ``"experienced"``); a set-up position without ``to_move`` starts with white.  A last move
    ``{"type": "resign"}`` (optional ``"colour"``, default the side to move) records a resignation.
    Raises :class:`PositionError` / :class:`MoveFormatError` for malformed input (every move's
    shape is checked before any is played) and :class:`IllegalMoveError` with ``index`` set to
    the first illegal move's index.

    >>> game = game_from_json({"setup": "blitz-19", "moves": [{"type": "place", "at": [0, 0]}]})
    >>> game.position.tiles_left, game.moves
    (15, (Place((0, 0)),))
    """
    if not isinstance(obj, dict):
        raise PositionError(f"a game must be a JSON object with setup and moves, got {type(obj).__name__}")
    if "setup" not in obj:
        raise PositionError("a game needs 'setup' (a position or a variant name)")
    moves = obj.get("moves", [])
    if not isinstance(moves, list):
        raise MoveFormatError("'moves' must be a list")
    resign = None
    if moves and isinstance(moves[-1], dict) and moves[-1].get("type") == "resign":
        resign = moves[-1]
        moves = moves[:-1]
        if resign.get("colour") is not None and resign["colour"] not in COLOURS:
            raise MoveFormatError(f"resign: unknown colour {resign['colour']!r}")
    for index, item in enumerate(moves):
        try:
            move_shape_from_json(item)
        except MoveFormatError as error:
            raise MoveFormatError(f"moves[{index}]: {error}") from None
    game = Game(_setup_from_json(obj["setup"]))
    for index, item in enumerate(moves):
        try:
            game.play(move_from_json(item, game.position) if not game.is_over() else move_shape_from_json(item))
        except IllegalMoveError as error:
            error.index = index
            raise
    if resign is not None:
        try:
            game.resign(resign.get("colour"))
        except IllegalMoveError as error:
            error.index = len(moves)
            raise
    return game


def game_to_json(game):
    """``{"setup": POSITION, "moves": [MOVE, ...]}``, a resignation as a last ``resign`` move.

    >>> from rules import Place
    >>> game = Game.standard(19)
    >>> game.play(Place((1, 0)))
    >>> game_from_json(game_to_json(game)).positions == game.positions
    True
    """
    moves = [move_to_json(move) for move in game.moves]
    if game.resigned is not None:
        moves.append({"type": "resign", "colour": game.resigned})
    return {"setup": position_to_json(game.start), "moves": moves}


def moves_to_text(moves):
    """The move log: numbered moves, ``1. place 0,0 2. dance 1,0 E ...``.

    >>> from rules import Dance, Pass, Place
    >>> moves_to_text([Place((0, 0)), Dance((1, 0), "E"), Pass()])
    '1. place 0,0 2. dance 1,0 E 3. pass'
    """
    return " ".join(f"{number}. {move.text}" for number, move in enumerate(moves, 1))


def parse_moves_text(text):
    """The moves of a log written by :func:`moves_to_text` (or one move per line, unnumbered).

    >>> parse_moves_text("1. place 0,0 2. dance 1,0 E 3. pass")
    [Place((0, 0)), Dance((1, 0), 'E'), Pass()]
    """
    if not isinstance(text, str):
        raise MoveFormatError("a move log must be a string")
    if re.match(r"\s*\d+\.", text):
        parts = re.split(r"(?:^|\s)\d+\.\s", " " + text)
    else:
        parts = text.splitlines()
    return [parse_move_text(part) for part in parts if part.strip()]

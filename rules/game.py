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

from .engine import analyze, apply_move, end_reason, legal_moves, score, winner
from .moves import Dance, Pass
from .position import COLOURS, OTHER, IllegalMoveError, Position, PositionError

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
        return self._positions[-1]

    @property
    def moves(self):
        """The moves played, in order (a tuple)."""
        return tuple(self._moves)

    @property
    def positions(self):
        """Every position of the game from the start, one more than the moves."""
        return tuple(self._positions)

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
        return [] if self._outcome is not None else legal_moves(self.position)

    def play(self, move):
        """Play ``move``; raises :class:`IllegalMoveError` if it is not legal now."""
        if self._outcome is not None:
            raise IllegalMoveError(f"{move.text}: the game is over ({self._outcome.reason})")
        pos = apply_move(self.position, move)
        if not isinstance(move, (Dance, Pass)):
            self._seen.clear()
        self._positions.append(pos)
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
        key = (pos._tiles_hash, pos._stacks_hash, pos.to_move)
        entries = self._seen.setdefault(key, [])
        for entry in entries:
            if entry[0]._same_placement(pos):
                entry[1] += 1
                count = entry[1]
                break
        else:
            entries.append([pos, 1])
            count = 1
        reason = end_reason(pos)
        if reason is None and count >= 3:
            reason = "threefold_repetition"
        if reason is not None:
            scores = score(pos)
            self._outcome = Outcome(reason, scores, winner(scores))

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

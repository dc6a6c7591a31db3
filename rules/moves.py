"""Move value types and their text notation.

Five kinds of move, one class each, all subclasses of :class:`Move`:

======================  ===============  ======================
class                   ``kind``         text
======================  ===============  ======================
``Dance(origin, d)``    ``"dance"``      ``dance 0,0 E``
``Enlarge(at)``         ``"enlarge"``    ``enlarge 2,-1``
``Place(at)``           ``"place"``      ``place 1,0``
``Pass()``              ``"pass"``       ``pass``
``LayTile(at)``         ``"tile"``       ``tile 1,1``
======================  ===============  ======================

A move is identified by its kind and cell (and direction, for a dance); the derived facts a
position gives it (a dance's target and drops, an enlargement's cascade) ride along when the move
comes from :func:`rules.legal_moves`, but take no part in equality, so a move parsed from text
equals the move generated for the position.

>>> Dance((0, 0), "E") == parse_move_text("dance 0,0 E")
True
>>> parse_move_text("enlarge 2,-1")
Enlarge((2, -1))
>>> [parse_move_text(m.text) == m for m in (Place((1, 0)), Pass(), LayTile((1, 1)))]
[True, True, True]
"""

from .geometry import DELTAS, DIRECTION_INDEX, DIRECTIONS, MAX_COORD, decode


class MoveFormatError(ValueError):
    """A move (JSON object, text or record entry) whose shape is not one of the known kinds."""


def _check_cell(cell, what="cell"):
    if (not isinstance(cell, (tuple, list)) or len(cell) != 2
            or not all(type(x) is int and -MAX_COORD <= x <= MAX_COORD for x in cell)):
        raise MoveFormatError(f"{what} must be two integers [q, r] within +-{MAX_COORD}, got {cell!r}")
    return (cell[0], cell[1])


def cell_text(cell):
    """``(q, r)`` as ``"q,r"``."""
    return f"{cell[0]},{cell[1]}"


def parse_cell_text(text):
    """``"q,r"`` (spaces and parentheses allowed) as ``(q, r)``; raises MoveFormatError."""
    parts = text.strip().strip("()[]").split(",")
    try:
        cell = tuple(int(part) for part in parts)
    except ValueError:
        raise MoveFormatError(f"not a cell: {text!r} (expected q,r)") from None
    return _check_cell(cell)


class Move:
    """Base class of the five move kinds; ``kind`` names the kind, ``text`` is the notation."""

    __slots__ = ()
    kind = None

    @property
    def text(self):
        return self.kind

    def __eq__(self, other):
        return type(self) is type(other) and self._key() == other._key()

    def __hash__(self):
        return hash((self.kind, self._key()))

    def __str__(self):
        return self.text

    def _key(self):
        return ()


class _CellMove(Move):
    __slots__ = ("at",)

    def __init__(self, at):
        self.at = _check_cell(at, "at")

    def _key(self):
        return self.at

    @property
    def text(self):
        return f"{self.kind} {cell_text(self.at)}"

    def __repr__(self):
        return f"{type(self).__name__}({self.at!r})"


class Place(_CellMove):
    """Put a disc of the mover's colour on the empty tile ``at`` (RULES.md 8.2)."""

    __slots__ = ()
    kind = "place"


class LayTile(_CellMove):
    """Experienced set-up: lay a tile of the mover's colour on the empty off-World cell ``at``."""

    __slots__ = ()
    kind = "tile"


class Enlarge(_CellMove):
    """Replace the off-World stack at ``at`` by a tile of the mover's colour, with its cascade.

    ``new_tiles`` lists every cell that becomes a tile, in cascade order (RULES.md 8.1); it is
    ``None`` on a move not generated for a position (e.g. parsed from text).  On a generated
    move it is worked out from the position the first time it is read.
    """

    __slots__ = ("_new_tiles", "_source")
    kind = "enlarge"

    def __init__(self, at, new_tiles=None):
        super().__init__(at)
        self._new_tiles = None if new_tiles is None else tuple(new_tiles)
        self._source = None

    @classmethod
    def _generated(cls, at, source):
        """Fast constructor of the move generator; ``source`` = (tiles, stacks, site, supply) of
        the position, from which the new tiles are worked out when first read.  (It holds the
        position's dicts, not the position, so that no reference cycle forms.)"""
        move = cls.__new__(cls)
        move.at = at
        move._new_tiles = None
        move._source = source
        return move

    @property
    def new_tiles(self):
        if self._new_tiles is None and self._source is not None:
            from .engine import cascade_cells
            self._new_tiles = cascade_cells(*self._source)
            self._source = None
        return self._new_tiles

    def __repr__(self):
        if self.new_tiles is None:
            return f"Enlarge({self.at!r})"
        return f"Enlarge({self.at!r}, new_tiles={self.new_tiles!r})"


class Pass(Move):
    """Pass: allowed only when no dance, enlargement or placement is possible."""

    __slots__ = ()
    kind = "pass"

    def __repr__(self):
        return "Pass()"


class Dance(Move):
    """A Destruction Dance: the stack on ``origin`` sown in ``direction`` (RULES.md 7).

    ``target`` is the opponent stack aimed at, ``drops`` the cells receiving a disc in order
    (bottom disc first; when the line leaves the World the last cell receives every remaining
    disc) and ``perimeter`` tells whether discs land off the World.  They are ``None`` on a dance
    not generated for a position.

    >>> Dance((0, 0), "E", target=(2, 0), drops=((1, 0), (2, 0)), perimeter=False)
    Dance((0, 0), 'E', target=(2, 0), drops=((1, 0), (2, 0)), perimeter=False)
    """

    __slots__ = ("origin", "direction", "target", "_drops", "perimeter", "_code")
    kind = "dance"

    def __init__(self, origin, direction, target=None, drops=None, perimeter=None):
        self.origin = _check_cell(origin, "from")
        if not isinstance(direction, str) or direction not in DIRECTION_INDEX:
            raise MoveFormatError(f"unknown direction {direction!r} (expected one of {' '.join(DIRECTIONS)})")
        self.direction = direction
        self.target = None if target is None else _check_cell(target, "target")
        self._drops = None if drops is None else tuple(_check_cell(c, "drop") for c in drops)
        self.perimeter = perimeter
        self._code = None

    @classmethod
    def _resolved(cls, origin, direction, target, perimeter, code):
        """Fast constructor of the move generator; ``code`` = (origin code, direction index,
        distance to target, tile cells sown, height) gives the drops when first read."""
        dance = cls.__new__(cls)
        dance.origin = origin
        dance.direction = direction
        dance.target = target
        dance._drops = None
        dance.perimeter = perimeter
        dance._code = code
        return dance

    @property
    def drops(self):
        if self._drops is None and self._code is not None:
            a, d, _, m, h = self._code
            delta = DELTAS[d]
            self._drops = tuple(decode(a + delta * i) for i in range(1, m + 2 if m < h else m + 1))
        return self._drops

    def _key(self):
        return (self.origin, self.direction)

    @property
    def text(self):
        return f"dance {cell_text(self.origin)} {self.direction}"

    def __repr__(self):
        if self.target is None:
            return f"Dance({self.origin!r}, {self.direction!r})"
        return (f"Dance({self.origin!r}, {self.direction!r}, target={self.target!r}, "
                f"drops={self.drops!r}, perimeter={self.perimeter!r})")


_PASS = Pass()


def parse_move_text(text):
    """Parse the move notation (``Move.text``); raises :class:`MoveFormatError`.

    Keywords are case-insensitive and the blanks between parts are free.

    >>> parse_move_text("DANCE 1,-2 nw")
    Dance((1, -2), 'NW')
    >>> parse_move_text("jump 1,1")
    Traceback (most recent call last):
    ...
    rules.moves.MoveFormatError: unknown move 'jump 1,1' (expected dance/enlarge/place/tile q,r or pass)
    """
    if not isinstance(text, str):
        raise MoveFormatError(f"a move text must be a string, got {type(text).__name__}")
    words = text.split()
    kind = words[0].lower() if words else ""
    if kind == "pass" and len(words) == 1:
        return _PASS
    if kind == "dance" and len(words) == 3 and words[2].upper() in DIRECTION_INDEX:
        return Dance(parse_cell_text(words[1]), words[2].upper())
    cell_kinds = {"enlarge": Enlarge, "place": Place, "tile": LayTile}
    if kind in cell_kinds and len(words) == 2:
        return cell_kinds[kind](parse_cell_text(words[1]))
    raise MoveFormatError(f"unknown move {text!r} (expected dance/enlarge/place/tile q,r or pass)")


def dance_to_json(dance):
    """The DANCE object of FORMATS.md (the fields a resolved dance knows)."""
    obj = {"from": list(dance.origin), "direction": dance.direction}
    if dance.target is not None:
        obj["target"] = list(dance.target)
        obj["drops"] = [list(cell) for cell in dance.drops]
        obj["perimeter"] = dance.perimeter
    return obj


def move_to_json(move):
    """The MOVE object of FORMATS.md.

    >>> move_to_json(Place((1, 0)))
    {'type': 'place', 'at': [1, 0]}
    >>> move_to_json(Enlarge((2, -1), new_tiles=[(2, -1)]))
    {'type': 'enlarge', 'at': [2, -1], 'new_tiles': [[2, -1]]}
    """
    if isinstance(move, Dance):
        return {"type": "dance", **dance_to_json(move)}
    if isinstance(move, Pass):
        return {"type": "pass"}
    obj = {"type": move.kind, "at": list(move.at)}
    if isinstance(move, Enlarge) and move.new_tiles is not None:
        obj["new_tiles"] = [list(cell) for cell in move.new_tiles]
    return obj


def move_shape_from_json(obj):
    """A move from its JSON object without a position (details unchecked); MoveFormatError."""
    if not isinstance(obj, dict):
        raise MoveFormatError(f"a move must be a JSON object, got {type(obj).__name__}")
    kind = obj.get("type")
    if not isinstance(kind, str):
        raise MoveFormatError(f"a move needs a 'type' (dance, enlarge, place, pass or tile), got {kind!r}")
    if kind == "pass":
        return _PASS
    if kind == "dance":
        if "from" not in obj or "direction" not in obj:
            raise MoveFormatError("a dance needs 'from' and 'direction'")
        direction = obj["direction"]
        if not isinstance(direction, str):
            raise MoveFormatError(f"unknown direction {direction!r}")
        perimeter = obj.get("perimeter")
        if perimeter is not None and type(perimeter) is not bool:
            raise MoveFormatError("'perimeter' must be true or false")
        drops = obj.get("drops")
        if drops is not None and not isinstance(drops, list):
            raise MoveFormatError("'drops' must be a list of cells")
        return Dance(obj["from"], direction, obj.get("target"), drops, perimeter)
    cell_kinds = {"enlarge": Enlarge, "place": Place, "tile": LayTile}
    if kind in cell_kinds:
        if "at" not in obj:
            raise MoveFormatError(f"a {kind} move needs 'at'")
        if kind == "enlarge" and obj.get("new_tiles") is not None:
            new_tiles = obj["new_tiles"]
            if not isinstance(new_tiles, list):
                raise MoveFormatError("'new_tiles' must be a list of cells")
            return Enlarge(obj["at"], [_check_cell(c, "new tile") for c in new_tiles])
        return cell_kinds[kind](obj["at"])
    raise MoveFormatError(f"unknown move type {kind!r} (expected dance, enlarge, place, pass or tile)")

"""The Position value type, its validation and its JSON form (``exxit-position/1``).

>>> pos = Position.standard()
>>> pos
Position(tiles={(0, 0): 'white', (1, 0): 'white', (0, 1): 'black', (1, -1): 'black'}, stacks={}, to_move='white', reserves={'white': 8, 'black': 8}, tiles_left=35, total_tiles=39)
>>> pos == eval(repr(pos)) and hash(pos) == hash(eval(repr(pos)))
True
>>> position_from_json(position_to_json(pos)) == pos
True
"""

from types import MappingProxyType

from .geometry import DELTAS, MAX_COORD, decode, encode

WHITE = "white"
BLACK = "black"
COLOURS = (WHITE, BLACK)
OTHER = {WHITE: BLACK, BLACK: WHITE}
DISCS_PER_COLOUR = 8
TOTAL_TILES = 39
OPENING_TILES_PER_COLOUR = 2  # the standard diamond's; tiles are never taken away
OPENING_TILES = 2 * OPENING_TILES_PER_COLOUR  # every game's World holds at least the diamond's four
FORMAT = "exxit-position/1"


class PositionError(ValueError):
    """A position that is malformed or cannot occur (message: one line, names the culprit)."""


class IllegalMoveError(ValueError):
    """A move that is not legal in the position it is applied to."""


class UnknownDiscsError(IllegalMoveError):
    """A move that would need the colour of a disc the photo did not read."""


def _is_int(value):
    return type(value) is int


def _cell(value, what):
    if (not isinstance(value, tuple) or len(value) != 2 or not all(_is_int(x) for x in value)):
        raise PositionError(f"{what}: a cell must be a (q, r) pair of integers, got {value!r}")
    if not all(-MAX_COORD <= x <= MAX_COORD for x in value):
        raise PositionError(f"{what}: cell {value!r} lies beyond +-{MAX_COORD}")
    return value


def _colour(value, what):
    if value not in COLOURS or not isinstance(value, str):
        raise PositionError(f"{what}: unknown colour {value!r} (expected 'white' or 'black')")
    return value


class Position:
    """An EXXIT position: an immutable, hashable value.

    ``tiles`` maps each tile cell ``(q, r)`` to the colour of its tile; ``stacks`` maps each cell
    holding discs to the tuple of disc colours, bottom to top (a stack on a cell with no tile is an
    off-World stack).  A disc whose colour a photo could not read is ``None``; the top disc of a
    stack must be known.  ``to_move`` is ``"white"``, ``"black"`` or ``None`` (unknown);
    ``reserves`` maps each colour to its discs off the table; ``tiles_left`` is the supply;
    ``passes`` counts passes made in a row just before this position; ``setup_tiles_left`` counts
    the tiles still to be laid in the experienced players' set-up (0 in every other game).

    The constructor checks the position can occur (RULES.md section 14) and raises
    :class:`PositionError` otherwise: the World is non-empty and connected, every off-World stack
    touches a tile, no colour has more than 8 known discs, tiles on the table plus the supply make
    ``total_tiles`` (at most 39).  Discs of unknown colour count towards neither colour: the
    8-per-colour check and the default reserves (8 minus that colour's known discs on the table)
    use the known discs only, so a position read with unknown discs round-trips through its JSON
    with the reserves it was given; the table holds at most 16 discs.

    >>> Position({(0, 0): "white"}, {(0, 0): ("black", "white")}, to_move="black").reserves["white"]
    7
    >>> Position({(0, 0): "white", (5, 5): "black"})
    Traceback (most recent call last):
    ...
    rules.position.PositionError: the World is not connected: tile (5, 5) is cut off from tile (0, 0)
    """

    __slots__ = ("_tiles", "_stacks", "to_move", "_reserves", "tiles_left", "total_tiles",
                 "passes", "setup_tiles_left", "_tiles_hash", "_stacks_hash", "_forced_white", "_forced_black", "_enlargements",
                 "_tiles_view", "_stacks_view")

    def __init__(self, tiles, stacks=None, to_move=None, reserves=None, tiles_left=None,
                 total_tiles=None, passes=0, setup_tiles_left=0):
        if not hasattr(tiles, "items"):
            raise PositionError("tiles must map cells to colours")
        if stacks is None:
            stacks = {}
        if not hasattr(stacks, "items"):
            raise PositionError("stacks must map cells to disc tuples")
        tile_codes = {}
        for cell, colour in tiles.items():
            _cell(cell, "tile")
            tile_codes[encode(*cell)] = _colour(colour, f"tile {cell}")
        stack_codes = {}
        known = {WHITE: 0, BLACK: 0}
        all_discs = 0
        for cell, discs in stacks.items():
            _cell(cell, "stack")
            if not isinstance(discs, (tuple, list)) or not discs:
                raise PositionError(f"stack at {cell}: discs must be a non-empty sequence")
            for disc in discs:
                if disc is not None:
                    known[_colour(disc, f"stack at {cell}")] += 1
            if discs[-1] is None:
                raise PositionError(f"stack at {cell}: the top disc's colour is unknown")
            all_discs += len(discs)
            stack_codes[encode(*cell)] = tuple(discs)
        if to_move is not None:
            _colour(to_move, "to_move")
        for colour in COLOURS:
            if known[colour] > DISCS_PER_COLOUR:
                raise PositionError(f"{colour} has {known[colour]} discs on the table (at most {DISCS_PER_COLOUR})")
        reserve_map = {}
        for colour in COLOURS:
            given = None if reserves is None else reserves.get(colour)
            if given is None:
                given = DISCS_PER_COLOUR - known[colour]
            elif not _is_int(given) or not 0 <= given <= DISCS_PER_COLOUR - known[colour]:
                raise PositionError(
                    f"reserves: {colour} reserve {given!r} must be an integer 0..{DISCS_PER_COLOUR - known[colour]} "
                    f"({known[colour]} {colour} discs are on the table)")
            reserve_map[colour] = given
        if all_discs > 2 * DISCS_PER_COLOUR:
            raise PositionError(f"{all_discs} discs on the table (a set has {2 * DISCS_PER_COLOUR})")
        if reserves is not None and set(reserves) - set(COLOURS):
            raise PositionError(f"reserves: unknown colour in {sorted(map(str, reserves))}")
        placed = len(tile_codes)
        if total_tiles is None:
            total_tiles = TOTAL_TILES if tiles_left is None or not _is_int(tiles_left) else placed + tiles_left
        if not _is_int(total_tiles) or not 1 <= total_tiles <= TOTAL_TILES:
            raise PositionError(f"total_tiles must be an integer 1..{TOTAL_TILES}, got {total_tiles!r}")
        if placed > total_tiles:
            raise PositionError(f"{placed} tiles on the table but total_tiles is {total_tiles}")
        if tiles_left is None:
            tiles_left = total_tiles - placed
        if not _is_int(tiles_left) or tiles_left != total_tiles - placed:
            raise PositionError(
                f"tiles_left {tiles_left!r} disagrees with {placed} tiles on the table and total_tiles {total_tiles}")
        if not _is_int(passes) or not 0 <= passes <= 2:
            raise PositionError(f"passes must be 0, 1 or 2, got {passes!r}")
        if not _is_int(setup_tiles_left) or not 0 <= setup_tiles_left <= tiles_left:
            raise PositionError(f"setup_tiles_left must be an integer 0..tiles_left, got {setup_tiles_left!r}")
        _check_world(tile_codes, stack_codes)
        self._init(tile_codes, stack_codes, to_move, reserve_map, tiles_left, total_tiles, passes,
                   setup_tiles_left, _hash_items(tile_codes), _hash_items(stack_codes))

    def _init(self, tiles, stacks, to_move, reserves, tiles_left, total_tiles, passes,
              setup_tiles_left, tiles_hash, stacks_hash):
        self._tiles = tiles
        self._stacks = stacks
        self.to_move = to_move
        self._reserves = reserves
        self.tiles_left = tiles_left
        self.total_tiles = total_tiles
        self.passes = passes
        self.setup_tiles_left = setup_tiles_left
        self._tiles_hash = tiles_hash
        self._stacks_hash = stacks_hash
        self._forced_white = None  # engine memo: white's forced dances
        self._forced_black = None  # engine memo: black's forced dances
        self._enlargements = None  # engine memo: the legal enlargements
        self._tiles_view = None
        self._stacks_view = None

    @classmethod
    def _make(cls, *fields):
        """Trusted constructor of the engine: internal codes, no validation."""
        pos = cls.__new__(cls)
        pos._init(*fields)
        return pos

    @classmethod
    def standard(cls, total_tiles=TOTAL_TILES):
        """The opening diamond, white to move; ``total_tiles`` 39, or 29 / 19 for blitz.

        >>> Position.standard(29).tiles_left
        25
        """
        if not _is_int(total_tiles) or not 4 <= total_tiles <= TOTAL_TILES:
            raise PositionError(f"a standard game needs 4..{TOTAL_TILES} tiles, got {total_tiles!r}")
        return cls({(0, 0): WHITE, (1, 0): WHITE, (0, 1): BLACK, (1, -1): BLACK},
                   to_move=WHITE, total_tiles=total_tiles)

    @classmethod
    def experienced(cls, total_tiles=TOTAL_TILES):
        """The experienced players' set-up: white (0,0), black (0,1), then 4 tiles to lay.

        >>> pos = Position.experienced()
        >>> pos.setup_tiles_left, pos.tiles_left, pos.to_move
        (4, 37, 'white')
        """
        if not _is_int(total_tiles) or not 6 <= total_tiles <= TOTAL_TILES:
            raise PositionError(f"an experienced set-up needs 6..{TOTAL_TILES} tiles, got {total_tiles!r}")
        return cls({(0, 0): WHITE, (0, 1): BLACK}, to_move=WHITE, total_tiles=total_tiles,
                   setup_tiles_left=4)

    @property
    def tiles(self):
        """Mapping of tile cells ``(q, r)`` to tile colours (read-only)."""
        if self._tiles_view is None:
            self._tiles_view = MappingProxyType({decode(c): v for c, v in self._tiles.items()})
        return self._tiles_view

    @property
    def stacks(self):
        """Mapping of cells ``(q, r)`` to disc tuples, bottom to top (read-only)."""
        if self._stacks_view is None:
            self._stacks_view = MappingProxyType({decode(c): v for c, v in self._stacks.items()})
        return self._stacks_view

    @property
    def reserves(self):
        """Mapping of each colour to the number of its discs off the table (read-only)."""
        return MappingProxyType(self._reserves)

    def with_to_move(self, to_move):
        """The same position with ``to_move`` set (``"white"``, ``"black"`` or ``None``).

        >>> Position.standard().with_to_move("black").to_move
        'black'
        """
        if to_move is not None:
            _colour(to_move, "to_move")
        return Position._make(self._tiles, self._stacks, to_move, self._reserves, self.tiles_left,
                              self.total_tiles, self.passes, self.setup_tiles_left, self._tiles_hash,
                              self._stacks_hash)

    def with_stack(self, cell, discs):
        """The same position with the stack on ``cell`` made ``discs`` (bottom to top; ``()``: no
        stack): a disc put on comes from its colour's reserve, a disc taken off goes back to it.
        Checked as the constructor checks a position: raises :class:`PositionError` if it cannot occur.

        >>> pos = Position({(0, 0): "white"}, {(0, 0): ("black",)})
        >>> after = pos.with_stack((0, 0), ("white", "black"))
        >>> after.stacks[(0, 0)], after.reserves["white"]
        (('white', 'black'), 7)
        """
        if not isinstance(discs, (tuple, list)):
            raise PositionError(f"stack at {cell}: discs must be a sequence")
        before = self.stacks.get(cell, ())
        reserves = {c: self._reserves[c] + before.count(c) - discs.count(c) for c in COLOURS}
        stacks = {**self.stacks, cell: discs} if discs else {c: d for c, d in self.stacks.items() if c != cell}
        return Position(self.tiles, stacks, self.to_move, reserves, self.tiles_left, self.total_tiles,
                        self.passes, self.setup_tiles_left)

    def is_game_over(self):
        """True when the supply is empty or both players just passed (RULES.md 9).

        Repetition and resignation are facts of a game, not of a position: see :class:`rules.Game`.
        """
        return self.tiles_left == 0 or self.passes >= 2

    def _same_placement(self, other):
        """Same tiles, stacks and side to move: the identity of a position for repetition (A22)."""
        return (self._stacks_hash == other._stacks_hash and self._tiles_hash == other._tiles_hash
                and self.to_move == other.to_move and self._stacks == other._stacks
                and self._tiles == other._tiles)

    def __eq__(self, other):
        if not isinstance(other, Position):
            return NotImplemented
        return (self._same_placement(other) and self._reserves == other._reserves
                and self.tiles_left == other.tiles_left and self.total_tiles == other.total_tiles
                and self.passes == other.passes and self.setup_tiles_left == other.setup_tiles_left)

    def __hash__(self):
        return hash((self._tiles_hash, self._stacks_hash, self.to_move, self._reserves[WHITE],
                     self._reserves[BLACK], self.tiles_left, self.total_tiles, self.passes,
                     self.setup_tiles_left))

    def __reduce__(self):
        return (position_from_json, (position_to_json(self),))

    def __repr__(self):
        args = [f"tiles={dict(self.tiles)!r}", f"stacks={dict(self.stacks)!r}",
                f"to_move={self.to_move!r}", f"reserves={self._reserves!r}",
                f"tiles_left={self.tiles_left!r}", f"total_tiles={self.total_tiles!r}"]
        if self.passes:
            args.append(f"passes={self.passes!r}")
        if self.setup_tiles_left:
            args.append(f"setup_tiles_left={self.setup_tiles_left!r}")
        return f"Position({', '.join(args)})"


def _hash_items(mapping):
    """Order-independent hash of a dict, kept up to date by the engine with XOR."""
    value = 0
    for item in mapping.items():
        value ^= hash(item)
    return value


def _check_world(tiles, stacks):
    if not tiles:
        raise PositionError("the World has no tile")
    start = min(tiles)
    seen = {start}
    todo = [start]
    while todo:
        code = todo.pop()
        for delta in DELTAS:
            n = code + delta
            if n in tiles and n not in seen:
                seen.add(n)
                todo.append(n)
    if len(seen) != len(tiles):
        cut = min(c for c in tiles if c not in seen)
        raise PositionError(f"the World is not connected: tile {decode(cut)} is cut off from tile {decode(start)}")
    for code in sorted(stacks):
        if code not in tiles and not any(code + delta in tiles for delta in DELTAS):
            raise PositionError(f"the off-World stack at {decode(code)} touches no tile")


# --- JSON -----------------------------------------------------------------------------------

def _json_int(obj, key, what, default=None):
    value = obj.get(key)
    if value is None:
        return default
    if not _is_int(value):
        raise PositionError(f"{what}{key} must be an integer, got {value!r}")
    return value


def _json_cell(obj, what):
    if not isinstance(obj, dict):
        raise PositionError(f"{what} must be an object with q and r, got {obj!r}"[:200])
    for key in ("q", "r"):
        if not _is_int(obj.get(key)):
            raise PositionError(f"{what}: {key} must be an integer, got {obj.get(key)!r}")
    return (obj["q"], obj["r"])


def _json_stack(obj, what):
    cell = _json_cell(obj, what)
    what = f"stack at {cell}"
    discs = obj.get("discs")
    height = _json_int(obj, "height", f"{what}: ")
    top = obj.get("top")
    if top is not None:
        _colour(top, f"{what}: top")
    if discs is not None:
        if not isinstance(discs, list) or not discs:
            raise PositionError(f"{what}: discs must be a non-empty list")
        for disc in discs:
            if disc is not None:
                _colour(disc, what)
        if height is not None and height != len(discs):
            raise PositionError(f"{what}: height {height} disagrees with {len(discs)} discs")
        if top is not None:
            if discs[-1] is not None and discs[-1] != top:
                raise PositionError(f"{what}: top {top!r} disagrees with the top disc {discs[-1]!r}")
            discs = discs[:-1] + [top]
    else:
        if height is None or top is None:
            raise PositionError(f"{what}: needs discs, or height and top")
        if height < 1:
            raise PositionError(f"{what}: height must be at least 1, got {height}")
        if height > 2 * DISCS_PER_COLOUR:
            raise PositionError(f"{what}: height {height} exceeds the {2 * DISCS_PER_COLOUR} discs of a set")
        discs = [None] * (height - 1) + [top]
    return cell, tuple(discs)


def position_from_json(obj):
    """A Position from its ``exxit-position/1`` object; raises :class:`PositionError`.

    Optional fields take the defaults of FORMATS.md; fields it does not know (``confidence``,
    ``image``, ...) are ignored.  When ``tiles_left`` is given without ``total_tiles``, the total
    is the tiles on the table plus ``tiles_left`` (39 for a full set).  Our extension ``setup_tiles_left`` (tiles still to lay in the
    experienced set-up) defaults to 6 minus the tiles for a World of 2 or 3 tiles without discs
    (only the experienced set-up has one), else 0.  A stack may be given by ``discs`` (``null`` = colour not read),
    by ``height`` + ``top``, or by both (they must agree; the top must be known).

    >>> pos = position_from_json({"tiles": [{"q": 0, "r": 0, "colour": "white"}],
    ...     "stacks": [{"q": 0, "r": 0, "height": 3, "top": "black", "discs": [None, "white", None]}]})
    >>> pos.stacks[(0, 0)], pos.reserves["white"], pos.to_move
    ((None, 'white', 'black'), 7, None)
    >>> position_from_json({"tiles": [{"q": 0, "r": 0, "colour": "red"}]})
    Traceback (most recent call last):
    ...
    rules.position.PositionError: tile (0, 0): unknown colour 'red' (expected 'white' or 'black')
    """
    if not isinstance(obj, dict):
        raise PositionError(f"a position must be a JSON object, got {type(obj).__name__}")
    fmt = obj.get("format")
    if fmt is not None and fmt != FORMAT:
        raise PositionError(f"unknown format {fmt!r} (expected {FORMAT!r})")
    raw_tiles = obj.get("tiles")
    if not isinstance(raw_tiles, list):
        raise PositionError("a position needs 'tiles', a list of {q, r, colour}")
    raw_stacks = obj.get("stacks", [])
    if raw_stacks is None:
        raw_stacks = []
    if not isinstance(raw_stacks, list):
        raise PositionError("'stacks' must be a list of {q, r, discs}")
    tiles = {}
    for index, item in enumerate(raw_tiles):
        cell = _json_cell(item, f"tiles[{index}]")
        if cell in tiles:
            raise PositionError(f"two tiles on cell {cell}")
        tiles[cell] = _colour(item.get("colour"), f"tile {cell}")
    stacks = {}
    for index, item in enumerate(raw_stacks):
        cell, discs = _json_stack(item, f"stacks[{index}]")
        if cell in stacks:
            raise PositionError(f"two stacks on cell {cell}")
        stacks[cell] = discs
    to_move = obj.get("to_move")
    reserves = obj.get("reserves")
    if reserves is not None and not isinstance(reserves, dict):
        raise PositionError("'reserves' must be an object {white: n, black: n}")
    return Position(tiles, stacks, to_move=to_move, reserves=reserves,
                    tiles_left=_json_int(obj, "tiles_left", ""),
                    total_tiles=_json_int(obj, "total_tiles", ""),
                    passes=_json_int(obj, "passes", "", 0),
                    setup_tiles_left=_json_int(obj, "setup_tiles_left", "", None)
                    if obj.get("setup_tiles_left") is not None
                    else _implied_setup_tiles(len(tiles), bool(stacks), obj.get("tiles_left"), obj.get("total_tiles")))


def _implied_setup_tiles(placed, has_discs, tiles_left, total_tiles):
    """Set-up tiles still to lay when the JSON does not say: a World of 2 or 3 tiles and no disc
    is only reached in the experienced players' set-up (every other game starts with 4 tiles and
    tiles are never removed), which lays tiles until the World has 6."""
    if placed >= 4 or has_discs:
        return 0
    if _is_int(tiles_left):
        supply = tiles_left
    elif _is_int(total_tiles):
        supply = total_tiles - placed
    else:
        supply = TOTAL_TILES - placed
    return max(0, min(6 - placed, supply))


def position_to_json(pos):
    """The ``exxit-position/1`` object of a position (cells sorted; unknown discs as ``null``).

    ``to_move`` is left out when unknown; ``setup_tiles_left`` (our extension) appears during
    the experienced set-up (and wherever its JSON default would be wrong); a stack with unknown
    discs also carries ``height`` and ``top``.
    """
    stacks = []
    for code in sorted(pos._stacks):
        q, r = decode(code)
        discs = pos._stacks[code]
        entry = {"q": q, "r": r, "discs": list(discs)}
        if None in discs:
            entry["height"] = len(discs)
            entry["top"] = discs[-1]
        stacks.append(entry)
    obj = {
        "format": FORMAT,
        "tiles": [{"q": decode(c)[0], "r": decode(c)[1], "colour": pos._tiles[c]} for c in sorted(pos._tiles)],
        "stacks": stacks,
    }
    if pos.to_move is not None:
        obj["to_move"] = pos.to_move
    obj.update(reserves=dict(pos._reserves), tiles_left=pos.tiles_left,
               total_tiles=pos.total_tiles, passes=pos.passes)
    if pos.setup_tiles_left or _implied_setup_tiles(len(pos._tiles), bool(pos._stacks), pos.tiles_left, None):
        obj["setup_tiles_left"] = pos.setup_tiles_left
    return obj

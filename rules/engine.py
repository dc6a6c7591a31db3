"""Move generation, move application, islands, score and analysis (RULES.md sections 6-10).

Pure functions of a :class:`~rules.position.Position`.  The forced dances of a colour are
computed once per position object and kept on it (positions are immutable), so generating the
legal moves and then applying one of them walks the board once.

>>> from rules import Position, legal_moves, apply_move
>>> pos = apply_move(Position.standard(), Place((0, 0)))
>>> legal_moves(pos)[:2]
[Place((0, 1)), Place((1, -1))]
>>> score(pos)
{'white': 4, 'black': 3}
"""

from .geometry import DELTAS, DIRECTIONS, decode, encode
from .moves import (Dance, Enlarge, LayTile, Move, Pass, Place, cell_text, dance_to_json,
                    move_shape_from_json, move_to_json)
from .position import (BLACK, COLOURS, OTHER, WHITE, IllegalMoveError, Position, PositionError,
                       UnknownDiscsError)

_PASS = Pass()
_E, _SE, _SW, _W, _NW, _NE = DELTAS
# Offset between two cells in line -> (direction index, distance); 16 discs reach 16 cells at most.
_LINE = {delta * k: (d, k) for d, delta in enumerate(DELTAS) for k in range(1, 17)}
_NEIGHBOUR_SETS = {}


def _neighbour_set(code):
    """The six neighbours of a cell code as a frozenset (table filled on first use)."""
    cells = _NEIGHBOUR_SETS[code] = frozenset(code + delta for delta in DELTAS)
    return cells


class _MoveTable(dict):
    """Cell code -> the one move object of a kind for that cell, made on first use (moves are
    immutable values, so every position can share them)."""

    def __init__(self, kind):
        super().__init__()
        self.kind = kind

    def __missing__(self, code):
        move = self[code] = self.kind(decode(code))
        return move


_place_moves = _MoveTable(Place)
_tile_moves = _MoveTable(LayTile)


def _dance_scan(pos, colour):
    """Every dance of ``colour`` (RULES.md 7.1) as codes ``(a, d, k, m, h)``.

    ``a`` origin, ``d`` direction index, ``k`` distance to the target, ``m`` tile cells sown, ``h``
    height; the dance is a perimeter dance when ``m < h``.  Returns ``(perimeter, other)`` lists.

    Rather than walking six rays from every own stack, each (own stack, opponent stack) pair on
    the tiles is looked up in the table of in-line offsets; only pairs in line, within reach and
    not taller are then checked cell by cell.
    """
    tiles = pos._tiles
    stacks = pos._stacks
    own = []
    targets = []
    for c, discs in stacks.items():
        if c in tiles:
            if discs[-1] == colour:
                own.append((c, len(discs)))
            else:
                targets.append((c, len(discs)))
    perimeter = []
    inner = []
    if not targets:
        return perimeter, inner
    line_of = _LINE.get
    for a, h in own:
        for b, height in targets:
            line = line_of(b - a)
            if line is None or height > h:
                continue
            d, k = line
            if k > h:
                continue
            delta = DELTAS[d]
            c = a + delta
            while c != b and c in tiles and c not in stacks:
                c += delta
            if c != b:
                continue
            m = k
            while m < h:
                c += delta
                if c not in tiles:
                    break
                m += 1
            if m == h:
                inner.append((a, d, k, m, h))
            elif c not in stacks:
                perimeter.append((a, d, k, m, h))
    return perimeter, inner


def _forced(pos, colour):
    """The forced dances of ``colour``, memoised on the position: dict (origin, direction) -> Dance."""
    forced = pos._forced_white if colour == WHITE else pos._forced_black
    if forced is None:
        perimeter, inner = _dance_scan(pos, colour)
        forced = {}
        for code in sorted(perimeter or inner):
            dance = _dance(code)
            forced[(dance.origin, dance.direction)] = dance
        if colour == WHITE:
            pos._forced_white = forced
        else:
            pos._forced_black = forced
    return forced


def forced_dances(pos, colour):
    """The dances ``colour`` must choose from if it were to move, after perimeter priority (7.4).

    Works whatever the side to move and even when the game is over; sorted by origin, then
    direction index.  Example 4 of the rule text: the perimeter dance west is the only forced one.

    >>> pos = Position({(-1, 0): "white", (0, 0): "white", (1, 0): "white", (2, 0): "white",
    ...                 (0, 1): "white", (0, 2): "white", (1, -1): "white", (2, -1): "white"},
    ...                {(0, 0): ("white", "white"), (1, 0): ("black",), (-1, 0): ("black",),
    ...                 (0, 1): ("black", "black"), (2, -1): ("white",)}, to_move="white")
    >>> forced_dances(pos, "white")
    [Dance((0, 0), 'W', target=(-1, 0), drops=((-1, 0), (-2, 0)), perimeter=True)]
    """
    if colour not in COLOURS:
        raise ValueError(f"unknown colour {colour!r}")
    return list(_forced(pos, colour).values())


def dances_a_disc_off(pos, cells):
    """The forced dances if a stack on ``cells`` had one disc fewer (its bottom one) or one more (at
    the bottom, colour unknown): ``[(cell, height, {colour: [Dance]})]`` for each such height whose
    forced dances, of either colour, differ from those of ``pos``; in the order of ``cells``, fewer
    first. A stack's height is what a photo misreads most; this names the stacks that decide.
    Heights a set cannot hold are skipped.

    >>> from rules import Position
    >>> pos = Position({(0, 0): "white", (1, 0): "white", (2, 0): "black"},
    ...                {(0, 0): ("white",), (2, 0): ("black",)})
    >>> [(cell, height, [d.text for d in dances["white"]]) for cell, height, dances in dances_a_disc_off(pos, [(0, 0)])]
    [((0, 0), 2, ['dance 0,0 E'])]
    """
    read = {c: forced_dances(pos, c) for c in COLOURS}
    out = []
    for cell in cells:
        discs = pos.stacks[cell]
        for other in (discs[1:], (None,) + discs):
            dances = other and _dances_if_changed(read, lambda: pos.with_stack(cell, other))
            if dances:
                out.append((cell, len(other), dances))
    return out


def _dances_if_changed(read, change):
    """The forced dances of both colours in ``change()``, or None when they are ``read`` or the
    changed position cannot occur."""
    try:
        changed = change()
    except PositionError:
        return None
    dances = {c: forced_dances(changed, c) for c in COLOURS}
    return None if dances == read else dances


def dances_a_disc_moved(pos, cells):
    """The forced dances if a disc of a stack on ``cells`` (its bottom one) were on another of them
    (at the bottom, colour unknown): ``[(from_cell, to_cell, {colour: [Dance]})]`` for each such pair
    whose forced dances, of either colour, differ from those of ``pos``; in the order of ``cells``.
    When the players have counted the discs in their reserves, the heights must keep their sum, so a
    misread height is a disc read on the wrong stack: these are the alternatives to check.

    >>> from rules import Position
    >>> pos = Position({(0, 0): "white", (1, 0): "white", (2, 0): "black", (3, 0): "black"},
    ...                {(0, 0): ("white",), (2, 0): ("black",), (3, 0): ("black", "black")})
    >>> [(a, b, [d.text for d in dances["white"]]) for a, b, dances in dances_a_disc_moved(pos, [(0, 0), (3, 0)])]
    [((3, 0), (0, 0), ['dance 0,0 E'])]
    """
    read = {c: forced_dances(pos, c) for c in COLOURS}
    out = []
    for origin in cells:
        fewer = pos.stacks[origin][1:]
        if not fewer:
            continue
        for cell in cells:
            dances = cell != origin and _dances_if_changed(
                read, lambda: pos.with_stack(origin, fewer).with_stack(cell, (None,) + pos.stacks[cell]))
            if dances:
                out.append((origin, cell, dances))
    return out


def all_dances(pos, colour):
    """Every dance of ``colour`` (RULES.md 7.1) before the perimeter priority, sorted like
    :func:`forced_dances`: shows which dances the priority set aside.

    >>> from rules import Position
    >>> pos = Position({(q, 0): "white" for q in range(-1, 3)},
    ...                {(0, 0): ("white", "white"), (1, 0): ("black",), (-1, 0): ("black",)})
    >>> [(d.direction, d.perimeter) for d in all_dances(pos, "white")]
    [('E', False), ('W', True)]
    >>> [d.direction for d in forced_dances(pos, "white")]
    ['W']
    """
    if colour not in COLOURS:
        raise ValueError(f"unknown colour {colour!r}")
    perimeter, inner = _dance_scan(pos, colour)
    return [_dance(code) for code in sorted(perimeter + inner)]


def _dance(code):
    a, d, k, m, h = code
    return Dance._resolved(decode(a), DIRECTIONS[d], decode(a + DELTAS[d] * k), m < h, code)


def _tile_neighbour_count(tiles, code):
    return ((code + _E in tiles) + (code + _SE in tiles) + (code + _SW in tiles)
            + (code + _W in tiles) + (code + _NW in tiles) + (code + _NE in tiles))


def _cascade(tiles, stacks, site, supply):
    """The cells (codes) an enlargement at ``site`` turns into tiles, in order (RULES.md 8.1).

    Depth-first from each new tile, neighbours in direction order, eligibility checked when a
    neighbour is examined, stopping when the supply is used up.  Nothing is copied: the new
    tiles are kept aside in ``new``; ``path`` holds (cell, next direction) of the tiles whose
    neighbours are still being examined.
    """
    laid = [site]
    new = {site}
    path = [(site, 0)]
    while path and len(laid) < supply:
        code, d = path.pop()
        while d < 6:
            n = code + DELTAS[d]
            d += 1
            if n in stacks and n not in tiles and n not in new:
                touching = _tile_neighbour_count(tiles, n)
                if touching < 2:
                    touching += len(new.intersection(_NEIGHBOUR_SETS.get(n) or _neighbour_set(n)))
                if touching >= 2:
                    laid.append(n)
                    new.add(n)
                    path.append((code, d))
                    path.append((n, 0))
                    break
    return laid


def cascade_cells(tiles, stacks, site, supply):
    """The cells ``(q, r)`` of :func:`_cascade` (how a generated Enlarge learns its new tiles)."""
    return tuple(map(decode, _cascade(tiles, stacks, site, supply)))


def _enlargements(pos):
    """The legal enlargements of the position (memoised): dict site code -> Enlarge."""
    found = pos._enlargements
    if found is None:
        found = {}
        supply = pos.tiles_left
        if supply > 0:
            tiles = pos._tiles
            stacks = pos._stacks
            off_world = stacks.keys() - tiles.keys()
            if off_world:
                for site in sorted(off_world):
                    if _tile_neighbour_count(tiles, site) >= 2:
                        found[site] = Enlarge._generated(decode(site), (tiles, stacks, site, supply))
        pos._enlargements = found
    return found


def _setup_sites(pos):
    tiles = pos._tiles
    stacks = pos._stacks
    sites = {c + delta for c in tiles for delta in DELTAS}
    return sorted(c for c in sites if c not in tiles and c not in stacks)


def _require_mover(pos):
    if pos.to_move is None:
        raise PositionError("the side to move is unknown")
    return pos.to_move


def legal_moves(pos):
    """Every legal move of the side to move, in the turn priority of RULES.md 6.

    Forced dances if any; otherwise enlargements and placements; otherwise a pass.  During the
    experienced set-up only ``tile`` moves; nothing once the game is over.  Raises
    :class:`PositionError` when the side to move is unknown.

    >>> legal_moves(Position.experienced())[:3]
    [LayTile((-1, 0)), LayTile((-1, 1)), LayTile((-1, 2))]
    """
    mover = pos.to_move or _require_mover(pos)
    if pos.tiles_left == 0 or pos.passes >= 2:  # pos.is_game_over(), inlined: this runs every turn
        return []
    if pos.setup_tiles_left:
        return list(map(_tile_moves.__getitem__, _setup_sites(pos)))
    forced = _forced(pos, mover)
    if forced:
        return list(forced.values())
    moves = list(_enlargements(pos).values())
    if pos._reserves[mover]:
        moves.extend(map(_place_moves.__getitem__, sorted(pos._tiles.keys() - pos._stacks.keys())))
    return moves or [_PASS]


def apply_move(pos, move):
    """The position after ``move``; raises :class:`IllegalMoveError` if it is not legal.

    A move parsed from text or short JSON (a dance without target and drops, an enlargement
    without new tiles) is accepted: the position supplies the rest.  Raises
    :class:`UnknownDiscsError` when the move needs the colour of an unread disc.

    >>> pos = Position({(0, 0): "white", (1, 0): "white", (0, 1): "black"},
    ...                {(1, -1): ("black",), (-1, 0): ("white",)}, to_move="white")
    >>> after = apply_move(pos, Enlarge((1, -1)))
    >>> after.tiles[(1, -1)], after.reserves["black"], after.to_move
    ('white', 8, 'black')
    """
    if not isinstance(move, Move):
        raise TypeError(f"not a move: {move!r}")
    mover = pos.to_move or _require_mover(pos)
    if pos.tiles_left == 0 or pos.passes >= 2:
        raise IllegalMoveError(f"{move.text}: the game is over")
    other = OTHER[mover]
    if pos.setup_tiles_left:
        if not isinstance(move, LayTile):
            raise IllegalMoveError(f"{move.text}: the experienced set-up lays tiles first")
        code = encode(*move.at)
        tiles = pos._tiles
        if code in tiles or code in pos._stacks or not any(code + d in tiles for d in DELTAS):
            raise IllegalMoveError(f"{move.text}: a set-up tile goes on an empty cell touching the World")
        new_tiles = dict(tiles)
        new_tiles[code] = mover
        return Position._make(new_tiles, pos._stacks, other, pos._reserves, pos.tiles_left - 1,
                              pos.total_tiles, 0, pos.setup_tiles_left - 1,
                              pos._tiles_hash ^ hash((code, mover)), pos._stacks_hash)
    forced = _forced(pos, mover)
    if isinstance(move, Dance):
        dance = forced.get((move.origin, move.direction))
        if dance is None:
            raise IllegalMoveError(f"{move.text}: not a forced dance of {mover}")
        return _apply_dance(pos, dance._code, other)
    if forced:
        raise IllegalMoveError(f"{move.text}: {mover} must dance ({next(iter(forced.values())).text})")
    if isinstance(move, Place):
        code = encode(*move.at)
        if code not in pos._tiles or code in pos._stacks:
            raise IllegalMoveError(f"{move.text}: a disc goes on an empty tile")
        if not pos._reserves[mover]:
            raise IllegalMoveError(f"{move.text}: {mover} has no disc in reserve")
        stacks = dict(pos._stacks)
        stacks[code] = (mover,)
        reserves = dict(pos._reserves)
        reserves[mover] -= 1
        return _same_world(pos, Position._make(pos._tiles, stacks, other, reserves, pos.tiles_left,
                                               pos.total_tiles, 0, 0, pos._tiles_hash,
                                               pos._stacks_hash ^ hash((code, (mover,)))))
    if isinstance(move, Enlarge):
        site = encode(*move.at)
        if site not in _enlargements(pos):
            raise IllegalMoveError(f"{move.text}: not an off-World stack touching 2 tiles (or the supply is empty)")
        return _apply_enlarge(pos, _cascade(pos._tiles, pos._stacks, site, pos.tiles_left), mover, other)
    if isinstance(move, Pass):
        if legal_moves(pos) != [_PASS]:
            raise IllegalMoveError(f"pass: {mover} has a move to make")
        return _same_world(pos, Position._make(pos._tiles, pos._stacks, other, pos._reserves, pos.tiles_left,
                                               pos.total_tiles, pos.passes + 1, 0, pos._tiles_hash,
                                               pos._stacks_hash))
    raise IllegalMoveError(f"{move.text}: set-up tiles are laid only in the experienced set-up")


def _apply_enlarge(pos, laid, mover, other):
    tiles = dict(pos._tiles)
    stacks = dict(pos._stacks)
    reserves = dict(pos._reserves)
    tiles_hash = pos._tiles_hash
    stacks_hash = pos._stacks_hash
    for code in laid:
        discs = stacks.pop(code)
        stacks_hash ^= hash((code, discs))
        for disc in discs:
            if disc is None:
                raise UnknownDiscsError(f"enlarge {cell_text(decode(laid[0]))}: would return a disc of "
                                        f"unknown colour (at {cell_text(decode(code))}) to a reserve")
            reserves[disc] += 1
        tiles[code] = mover
        tiles_hash ^= hash((code, mover))
    return Position._make(tiles, stacks, other, reserves, pos.tiles_left - len(laid), pos.total_tiles,
                          0, 0, tiles_hash, stacks_hash)


def _apply_dance(pos, code, other):
    a, d, k, m, h = code
    stacks = dict(pos._stacks)
    discs = stacks.pop(a)
    sh = pos._stacks_hash ^ hash((a, discs))
    delta = DELTAS[d]
    c = a
    for i in range(m):
        disc = discs[i]
        if disc is None:
            raise UnknownDiscsError(f"dance {decode(a)} {DIRECTIONS[d]}: a disc of unknown colour would become a top")
        c += delta
        old = stacks.get(c)
        if old is None:
            new = (disc,)
        else:
            sh ^= hash((c, old))
            new = old + (disc,)
        stacks[c] = new
        sh ^= hash((c, new))
    if m < h:
        c += delta
        rest = discs[m:]
        stacks[c] = rest
        sh ^= hash((c, rest))
    after = Position._make(pos._tiles, stacks, other, pos._reserves, pos.tiles_left, pos.total_tiles,
                           0, 0, pos._tiles_hash, sh)
    return after if m < h else _same_world(pos, after)


def _same_world(before, after):
    """``after`` has the tiles, off-World stacks and supply of ``before`` (a placement, a pass or a
    dance that stays on the tiles): it inherits the enlargements already worked out."""
    after._enlargements = before._enlargements
    return after


def islands(pos, colour):
    """The islands of ``colour`` (edge-connected groups of its tiles), largest first.

    Each island lists its cells sorted; islands of equal size are ordered by their first cell.

    >>> islands(Position.standard(), "black")
    [[(0, 1)], [(1, -1)]]
    """
    return [[decode(c) for c in island] for island in _islands(pos, colour)]


def _island_from(todo, start):
    """Remove from ``todo`` the island of ``start`` (already taken out of it); return it."""
    island = [start]
    neighbour_sets = _NEIGHBOUR_SETS
    for c in island:
        found = todo.intersection(neighbour_sets[c] if c in neighbour_sets else _neighbour_set(c))
        if found:
            todo -= found
            island.extend(found)
    return island


def _islands(pos, colour):
    todo = {c for c, v in pos._tiles.items() if v == colour}
    found = []
    while todo:
        island = _island_from(todo, todo.pop())
        island.sort()
        found.append(island)
    found.sort(key=lambda island: (-len(island), island[0]))
    return found


def _largest_island(tiles, colour):
    """(number of ``colour`` tiles, size of its largest island)."""
    todo = {c for c, v in tiles.items() if v == colour}
    own = len(todo)
    largest = 0
    while len(todo) > largest:  # no island left can be larger
        size = len(_island_from(todo, todo.pop()))
        if size > largest:
            largest = size
    return own, largest


def score(pos):
    """Each colour's score: own tiles + size of one largest island (RULES.md 10).

    >>> score(Position.standard())
    {'white': 4, 'black': 3}
    """
    result = {}
    for colour in COLOURS:
        own, largest = _largest_island(pos._tiles, colour)
        result[colour] = own + largest
    return result


def winner(scores):
    """The colour with the higher score, or ``None`` for a draw."""
    if scores[WHITE] == scores[BLACK]:
        return None
    return WHITE if scores[WHITE] > scores[BLACK] else BLACK


def end_reason(pos):
    """Why the game is over at this position (``"supply_exhausted"``, ``"two_passes"``) or None."""
    if pos.tiles_left == 0:
        return "supply_exhausted"
    if pos.passes >= 2:
        return "two_passes"
    return None


def analyze(pos):
    """The analysis object of ``python -m rules analyze`` (FORMATS.md).

    ``forced_dances`` of both colours (also when the game is over), ``score``, ``islands``,
    ``legal_moves`` (when the side to move is known; empty once the game is over), ``game_over``
    and, when it is over, ``outcome`` = ``{"reason", "winner", "score"}``.

    >>> sorted(analyze(Position.standard()))
    ['forced_dances', 'game_over', 'islands', 'legal_moves', 'score']
    """
    scores = score(pos)
    result = {
        "forced_dances": {c: [dance_to_json(d) for d in _forced(pos, c).values()] for c in COLOURS},
        "score": scores,
        "islands": {c: [[list(decode(x)) for x in island] for island in _islands(pos, c)] for c in COLOURS},
    }
    if pos.to_move is not None:
        result["legal_moves"] = [move_to_json(m) for m in legal_moves(pos)]
    reason = end_reason(pos)
    result["game_over"] = reason is not None
    if reason is not None:
        result["outcome"] = {"reason": reason, "winner": winner(scores), "score": scores}
    return result


def move_from_json(obj, pos):
    """The legal move of ``pos`` that the MOVE object ``obj`` describes.

    Accepts the short forms (a dance by ``from`` + ``direction``, a cell move by ``at``).  Raises
    :class:`MoveFormatError` for an unknown shape and :class:`IllegalMoveError` when the move is not
    legal in ``pos`` or a detail it gives (target, drops, perimeter, new tiles) is wrong.

    >>> move_from_json({"type": "place", "at": [0, 1]}, Position.standard())
    Place((0, 1))
    """
    shape = move_shape_from_json(obj)
    mover = _require_mover(pos)
    if isinstance(shape, Dance):
        if pos.is_game_over() or pos.setup_tiles_left:
            raise IllegalMoveError(f"{shape.text}: no dance is possible now")
        dance = _forced(pos, mover).get((shape.origin, shape.direction))
        if dance is None:
            raise IllegalMoveError(f"{shape.text}: not a forced dance of {mover}")
        for field in ("target", "drops", "perimeter"):
            given = getattr(shape, field)
            if given is not None and given != getattr(dance, field):
                raise IllegalMoveError(f"{shape.text}: {field} is {getattr(dance, field)!r}, not {given!r}")
        return dance
    if isinstance(shape, Enlarge):
        move = _enlargements(pos).get(encode(*shape.at))
        if pos.is_game_over() or pos.setup_tiles_left or _forced(pos, mover) or move is None:
            raise IllegalMoveError(f"{shape.text}: not a legal enlargement")
        if shape.new_tiles is not None and shape.new_tiles != move.new_tiles:
            raise IllegalMoveError(f"{shape.text}: new_tiles are {list(move.new_tiles)}, not {list(shape.new_tiles)}")
        return move
    return shape

"""A deliberately plain second implementation of RULES.md 6-10 (tuple cells, no caching).

The property tests compare the engine with it move by move; it shares no code with rules/.
"""

STEPS = {"E": (1, 0), "SE": (0, 1), "SW": (-1, 1), "W": (-1, 0), "NW": (0, -1), "NE": (1, -1)}
OTHER = {"white": "black", "black": "white"}


def neighbours(cell):
    return [(cell[0] + dq, cell[1] + dr) for dq, dr in STEPS.values()]


def dances(tiles, stacks, colour):
    """Forced dances after perimeter priority: {(origin, direction): (target, drops, perimeter)}."""
    found = all_dances(tiles, stacks, colour)
    if any(p for _, _, p in found.values()):
        found = {key: value for key, value in found.items() if value[2]}
    return found


def all_dances(tiles, stacks, colour):
    """Every dance of RULES.md 7.1, before the perimeter priority."""
    found = {}
    for origin, discs in stacks.items():
        if origin not in tiles or discs[-1] != colour:
            continue
        height = len(discs)
        for name, (dq, dr) in STEPS.items():
            line = [(origin[0] + dq * k, origin[1] + dr * k) for k in range(1, height + 2)]
            target = None
            for cell in line[:height]:
                if cell not in tiles:
                    break
                if cell in stacks:
                    if stacks[cell][-1] != colour and len(stacks[cell]) <= height:
                        target = cell
                    break
            if target is None:
                continue
            on_tiles = 0
            while on_tiles < height and line[on_tiles] in tiles:
                on_tiles += 1
            if on_tiles < height and line[on_tiles] in stacks:
                continue
            perimeter = on_tiles < height
            drops = tuple(line[:on_tiles + (1 if perimeter else 0)])
            found[(origin, name)] = (target, drops, perimeter)
    return found


def tile_neighbours(tiles, cell):
    return sum(1 for n in neighbours(cell) if n in tiles)


def legal(state):
    """Legal moves as a set of ("dance", origin, direction) / ("enlarge", cell) / ... tuples."""
    tiles, stacks, to_move, reserves, supply, passes, setup = state
    if supply == 0 or passes >= 2:
        return set()
    if setup:
        sites = {n for c in tiles for n in neighbours(c)}
        return {("tile", c) for c in sites if c not in tiles and c not in stacks}
    forced = dances(tiles, stacks, to_move)
    if forced:
        return {("dance",) + key for key in forced}
    moves = {("enlarge", c) for c in stacks if c not in tiles and tile_neighbours(tiles, c) >= 2}
    if reserves[to_move]:
        moves |= {("place", c) for c in tiles if c not in stacks}
    return moves or {("pass",)}


def play(state, move):
    """The state after a legal move (same tuple layout as ``legal``)."""
    tiles, stacks, to_move, reserves, supply, passes, setup = state
    tiles, stacks, reserves = dict(tiles), dict(stacks), dict(reserves)
    kind = move[0]
    if kind == "dance":
        _, origin, direction = move
        _, drops, perimeter = dances(tiles, stacks, to_move)[(origin, direction)]
        discs = stacks.pop(origin)
        sown = len(drops) - 1 if perimeter else len(drops)
        for disc, cell in zip(discs, drops[:sown]):
            stacks[cell] = stacks.get(cell, ()) + (disc,)
        if perimeter:
            stacks[drops[-1]] = discs[sown:]
    elif kind == "place":
        stacks[move[1]] = (to_move,)
        reserves[to_move] -= 1
    elif kind == "tile":
        tiles[move[1]] = to_move
        supply -= 1
        setup -= 1
    elif kind == "enlarge":
        def convert(cell):
            nonlocal supply
            for disc in stacks.pop(cell):
                reserves[disc] += 1
            tiles[cell] = to_move
            supply -= 1
            for n in neighbours(cell):
                if supply > 0 and n in stacks and n not in tiles and tile_neighbours(tiles, n) >= 2:
                    convert(n)
        convert(move[1])
    passes = passes + 1 if kind == "pass" else 0
    return tiles, stacks, OTHER[to_move], reserves, supply, passes, setup


def state_of(pos):
    return (dict(pos.tiles), dict(pos.stacks), pos.to_move, dict(pos.reserves), pos.tiles_left,
            pos.passes, pos.setup_tiles_left)


def move_key(move):
    if move.kind == "dance":
        return ("dance", move.origin, move.direction)
    if move.kind == "pass":
        return ("pass",)
    return (move.kind, move.at)


def score(tiles, colour):
    own = {c for c, v in tiles.items() if v == colour}
    largest = 0
    seen = set()
    for start in own:
        if start in seen:
            continue
        group, todo = {start}, [start]
        while todo:
            for n in neighbours(todo.pop()):
                if n in own and n not in group:
                    group.add(n)
                    todo.append(n)
        seen |= group
        largest = max(largest, len(group))
    return len(own) + largest

"""Positions to photograph: the rule-text examples by hand, and snapshots of random plausible games
played with the `rules` package (no bpy needed)."""
from __future__ import annotations

import math

import numpy as np

W, B = "white", "black"
NEIGHBOURS = ((1, 0), (0, 1), (-1, 1), (-1, 0), (0, -1), (1, -1))


def position(tiles, stacks, to_move="white", total_tiles=39):
    """exxit-position/1 from {cell: colour} and {cell: discs}; reserves and supply follow."""
    on_table = {W: 0, B: 0}
    for discs in stacks.values():
        for d in discs:
            on_table[d] += 1
    return {
        "format": "exxit-position/1",
        "tiles": [{"q": q, "r": r, "colour": c} for (q, r), c in sorted(tiles.items())],
        "stacks": [{"q": q, "r": r, "discs": list(d)} for (q, r), d in sorted(stacks.items())],
        "to_move": to_move,
        "reserves": {W: max(0, 8 - on_table[W]), B: max(0, 8 - on_table[B])},
        "tiles_left": total_tiles - len(tiles),
        "total_tiles": total_tiles,
    }


def _alternate(cells):
    return {c: (W if i % 2 == 0 else B) for i, c in enumerate(cells)}


def hand_written():
    """The opening diamond and the rule-text examples of RULES.md section 15 (name -> (phase, position))."""
    diamond = {(0, 0): W, (1, 0): W, (0, 1): B, (1, -1): B}
    ex1 = [(q, 0) for q in range(-2, 4)] + [(0, -1), (0, -2), (0, -3)]
    ex4 = [(-1, 0), (0, 0), (1, 0), (2, 0), (0, 1), (0, 2), (1, -1), (2, -1)]
    rep = [(1, k) for k in range(-3, 2)]
    return {
        "opening-diamond": ("opening", position(diamond, {})),
        "opening-first-discs": ("opening", position(diamond, {(0, 0): [W], (1, -1): [B]}, W)),
        "example-1a": ("midgame", position(_alternate(ex1), {(0, 0): [W, W], (-1, 0): [B, B, B],
                                                             (0, -3): [B], (2, 0): [B, B]})),
        "example-2a": ("midgame", position(_alternate([(-1, 0), (0, 0), (1, 0)]),
                                           {(0, 0): [B, W], (1, 0): [B], (-1, 0): [W]})),
        "example-3": ("midgame", position(_alternate([(0, 0), (1, 0), (1, 1), (0, 1)]),
                                          {(0, 0): [W, W], (1, 0): [B], (2, 0): [B]})),
        "example-4": ("midgame", position(_alternate(ex4), {(0, 0): [W, W], (1, 0): [B], (-1, 0): [B],
                                                            (0, 1): [B, B], (2, -1): [W]})),
        "example-5a": ("midgame", position(_alternate([(0, 0), (1, 0), (0, 1)]),
                                           {(1, -1): [B], (-1, 0): [W]})),
        "example-6a": ("midgame", position({(0, 0): W, (1, 0): B}, {(1, -1): [W], (0, -1): [B]})),
        "example-repetition": ("midgame", position(_alternate(rep), {(1, -3): [W, B, W], (1, -2): [B],
                                                                     (0, -3): [B] * 6})),
        "blitz19-start": ("blitz", position(diamond, {}, W, total_tiles=19)),
    }


RESTACKED_HEIGHTS = (1, 2, 2, 3, 3, 3, 4, 4, 5)   # a regrouped stack's height is drawn from these
TOWER_HEIGHTS = (5, 6, 7, 8)


def restacked(rng, pos_json, sets=1, heights=RESTACKED_HEIGHTS):
    """The World of `pos_json` with the set's 16 discs regrouped into stacks of mostly 2 to 5 on
    random tiles and perimeter cells (as many as a small World has room for): a training photo rich
    in tall stacks, which random games seldom build (a set still has 8 discs of each colour).
    With `sets=2` the discs of two sets are regrouped: a crowded World, twice the stacks per
    photo, that no game reaches (training photos for the stack network only). With
    `heights=TOWER_HEIGHTS` they stand in towers of 5 to 8, as the rules' repetition example's
    6-stack: the stack networks never saw one (BENCHMARKS.md, session 79)."""
    tiles = {(t["q"], t["r"]): t["colour"] for t in pos_json["tiles"]}
    around = sorted({(q + dq, r + dr) for q, r in tiles for dq, dr in NEIGHBOURS} - set(tiles))
    cells = sorted(tiles) + around
    pool = [W] * 8 * sets + [B] * 8 * sets
    rng.shuffle(pool)
    stacks = {}
    order = rng.permutation(len(cells))
    for i in order:
        if not pool:
            break
        h = min(int(rng.choice(heights)), len(pool))
        if cells[i] in tiles or rng.random() < 0.3:     # off-World stacks stay a minority
            stacks[cells[i]] = [pool.pop() for _ in range(h)]
    return position(tiles, stacks, pos_json.get("to_move", W), pos_json.get("total_tiles", 39))


# ------------------------------------------------------------------ features of a position
def holes(pos_json):
    """Off-World cells enclosed by tiles (not reachable from far outside without crossing a tile)."""
    tiles = {(t["q"], t["r"]) for t in pos_json["tiles"]}
    if not tiles:
        return set()
    qs = [q for q, _ in tiles]
    rs = [r for _, r in tiles]
    lo_q, hi_q, lo_r, hi_r = min(qs) - 1, max(qs) + 1, min(rs) - 1, max(rs) + 1
    inside = lambda c: lo_q <= c[0] <= hi_q and lo_r <= c[1] <= hi_r
    start = (lo_q, lo_r)
    seen, todo = {start}, [start]
    while todo:
        q, r = todo.pop()
        for dq, dr in NEIGHBOURS:
            n = (q + dq, r + dr)
            if inside(n) and n not in tiles and n not in seen:
                seen.add(n)
                todo.append(n)
    return {(q, r) for q in range(lo_q, hi_q + 1) for r in range(lo_r, hi_r + 1)
            if (q, r) not in tiles and (q, r) not in seen}


BLACK_ON_BLACK = 3      # stacks with a black top on a black tile that the "black-on-black" want asks for


def black_on_black(pos_json) -> int:
    """Stacks whose black top stands on a black tile: the stacks vision misses most (BENCHMARKS.md,
    session 50: a black disc on a black tile, read as a bare tile)."""
    black_tiles = {(t["q"], t["r"]) for t in pos_json["tiles"] if t["colour"] == "black"}
    return sum(s["discs"][-1] == "black" and (s["q"], s["r"]) in black_tiles for s in pos_json["stacks"])


def wanted(want, pos_json) -> bool:
    """Whether a position has `want`: one of its features, or "black-on-black" (training only)."""
    if want == "black-on-black":
        return black_on_black(pos_json) >= BLACK_ON_BLACK
    return want in features(pos_json)


def features(pos_json):
    tiles = {(t["q"], t["r"]) for t in pos_json["tiles"]}
    out = []
    heights = [len(s["discs"]) for s in pos_json["stacks"]]
    if heights and max(heights) >= 4:
        out.append("tall-stack")
    if any(len(set(s["discs"])) > 1 for s in pos_json["stacks"]):
        out.append("mixed-stack")
    if any((s["q"], s["r"]) not in tiles for s in pos_json["stacks"]):
        out.append("perimeter-stack")
    if holes(pos_json):
        out.append("hole")
    if pos_json.get("tiles_left", 1) == 0:
        out.append("finished-world")
    return out


# ------------------------------------------------------------------ random plausible games
def _choose(rng, moves, pos, rules, temperature=1.5):
    """Forced dances: any of them. Building: softmax over the one-ply score gain, with a taste for
    enlarging and for placing discs where they will fight."""
    kinds = [m.kind for m in moves]
    if len(moves) == 1:
        return moves[0]
    me = pos.to_move
    other = B if me == W else W
    weights = []
    for m, kind in zip(moves, kinds):
        if kind == "dance":
            weights.append(1.0)
            continue
        after = rules.apply_move(pos, m)
        sc = rules.score(after)
        gain = sc[me] - sc[other]
        bonus = 3.0 if kind == "enlarge" else 0.0
        if kind == "place":
            # a disc next to stacks (own or opponent) makes the game lively
            at = tuple(rules.move_to_json(m)["at"])
            near = sum((at[0] + dq, at[1] + dr) in pos.stacks for dq, dr in NEIGHBOURS)
            bonus += 0.4 * near
        weights.append(math.exp((gain + bonus) / temperature))
    weights = np.array(weights)
    return moves[int(rng.choice(len(moves), p=weights / weights.sum()))]


def play_game(rng, total_tiles=39, max_moves=500):
    """A random plausible game from the standard diamond; returns the list of positions (as JSON)."""
    import rules
    pos = rules.Position.standard(total_tiles=total_tiles)
    history = [rules.position_to_json(pos)]
    seen = {pos: 1}
    for _ in range(max_moves):
        moves = rules.legal_moves(pos)
        if not moves or rules.analyze(pos).get("game_over"):
            break
        pos = rules.apply_move(pos, _choose(rng, moves, pos, rules))
        history.append(rules.position_to_json(pos))
        seen[pos] = seen.get(pos, 0) + 1
        if seen[pos] >= 3 or pos.tiles_left == 0 or getattr(pos, "passes", 0) >= 2:
            break
    return history


def game_snapshot(rng, phase, total_tiles=39, want=None, tries=None):
    """A position of the given phase from random games; `want` is a feature to look for.
    Finished games prefer an empty supply (most random games end earlier, by two passes)."""
    if tries is None:
        tries = 40 if phase in ("finished", "blitz-finished") or want in ("tall-stack", "black-on-black") else 12
    best = None
    for _ in range(tries):
        history = play_game(rng, total_tiles)
        if phase == "opening":
            return history[int(rng.integers(1, min(8, len(history))))]
        if phase in ("finished", "blitz-finished"):
            final = history[-1]
            if final["tiles_left"] == 0 or best is None:
                best = final
            if final["tiles_left"] == 0 and (want is None or wanted(want, final)):
                return final
            continue
        lo, hi = len(history) // 5, max(len(history) // 5 + 1, len(history) - 3)
        candidates = list(range(lo, hi))
        rng.shuffle(candidates)
        for i in candidates:
            cand = history[i]
            if want is None or wanted(want, cand):
                if len(cand["stacks"]) >= 3:
                    return cand
            if best is None and len(cand["stacks"]) >= 3:
                best = cand
    return best

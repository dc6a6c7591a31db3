"""Property tests: random games of every variant and random positions, checked move by move
against the plain reference implementation and the invariants of RULES.md section 14."""

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rules_reference as reference
import rules
from rules import Game, Position

VARIANTS = {
    "standard": Position.standard,
    "blitz-29": lambda: Position.standard(29),
    "blitz-19": lambda: Position.standard(19),
    "experienced": Position.experienced,
}


def world_connected(tiles):
    start = next(iter(tiles))
    seen, todo = {start}, [start]
    while todo:
        for n in reference.neighbours(todo.pop()):
            if n in tiles and n not in seen:
                seen.add(n)
                todo.append(n)
    return len(seen) == len(tiles)


def check_position(pos):
    """Invariants of a position reached in play, and agreement with the reference."""
    tiles, stacks = dict(pos.tiles), dict(pos.stacks)
    for colour in rules.COLOURS:
        on_table = sum(discs.count(colour) for discs in stacks.values())
        assert on_table + pos.reserves[colour] == 8
        forced = {(d.origin, d.direction): (d.target, d.drops, d.perimeter)
                  for d in rules.forced_dances(pos, colour)}
        assert forced == reference.dances(tiles, stacks, colour)
        assert rules.score(pos)[colour] == reference.score(tiles, colour)
        isl = rules.islands(pos, colour)
        assert rules.score(pos)[colour] == sum(map(len, isl)) + (len(isl[0]) if isl else 0)
    assert len(tiles) + pos.tiles_left == pos.total_tiles
    assert world_connected(tiles)
    assert all(c in tiles or any(n in tiles for n in reference.neighbours(c)) for c in stacks)
    assert rules.position_from_json(rules.position_to_json(pos)) == pos


def play_checked(start, seed, check_every=1):
    rnd = random.Random(seed)
    game = Game(start)
    state = reference.state_of(start)
    ply = 0
    while not game.is_over():
        pos = game.position
        moves = game.legal_moves()
        assert {reference.move_key(m) for m in moves} == reference.legal(state)
        every = reference.all_dances(state[0], state[1], pos.to_move)
        if every and not pos.setup_tiles_left:
            assert moves and all(m.kind == "dance" for m in moves)  # a dance whenever one exists
            if any(perimeter for _, _, perimeter in every.values()):
                assert all(m.perimeter for m in moves)              # perimeter dances first
        if ply % check_every == 0:
            check_position(pos)
        move = rnd.choice(moves)
        game.play(move)
        state = reference.play(state, reference.move_key(move))
        assert reference.state_of(game.position) == state
        ply += 1
    check_position(game.position)
    return game


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(variant=st.sampled_from(sorted(VARIANTS)), seed=st.integers(0, 2 ** 32 - 1))
def test_random_games_follow_the_reference(variant, seed):
    game = play_checked(VARIANTS[variant](), seed, check_every=3)
    outcome = game.outcome
    assert outcome.reason in ("supply_exhausted", "two_passes", "threefold_repetition")
    assert outcome.score == rules.score(game.position)


@st.composite
def positions(draw):
    """A random position that can occur: connected World (holes allowed), stacks on tiles and
    on cells touching it, at most 8 discs per colour, any side to move."""
    tiles = {(0, 0): draw(st.sampled_from(rules.COLOURS))}
    for _ in range(draw(st.integers(0, 24))):
        base = draw(st.sampled_from(sorted(tiles)))
        cell = draw(st.sampled_from(reference.neighbours(base)))
        tiles.setdefault(cell, draw(st.sampled_from(rules.COLOURS)))
    cells = sorted(set(tiles) | {n for c in tiles for n in reference.neighbours(c)})
    left = {"white": 8, "black": 8}
    stacks = {}
    for cell in draw(st.lists(st.sampled_from(cells), max_size=10, unique=True)):
        discs = tuple(draw(st.lists(st.sampled_from(rules.COLOURS), min_size=1, max_size=5)))
        if all(discs.count(c) <= left[c] for c in left):
            for c in discs:
                left[c] -= 1
            stacks[cell] = discs
    total = draw(st.integers(len(tiles), 39))
    return Position(tiles, stacks, to_move=draw(st.sampled_from(rules.COLOURS)), total_tiles=total)


@settings(max_examples=500, deadline=None)
@given(pos=positions())
def test_random_positions_agree_with_the_reference(pos):
    state = reference.state_of(pos)
    for colour in rules.COLOURS:
        forced = {(d.origin, d.direction): (d.target, d.drops, d.perimeter)
                  for d in rules.forced_dances(pos, colour)}
        assert forced == reference.dances(state[0], state[1], colour)
        every = {(d.origin, d.direction): (d.target, d.drops, d.perimeter) for d in rules.all_dances(pos, colour)}
        assert every == reference.all_dances(state[0], state[1], colour)
        assert rules.score(pos)[colour] == reference.score(state[0], colour)
    moves = rules.legal_moves(pos)
    assert {reference.move_key(m) for m in moves} == reference.legal(state)
    for move in moves:
        after = rules.apply_move(pos, move)
        assert reference.state_of(after) == reference.play(state, reference.move_key(move))
        if move.kind == "enlarge":
            assert after.tiles_left == pos.tiles_left - len(move.new_tiles)
            assert list(move.new_tiles) == [c for c in after.tiles if c not in pos.tiles] or \
                set(move.new_tiles) == set(after.tiles) - set(pos.tiles)


@settings(max_examples=30, deadline=None)
@given(pos=positions(), seed=st.integers(0, 2 ** 32 - 1))
def test_games_from_random_positions(pos, seed):
    rnd = random.Random(seed)
    game = Game(pos)
    state = reference.state_of(pos)
    for _ in range(200):
        if game.is_over():
            break
        move = rnd.choice(game.legal_moves())
        game.play(move)
        state = reference.play(state, reference.move_key(move))
        assert reference.state_of(game.position) == state


@settings(max_examples=200, deadline=None)
@given(pos=positions(), data=st.data())
def test_with_stack_changes_that_stack_only_and_checks_the_set(pos, data):
    cells = sorted(set(pos.tiles) | {n for c in pos.tiles for n in reference.neighbours(c)})
    cell = data.draw(st.sampled_from(cells))
    discs = tuple(data.draw(st.lists(st.sampled_from(rules.COLOURS), min_size=1, max_size=9)))
    others = [d for c, stack in pos.stacks.items() if c != cell for d in stack]
    if any(others.count(c) + discs.count(c) > 8 for c in rules.COLOURS):
        with pytest.raises(rules.PositionError, match="discs on the table"):
            pos.with_stack(cell, discs)
        return
    after = pos.with_stack(cell, discs)
    assert after.stacks == {**pos.stacks, cell: discs}
    assert (after.tiles, after.to_move, after.tiles_left, after.total_tiles, after.passes) == \
        (pos.tiles, pos.to_move, pos.tiles_left, pos.total_tiles, pos.passes)
    for colour in rules.COLOURS:     # every disc of the set is on the table or in its reserve
        assert after.reserves[colour] + others.count(colour) + discs.count(colour) == 8
    assert after.with_stack(cell, pos.stacks.get(cell, ())) == pos

"""The rule-text examples reconstructed in RULES.md section 15, and the rulings of section 12."""

import pytest

import rules
from rules import Dance, Enlarge, Pass, Place, apply_move, forced_dances, legal_moves

COLOUR = {"W": "white", "B": "black"}


def make(tiles, stacks=None, to_move="white", tile_colour="white", **fields):
    """A position from a list of tile cells and {cell: "WB..."} stacks (bottom to top)."""
    if isinstance(tiles, dict):
        tile_map = {cell: COLOUR[c] for cell, c in tiles.items()}
    else:
        tile_map = {cell: tile_colour for cell in tiles}
    stack_map = {cell: tuple(COLOUR[c] for c in discs) for cell, discs in (stacks or {}).items()}
    return rules.Position(tile_map, stack_map, to_move=to_move, **fields)


def discs(pos):
    """Stacks as {cell: "WB..."} for compact comparisons."""
    return {cell: "".join(d[0].upper() for d in s) for cell, s in pos.stacks.items()}


def dance_keys(dances):
    return {(d.origin, d.direction) for d in dances}


EXAMPLE_1A = make([(q, 0) for q in range(-2, 4)] + [(0, -1), (0, -2), (0, -3)],
                  {(0, 0): "WW", (-1, 0): "BBB", (0, -3): "B", (2, 0): "BB"})


def test_example_1a_only_the_reachable_not_taller_stack_is_danced_at():
    assert forced_dances(EXAMPLE_1A, "white") == [
        Dance((0, 0), "E", target=(2, 0), drops=((1, 0), (2, 0)), perimeter=False)]
    assert legal_moves(EXAMPLE_1A) == forced_dances(EXAMPLE_1A, "white")


def test_example_1b_black_answers_with_its_only_dance():
    after = apply_move(EXAMPLE_1A, Dance((0, 0), "E"))
    assert discs(after) == {(-1, 0): "BBB", (0, -3): "B", (1, 0): "W", (2, 0): "BBW"}
    assert after.to_move == "black"
    assert dance_keys(legal_moves(after)) == {((-1, 0), "E")}
    final = apply_move(after, Dance((-1, 0), "E"))
    assert discs(final) == {(0, -3): "B", (0, 0): "B", (1, 0): "WB", (2, 0): "BBWB"}


EXAMPLE_2A = make([(-1, 0), (0, 0), (1, 0)], {(0, 0): "BW", (1, 0): "B", (-1, 0): "W"})


def test_example_2a_perimeter_dance_puts_the_rest_off_the_world():
    (dance,) = forced_dances(EXAMPLE_2A, "white")
    assert (dance.origin, dance.direction, dance.target, dance.perimeter) == ((0, 0), "E", (1, 0), True)
    assert dance.drops == ((1, 0), (2, 0))
    after = apply_move(EXAMPLE_2A, dance)
    assert discs(after) == {(1, 0): "BB", (2, 0): "W", (-1, 0): "W"}


def test_example_2b_black_must_dance_west():
    after = apply_move(EXAMPLE_2A, Dance((0, 0), "E"))
    assert dance_keys(legal_moves(after)) == {((1, 0), "W")}
    final = apply_move(after, Dance((1, 0), "W"))
    assert discs(final) == {(0, 0): "B", (-1, 0): "WB", (2, 0): "W"}


def test_example_3_occupied_landing_cell_means_no_dance():
    pos = make([(0, 0), (1, 0), (1, 1), (0, 1)], {(0, 0): "WW", (1, 0): "B", (2, 0): "B"})
    assert forced_dances(pos, "white") == []
    assert set(legal_moves(pos)) == {Enlarge((2, 0)), Place((0, 1)), Place((1, 1))}


EXAMPLE_4 = make([(-1, 0), (0, 0), (1, 0), (2, 0), (0, 1), (0, 2), (1, -1), (2, -1)],
                 {(0, 0): "WW", (1, 0): "B", (-1, 0): "B", (0, 1): "BB", (2, -1): "W"})


def test_example_4_global_perimeter_priority():
    assert dance_keys(rules.all_dances(EXAMPLE_4, "white")) == {
        ((0, 0), "E"), ((0, 0), "W"), ((0, 0), "SE"), ((2, -1), "SW")}
    assert forced_dances(EXAMPLE_4, "white") == [
        Dance((0, 0), "W", target=(-1, 0), drops=((-1, 0), (-2, 0)), perimeter=True)]


def test_example_4_without_the_one_stack():
    stacks = {cell: "".join(d[0].upper() for d in s) for cell, s in EXAMPLE_4.stacks.items() if cell != (2, -1)}
    pos = make(list(EXAMPLE_4.tiles), stacks)
    assert len(rules.all_dances(pos, "white")) == 3
    assert dance_keys(forced_dances(pos, "white")) == {((0, 0), "W")}


def test_example_5_enlarge_the_stack_touching_two_tiles():
    pos = make([(0, 0), (1, 0), (0, 1)], {(1, -1): "B", (-1, 0): "W"})
    assert [m for m in legal_moves(pos) if isinstance(m, Enlarge)] == [Enlarge((1, -1))]
    after = apply_move(pos, Enlarge((1, -1)))
    assert after.tiles[(1, -1)] == "white"
    assert after.reserves == {"white": 7, "black": 8}
    assert discs(after) == {(-1, 0): "W"}
    assert after.tiles_left == pos.tiles_left - 1


def test_example_6_cascade_lays_two_tiles():
    pos = make([(0, 0), (1, 0)], {(1, -1): "W", (0, -1): "B"})
    (enlarge,) = [m for m in legal_moves(pos) if isinstance(m, Enlarge)]
    assert enlarge.at == (1, -1)
    assert enlarge.new_tiles == ((1, -1), (0, -1))
    after = apply_move(pos, enlarge)
    assert {cell: after.tiles[cell] for cell in ((1, -1), (0, -1))} == {(1, -1): "white", (0, -1): "white"}
    assert after.stacks == {} and after.reserves == {"white": 8, "black": 8}


def final_score_world():
    """39 tiles: a spine of runs B14 W6 B3 W5 B2 W3 B1 W2 plus three lone white tiles under B14."""
    tiles = {}
    q = 0
    for colour, length in (("B", 14), ("W", 6), ("B", 3), ("W", 5), ("B", 2), ("W", 3), ("B", 1), ("W", 2)):
        for _ in range(length):
            tiles[(q, 0)] = colour
            q += 1
    for q in (1, 4, 7):
        tiles[(q, 1)] = "W"
    return make(tiles, tiles_left=0)


def test_final_score_black_34_white_25():
    pos = final_score_world()
    assert len(pos.tiles) == 39 and pos.is_game_over()
    assert [len(i) for i in rules.islands(pos, "black")] == [14, 3, 2, 1]
    assert [len(i) for i in rules.islands(pos, "white")] == [6, 5, 3, 2, 1, 1, 1]
    assert rules.score(pos) == {"black": 34, "white": 25}
    analysis = rules.analyze(pos)
    assert analysis["game_over"] and analysis["legal_moves"] == []
    assert analysis["outcome"]["winner"] == "black"


def test_tied_largest_islands_only_one_doubles():
    pos = make({(0, 0): "W", (1, 0): "B", (2, 0): "W"})
    assert rules.score(pos) == {"white": 3, "black": 2}


def test_equal_scores_are_a_draw():
    pos = make({(0, 0): "W", (1, 0): "B"}, tiles_left=0, total_tiles=2)
    assert rules.analyze(pos)["outcome"] == {"reason": "supply_exhausted", "winner": None,
                                             "score": {"white": 2, "black": 2}}


def test_hole_blocks_before_the_target_and_catches_discs_after_it():
    ring = [(1, 0), (0, 1), (-1, 1), (-1, 0), (0, -1), (1, -1)]
    world = ring + [(2, 0), (3, 0), (-2, 0), (-3, 0), (-2, 1)]
    # (0,0) is a hole. White at (-2,0) with 3 discs: E meets (-1,0) black, then the hole (0,0).
    pos = make(world, {(-2, 0): "WWW", (-1, 0): "B"})
    (dance,) = forced_dances(pos, "white")
    assert (dance.direction, dance.perimeter, dance.drops) == ("E", True, ((-1, 0), (0, 0)))
    after = apply_move(pos, dance)
    assert discs(after)[(0, 0)] == "WW"
    # From (-1,0) eastwards the hole comes before the black stack on (1,0): no dance.
    pos = make(world, {(-1, 0): "WW", (1, 0): "B"})
    assert forced_dances(pos, "white") == []
    # A stack in the hole touching 6 tiles can be enlarged.
    pos = make(world, {(0, 0): "B"})
    assert Enlarge((0, 0)) in legal_moves(pos)


def test_own_stack_first_in_line_blocks():
    pos = make([(0, 0), (1, 0), (2, 0)], {(0, 0): "WW", (1, 0): "W", (2, 0): "B"})
    assert dance_keys(forced_dances(pos, "white")) == {((1, 0), "E")}


def test_discs_beyond_the_target_land_on_every_stack():
    pos = make([(q, 0) for q in range(5)], {(0, 0): "BWWW", (1, 0): "B", (2, 0): "BBBBB", (3, 0): "W"})
    (dance,) = forced_dances(pos, "white")
    assert dance.drops == ((1, 0), (2, 0), (3, 0), (4, 0)) and not dance.perimeter
    after = apply_move(pos, dance)
    assert discs(after) == {(1, 0): "BB", (2, 0): "BBBBBW", (3, 0): "WW", (4, 0): "W"}


def test_cascade_stops_when_the_supply_runs_out():
    tiles = [(0, 0), (1, 0), (2, 0), (3, 0)]
    stacks = {(1, -1): "B", (2, -1): "B", (3, -1): "W", (0, 1): "W"}
    pos = make(tiles, stacks, tiles_left=2, total_tiles=6)
    (enlarge,) = [m for m in legal_moves(pos) if m.at == (1, -1)]
    assert enlarge.new_tiles == ((1, -1), (2, -1))
    after = apply_move(pos, enlarge)
    assert after.tiles_left == 0 and after.is_game_over()
    assert discs(after) == {(3, -1): "W", (0, 1): "W"}
    assert legal_moves(after) == []


def test_cascade_is_depth_first_in_direction_order():
    # From (1,-1): the E neighbour (2,-1) is converted, then its own E neighbour (3,-1), before
    # the W neighbour (0,-1) of (1,-1) is examined; with a supply of 3 that last one is left.
    tiles = [(0, 0), (1, 0), (2, 0), (3, 0)]
    stacks = {(1, -1): "B", (2, -1): "B", (3, -1): "W", (0, -1): "W"}
    pos = make(tiles, stacks, tiles_left=3, total_tiles=7)
    move = [m for m in legal_moves(pos) if m.at == (1, -1)][0]
    assert move.new_tiles == ((1, -1), (2, -1), (3, -1))
    assert discs(apply_move(pos, move)) == {(0, -1): "W"}
    bigger = make(tiles, stacks, tiles_left=4, total_tiles=8)
    move = [m for m in legal_moves(bigger) if m.at == (1, -1)][0]
    assert move.new_tiles == ((1, -1), (2, -1), (3, -1), (0, -1))


def test_pass_only_when_nothing_else_and_two_passes_end_the_game():
    pos = make([(0, 0), (1, 0)], {(0, 0): "B", (1, 0): "B"}, reserves={"white": 0, "black": 0})
    assert legal_moves(pos) == [Pass()]
    with pytest.raises(rules.IllegalMoveError):
        apply_move(pos, Place((0, 0)))
    one = apply_move(pos, Pass())
    two = apply_move(one, Pass())
    assert (one.passes, two.passes, two.is_game_over()) == (1, 2, True)
    assert rules.analyze(two)["outcome"]["reason"] == "two_passes"
    with pytest.raises(rules.IllegalMoveError):
        apply_move(make([(0, 0), (1, 0)]), Pass())


def test_forced_dances_for_either_colour_whatever_the_side_to_move():
    pos = make([(0, 0), (1, 0)], {(0, 0): "W", (1, 0): "B"}, to_move=None)
    assert dance_keys(forced_dances(pos, "white")) == {((0, 0), "E")}
    assert dance_keys(forced_dances(pos, "black")) == {((1, 0), "W")}
    assert "legal_moves" not in rules.analyze(pos)


def test_dance_illegal_when_not_forced():
    with pytest.raises(rules.IllegalMoveError, match="not a forced dance"):
        apply_move(EXAMPLE_1A, Dance((0, 0), "W"))
    with pytest.raises(rules.IllegalMoveError, match="must dance"):
        apply_move(EXAMPLE_1A, Place((3, 0)))


def test_repetition_cycle_ends_the_game_at_the_third_occurrence():
    start = make([(1, -3), (1, -2), (1, -1), (1, 0), (1, 1)],
                 {(1, -3): "WBW", (1, -2): "B", (0, -3): "BBBBBB"})
    cycle = ["dance 1,-3 SE", "dance 1,-1 SE", "dance 1,-2 SE", "pass",
             "dance 1,0 NW", "dance 1,-2 NW", "dance 1,-1 NW", "pass"]
    game = rules.Game(start)
    for turn in range(16):
        assert game.outcome is None
        text = cycle[turn % 8]
        assert [m.text for m in game.legal_moves()] == [text], f"turn {turn}"
        game.play(rules.parse_move_text(text))
    assert game.position._same_placement(start)
    assert game.outcome.reason == "threefold_repetition"
    assert game.outcome.score == rules.score(start)
    assert game.legal_moves() == []
    analysis = game.analyze()
    assert analysis["game_over"] and analysis["outcome"]["reason"] == "threefold_repetition"
    with pytest.raises(rules.IllegalMoveError):
        game.play(Pass())


def test_remaining_discs_keep_their_order_off_the_world():
    pos = make([(0, 0), (1, 0)], {(0, 0): "BWBW", (1, 0): "B"})
    (dance,) = forced_dances(pos, "white")
    assert dance.drops == ((1, 0), (2, 0)) and dance.perimeter
    assert discs(apply_move(pos, dance)) == {(1, 0): "BB", (2, 0): "WBW"}


def test_off_world_stacks_never_dance_and_are_never_targets():
    # White off-World (1,-1) next to black tile stacks: it does not dance.
    pos = make([(0, 0), (1, 0)], {(1, -1): "W", (0, 0): "B", (1, 0): "B"})
    assert forced_dances(pos, "white") == []
    # A black off-World stack in line is not a target: the line ends there.
    pos = make([(0, 0), (1, 0)], {(0, 0): "WW", (2, 0): "B"})
    assert forced_dances(pos, "white") == []


def test_enlarging_a_mixed_stack_gives_each_disc_back_to_its_owner():
    pos = make([(0, 0), (1, 0)], {(1, -1): "WBB"}, to_move="black")
    after = apply_move(pos, Enlarge((1, -1)))
    assert after.reserves == {"white": 8, "black": 8}
    assert after.tiles[(1, -1)] == "black"


def test_taller_target_prevents_the_dance_and_equal_height_allows_it():
    base = [(q, 0) for q in range(4)]
    assert forced_dances(make(base, {(0, 0): "WW", (1, 0): "BBB"}), "white") == []
    assert dance_keys(forced_dances(make(base, {(0, 0): "WW", (1, 0): "BB"}), "white")) == {((0, 0), "E")}


def test_a_position_with_unread_discs_round_trips_through_its_json():
    pos = rules.position_from_json({
        "tiles": [{"q": 0, "r": 0, "colour": "white"}, {"q": 1, "r": 0, "colour": "black"}],
        "stacks": [{"q": 0, "r": 0, "discs": [None, None, "white"]}, {"q": 1, "r": 0, "discs": ["black"]}],
    })
    assert rules.position_from_json(rules.position_to_json(pos)) == pos

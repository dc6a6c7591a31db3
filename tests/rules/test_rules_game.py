"""Games, variants, notation, Boardspace records, JSON and unknown discs."""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rules
from rules import (Dance, Enlarge, Game, LayTile, Pass, Place, Position, apply_move, legal_moves,
                   parse_move_text)
from rules.sgf import cell_from_boardspace, cell_to_boardspace, game_from_sgf, game_to_sgf


def random_game(seed, start=None, resign_chance=0.0):
    rnd = random.Random(seed)
    game = Game(start or Position.standard())
    while not game.is_over():
        if rnd.random() < resign_chance:
            game.resign(rnd.choice(rules.COLOURS))
            break
        game.play(rnd.choice(game.legal_moves()))
    return game


VARIANT_STARTS = {
    "standard": Position.standard,
    "blitz-29": lambda: Position.standard(29),
    "blitz-19": lambda: Position.standard(19),
    "experienced": Position.experienced,
}


@pytest.mark.parametrize("total", [39, 29, 19])
def test_blitz_totals_include_the_setup_tiles(total):
    pos = Position.standard(total)
    assert (len(pos.tiles), pos.tiles_left, pos.total_tiles) == (4, total - 4, total)
    game = random_game(1, pos)
    assert len(game.position.tiles) + game.position.tiles_left == total


def test_experienced_setup_lays_four_tiles_alternately():
    pos = Position.experienced()
    assert dict(pos.tiles) == {(0, 0): "white", (0, 1): "black"}
    for colour, cell in (("white", (1, 0)), ("black", (-1, 1)), ("white", (1, -1)), ("black", (0, 2))):
        assert pos.to_move == colour
        assert all(isinstance(m, LayTile) for m in legal_moves(pos))
        with pytest.raises(rules.IllegalMoveError):
            apply_move(pos, Place((0, 0)))
        pos = apply_move(pos, LayTile(cell))
        assert pos.tiles[cell] == colour
    assert pos.setup_tiles_left == 0 and len(pos.tiles) == 6 and pos.tiles_left == 33
    assert pos.to_move == "white"
    assert {m.kind for m in legal_moves(pos)} == {"place"}
    with pytest.raises(rules.IllegalMoveError):
        apply_move(Position.experienced(), LayTile((5, 5)))
    with pytest.raises(rules.IllegalMoveError):
        apply_move(Position.standard(), LayTile((2, 0)))


def test_any_starting_position_can_be_played():
    start = Position({(0, 0): "black", (1, 0): "white", (2, 0): "black"}, to_move="black", total_tiles=20)
    game = random_game(3, start)
    assert game.outcome is not None
    assert len(game.position.tiles) + game.position.tiles_left == 20


def test_game_needs_the_side_to_move():
    with pytest.raises(rules.PositionError):
        Game(Position({(0, 0): "white"}))


def test_resignation_wins_for_the_other_side_whatever_the_score():
    game = Game.standard()
    game.resign("white")
    assert game.outcome.winner == "black" and game.outcome.reason == "resignation"
    assert game.legal_moves() == []
    with pytest.raises(rules.IllegalMoveError):
        game.play(Place((0, 0)))


def test_move_text_round_trips_for_every_kind():
    game = random_game(5, Position.experienced())
    moves = list(game.moves)
    assert {m.kind for m in moves} >= {"tile", "place", "dance"}
    for move in moves:
        assert parse_move_text(move.text) == move
    assert rules.parse_moves_text(rules.moves_to_text(moves)) == moves
    assert rules.parse_moves_text("\n".join(m.text for m in moves)) == moves


@pytest.mark.parametrize("text", ["", "dance 0,0", "dance 0,0 N", "place", "place a,b", "place 1,2,3",
                                  "pass 1", "enlarge 0;0", "resign"])
def test_bad_move_text_is_rejected(text):
    with pytest.raises(rules.MoveFormatError):
        parse_move_text(text)


def test_moves_are_values():
    assert Dance((0, 0), "E") == Dance((0, 0), "E", target=(1, 0), drops=((1, 0),), perimeter=False)
    assert len({Place((0, 0)), Place((0, 0)), LayTile((0, 0)), Enlarge((0, 0)), Pass(), Pass()}) == 4
    for move in (Dance((0, -1), "NW"), Place((2, 3)), Enlarge((1, -1), new_tiles=[(1, -1)]), Pass(), LayTile((0, 5))):
        assert eval(repr(move), vars(rules)) == move


@pytest.mark.parametrize("variant", sorted(VARIANT_STARTS))
def test_game_json_round_trip(variant):
    for seed in range(5):
        game = random_game(seed, VARIANT_STARTS[variant](), resign_chance=0.01)
        again = rules.game_from_json(rules.game_to_json(game))
        assert again.moves == game.moves and again.positions == game.positions
        assert again.outcome == game.outcome


@pytest.mark.parametrize("variant", sorted(VARIANT_STARTS))
def test_boardspace_record_round_trip(variant):
    for seed in range(8):
        game = random_game(seed, VARIANT_STARTS[variant](), resign_chance=0.005)
        again = game_from_sgf(game_to_sgf(game, "alice", "bob"))
        assert again.moves == game.moves and again.positions == game.positions
        assert again.outcome == game.outcome


def test_boardspace_coordinates_map_the_setup():
    assert [cell_to_boardspace(c) for c in [(0, 0), (1, 0), (0, 1), (1, -1)]] == [
        ("N", 14), ("M", 13), ("M", 14), ("N", 13)]
    for q in range(-20, 20):
        for r in range(-20, 20):
            assert cell_from_boardspace(*cell_to_boardspace((q, r))) == (q, r)
    far = Game(Position({(0, 0): "white", (0, -20): "white", **{(0, -r): "black" for r in range(1, 20)}},
                        {(0, -21): ("black",)}, to_move="white"))
    with pytest.raises(rules.RecordError):
        game_to_sgf(far)


def test_boardspace_record_with_ui_steps():
    record = """(;GM[28]VV[1]SU[exxit 2 1234 101]P0[id "ann"]P1[id "bob"]
    ; P0[0 Start P0]; P0[1 Pick W]; P0[2 Drop W]; P0[3 Dropb W N 14]; P0[4 Done]
    ; P1[5 Pick B]; P1[6 Dropb B M 13]; P1[7 Done]
    ; P0[8 Pickb N 14 W]; P0[9 Dropb W N 14]; P0[10 Move W N 14 0]; P0[11 Done]
    ; P1[12 Resign])"""
    game = game_from_sgf(record)
    assert game.moves == (Place((0, 0)), Place((1, 0)), Dance((0, 0), "E"))
    assert game.outcome.reason == "resignation" and game.outcome.winner == "white"


def test_boardspace_dance_by_pick_and_drop():
    record = """(;GM[28]SU[exxit];P0[Dropb W N 14];P0[Done];P1[Dropb B M 13];P1[Done]
    ;P0[Pickb N 14 W];P0[Dropb W M 13];P0[Done])"""
    assert game_from_sgf(record).moves[-1] == Dance((0, 0), "E")


@pytest.mark.parametrize("record", ["", "(;GM[1]SU[exxit])", "(;GM[28]SU[chess])", "(;GM[28]SU[exxit];P0[1 Fly N 14])",
                                    "(;GM[28]SU[exxit];P0[1 Move W N 14 9];P0[Done])", "(;GM[28]", "nonsense",
                                    "(;GM[28]SU[exxit];P0[Dropb W N x];P0[Done])"])
def test_bad_boardspace_records(record):
    with pytest.raises(rules.RecordError):
        game_from_sgf(record)


def test_illegal_boardspace_move_names_its_index():
    record = "(;GM[28]SU[exxit];P0[Dropb W N 14];P0[Done];P1[Dropb B N 14];P1[Done])"
    with pytest.raises(rules.IllegalMoveError) as caught:
        game_from_sgf(record)
    assert caught.value.index == 1


def test_non_boardspace_setups_cannot_be_exported():
    with pytest.raises(rules.RecordError):
        game_to_sgf(Game(Position({(0, 0): "white"}, to_move="white")))


def test_unknown_discs_analyse_but_cannot_move_as_tops():
    pos = Position({(q, 0): "white" for q in range(4)},
                   {(0, 0): (None, "white"), (1, 0): ("black",), (0, -1): ("black", None, "black")},
                   to_move="white")
    assert pos.reserves == {"white": 7, "black": 5}
    analysis = rules.analyze(pos)
    assert analysis["forced_dances"]["white"][0]["from"] == [0, 0]
    with pytest.raises(rules.UnknownDiscsError):
        apply_move(pos, Dance((0, 0), "E"))
    # An unknown disc may stay inside the off-World remainder of a perimeter dance.
    pos = Position({(0, 0): "white", (1, 0): "white"}, {(0, 0): ("white", None, "white"), (1, 0): ("black",)},
                   to_move="white")
    after = apply_move(pos, Dance((0, 0), "E"))
    assert after.stacks[(2, 0)] == (None, "white")
    # ... but cannot go back to a reserve.
    pos = Position({(0, 0): "white", (1, 0): "white"}, {(1, -1): (None, "black")}, to_move="white")
    with pytest.raises(rules.UnknownDiscsError):
        apply_move(pos, Enlarge((1, -1)))
    assert isinstance(rules.UnknownDiscsError("x"), rules.IllegalMoveError)


def test_position_json_round_trip_and_hash():
    game = random_game(11)
    for pos in game.positions[::7]:
        again = rules.position_from_json(rules.position_to_json(pos))
        assert again == pos and hash(again) == hash(pos)
        assert eval(repr(pos), vars(rules)) == pos


def test_position_is_immutable():
    pos = Position.standard()
    with pytest.raises(TypeError):
        pos.tiles[(5, 5)] = "white"
    with pytest.raises(TypeError):
        pos.stacks[(0, 0)] = ("white",)
    with pytest.raises(TypeError):
        pos.reserves["white"] = 3


def test_analysis_matches_formats_md():
    pos = rules.position_from_json({"tiles": [{"q": 0, "r": 0, "colour": "white"}, {"q": 1, "r": 0, "colour": "black"}],
                                    "stacks": [{"q": 0, "r": 0, "discs": ["white"]}, {"q": 1, "r": 0, "discs": ["black"]}],
                                    "to_move": "black"})
    analysis = rules.analyze(pos)
    assert analysis == {
        "forced_dances": {
            "white": [{"from": [0, 0], "direction": "E", "target": [1, 0], "drops": [[1, 0]], "perimeter": False}],
            "black": [{"from": [1, 0], "direction": "W", "target": [0, 0], "drops": [[0, 0]], "perimeter": False}],
        },
        "score": {"white": 2, "black": 2},
        "islands": {"white": [[[0, 0]]], "black": [[[1, 0]]]},
        "legal_moves": [{"type": "dance", "from": [1, 0], "direction": "W", "target": [0, 0], "drops": [[0, 0]],
                         "perimeter": False}],
        "game_over": False,
    }


def test_move_from_json_short_and_full_forms():
    pos = apply_move(apply_move(Position.standard(), Place((0, 0))), Place((1, -1)))
    # white (0,0) W vs black (1,-1) B: both forced to dance at each other
    short = rules.move_from_json({"type": "dance", "from": [0, 0], "direction": "NE"}, pos)
    assert short.target == (1, -1)
    assert rules.move_from_json(rules.move_to_json(short), pos) == short
    with pytest.raises(rules.IllegalMoveError):
        rules.move_from_json({"type": "dance", "from": [0, 0], "direction": "E"}, pos)
    with pytest.raises(rules.MoveFormatError):
        rules.move_from_json({"type": "dance", "from": [0, 0]}, pos)


def test_experienced_setup_is_recognised_from_plain_json():
    obj = rules.position_to_json(Position.experienced())
    del obj["setup_tiles_left"]
    assert rules.position_from_json(obj) == Position.experienced()
    game = rules.game_from_json({"setup": obj, "moves": [{"type": "tile", "at": [1, 0]},
                                                         {"type": "tile", "at": [-1, 1]}]})
    assert game.position.setup_tiles_left == 2
    # Four tiles and no disc: the standard start unless the JSON says otherwise.
    four = rules.position_to_json(game.position)
    assert four["setup_tiles_left"] == 2
    assert rules.position_from_json(four) == game.position
    del four["setup_tiles_left"]
    assert rules.position_from_json(four).setup_tiles_left == 0
    # A 2-tile World given explicitly as not in the set-up keeps that through JSON.
    plain = Position({(0, 0): "white", (0, 1): "black"}, to_move="white")
    assert rules.position_from_json(rules.position_to_json(plain)) == plain


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["(;", ")", ";", "GM[28]", "SU[exxit]", "SU[exxit-pro]", "P0[", "P1[", "]", "1 ",
                                 "Dropb ", "Move ", "Exchange ", "Pickb ", "Pass", "Done", "Resign", "W ", "B ", "WT ",
                                 "N ", "M ", "14 ", "13 ", "12 ", "3", "\\]", "x"]), max_size=30))
def test_any_record_text_gives_a_game_or_a_clear_error(tokens):
    text = "".join(tokens)
    try:
        game_from_sgf(text)
    except (rules.RecordError, rules.IllegalMoveError) as error:
        assert str(error) and "\n" not in str(error)


def test_positions_pickle_and_copy():
    import copy
    import pickle
    pos = random_game(2).positions[40]
    pos.tiles, pos.stacks  # the cached read-only views must not get in the way
    assert pickle.loads(pickle.dumps(pos)) == pos
    assert copy.deepcopy(pos) == pos


def test_boardspace_direction_numbers_equal_ours():
    # RULES.md 13: Boardspace's (column, row) steps for direction numbers 0..5.
    steps = [(-1, -1), (-1, 0), (0, 1), (1, 1), (1, 0), (0, -1)]
    for number, (dc, drow) in enumerate(steps):
        column, row = cell_to_boardspace((2, -3))
        moved = cell_from_boardspace(chr(ord(column) + dc), row + drow)
        assert moved == (2 + rules.STEPS[number][0], -3 + rules.STEPS[number][1])

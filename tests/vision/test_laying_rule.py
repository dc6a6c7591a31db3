"""Every tile a game lays touches two others (RULES.md §8.1): a tile read touching fewer is read
again where the tile network is unsure of it, and the reading says so."""
import json
from pathlib import Path

import numpy as np

import vision
from vision.hexgrid import neighbours, plane_to_cell
from vision.tiles import _laying_rule

SAMPLES = Path(__file__).resolve().parents[2] / "sample_images"
DIAMOND = [(0, 0), (1, 0), (0, 1), (1, -1)]


def _mended(chances: dict, keep=()) -> set:
    """The cells _laying_rule reads the other way, given each cell's chance of a tile."""
    cells = sorted(chances)
    p = np.array([chances[c] for c in cells])
    return {cells[i] for i in _laying_rule(cells, p > 0.5, p, {cells.index(c) for c in keep})}


def _around(tiles: dict, p_bare=0.01) -> dict:
    """`tiles` {cell: chance} with every cell beside them bare at p_bare."""
    return {**{n: p_bare for c in tiles for n in neighbours(c)}, **tiles}


def test_a_doubtful_tile_touching_one_tile_is_dropped():
    chances = _around({**{c: 0.99 for c in DIAMOND}, (2, -2): 0.8})     # beside (1,-1) only
    assert _mended(chances) == {(2, -2)}


def test_a_tile_touching_nothing_is_dropped():
    chances = _around({**{c: 0.99 for c in DIAMOND}, (3, -1): 0.85})
    assert _mended(chances) == {(3, -1)}


def test_a_doubtful_cell_that_gives_a_lone_tile_its_second_neighbour_is_added():
    # (2,-2) is sure but touches only (1,-1); (2,-1), beside it and the diamond, is missed at 0.35
    chances = _around({**{c: 0.99 for c in DIAMOND}, (2, -2): 0.99, (2, -1): 0.35})
    assert _mended(chances) == {(2, -1)}


def test_tiles_read_sure_keep_a_rule_text_diagram_that_breaks_the_rule():
    line = {(q, 0): 0.99 for q in range(-2, 4)}                        # RULES.md §15, example 1-a's arm
    assert _mended(_around(line)) == set()


def test_a_hole_is_not_filled():
    ring = {n: 0.99 for n in neighbours((0, 0))}
    assert _mended(_around({**ring, (0, 0): 0.3})) == set()


def test_a_tile_added_to_complete_the_diamond_is_not_dropped():
    chances = _around({(0, 0): 0.99, (1, 0): 0.99, (0, 1): 0.99, (1, -1): 0.1})
    chances[(1, -1)] = 0.6                      # read as a tile only to give black its two
    assert _mended(chances, keep=[(1, -1)]) == set()


def _read(name: str):
    truth = json.loads((SAMPLES / f"{name}.json").read_text())
    return truth, vision.analyze_photo(SAMPLES / f"{name}.jpg", truth["meta"]["edition"])


def _true_tiles(truth, reading) -> dict:
    """The truth's tiles on the reading's lattice (each cell's pixel in the photo)."""
    geo = reading.geometry
    colour = {(t["q"], t["r"]): t["colour"] for t in truth["position"]["tiles"]}
    return {plane_to_cell(*geo.work_to_plane(np.array([c["pixel"]]) * geo.scale)[0]): colour[(c["q"], c["r"])]
            for c in truth["pixels"]["cells"] if (c["q"], c["r"]) in colour}


def test_a_phantom_tile_beside_an_opening_is_dropped_and_named():
    """s066: the table's pattern two cells from the opening diamond reads as a tile at 0.84 of a
    chance; touching no tile, it is dropped, and the warning names it for the user to check."""
    truth, reading = _read("s066-opening-redblack-tilt0_15")
    assert reading.tiles.tiles == _true_tiles(truth, reading)
    laid = [w for w in reading.warnings if w["code"] == "laid-beside-two"]
    assert len(laid) == 1 and len(laid[0]["cells"]) == 1
    assert tuple(laid[0]["cells"][0]) not in reading.tile_colours
    assert not any(w["code"] == "world-disconnected" for w in reading.warnings)


def test_a_rule_text_diagram_keeps_its_lines_of_tiles():
    """s003 photographs example 1-a of the rule texts, whose arms end in tiles touching one other:
    read sure, they stay."""
    truth, reading = _read("s003-midgame-redblack-tilt35_60")
    assert reading.tiles.tiles == _true_tiles(truth, reading)
    assert not any(w["code"] == "laid-beside-two" for w in reading.warnings)

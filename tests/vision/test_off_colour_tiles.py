"""A cell read as a tile whose colour is neither tile colour (a patch of light, a sheet of paper) is read
as no tile, where the set's colour hints say which two colours its tiles are (BENCHMARKS.md, session 77)."""
import json
from pathlib import Path

import numpy as np

import rules
import vision
from colour_models import colour_model
from vision.tiles import _off_colour_tiles

PHOTOS = Path(__file__).resolve().parents[1] / "data" / "photos"


def _off_colour(edition: str, medians: list) -> list:
    colours = colour_model({role: medians[0] for role in ("white", "black")}, edition=edition)
    return _off_colour_tiles(colours, np.array(medians, float), np.ones(len(medians), bool))


def test_a_pale_patch_among_red_and_black_tiles_is_of_neither_colour():
    # the tile colours of fresh render s010 of seed 111 (below), read at the tiles' sides: two pale cells,
    # two red tiles in dim light, two black ones
    medians = [[69, 6, 9], [8, 0, 1], [69, 5, 12], [23, 32, 16], [23, 31, 14], [8, 0, 1]]
    assert _off_colour("jactalea-red-black", medians) == [0, 2]


def test_silver_tiles_dark_and_bright_are_all_tiles():
    # the tile colours of fresh render s006 of seed 111: silver shows from nearly black (a reflection of the
    # dark room) to mid-grey; the red tiles are dark. None is read away
    medians = [[9, 17, 9], [28, 0, 9], [30, 0, 6], [20, 16, 11], [40, 0, 10], [12, 20, 11], [42, 1, 9],
               [17, 22, 15], [4, 0, 1], [43, 1, 9]]
    assert _off_colour("silver-red", medians) == []


def test_white_and_black_tiles_are_never_read_away():
    # the black-and-white set's colours differ in lightness only, so its hints cannot say which of three
    # colours is not a tile colour
    medians = [[69, 6, 9], [8, 0, 1], [69, 5, 12], [40, 30, 16], [40, 31, 14], [8, 0, 1]]
    assert _off_colour("black-white", medians) == []


def test_a_pale_patch_on_wood_is_not_read_as_two_white_tiles():
    # fresh render s010 of seed 111: an opening of the red and black set on a wooden table, beside a pale
    # rectangle of light. The first colour model took the patch for the light tile colour, so two cells of it
    # were read as white tiles (chances 0.96 and 0.99) and the red tiles as black: six tiles, a confident
    # wrong answer. The patch is of neither tile colour; the opening diamond is read, White's two tiles touching
    photo = PHOTOS / "pale-patch-on-wood-s010.jpg"
    truth = json.loads(photo.with_suffix(".json").read_text())
    reading = vision.analyze_photo(str(photo), profile=truth["profile"]["name"])
    tiles = reading.tile_colours
    white = [c for c, colour in tiles.items() if colour == "white"]
    black = [c for c, colour in tiles.items() if colour == "black"]
    assert len(white) == len(black) == 2
    assert white[1] in rules.neighbours(white[0]) and black[1] not in rules.neighbours(black[0])

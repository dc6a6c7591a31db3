"""Every game starts from the opening diamond (RULES.md §4): a reading of at most four tiles that
lacks a colour's two is read again as that diamond where the reads it overrules are doubtful (the
photos that show it: the dev renders in BENCHMARKS.md, session 33)."""
import numpy as np

from colour_models import colour_model
from vision.colours import ColourModel
from vision.hexgrid import neighbours
from vision.tiles import _opening_diamond

WHITE, BLACK, TABLE = (80.0, 0.0, 5.0), (10.0, 0.0, 0.0), (45.0, 10.0, 20.0)


def _colours() -> ColourModel:
    return colour_model({"white": WHITE, "black": BLACK}, [TABLE])


def _read_again(read: dict, faint=None, stacked=()) -> dict | None:
    """What _opening_diamond reads again, given the tiles read {cell: (chance of a tile, colour)},
    and cells read as no tile {cell: (chance, Lab)} (`faint`); every other cell nearby is bare table."""
    faint = faint or {}
    near = {n for c in read for n in neighbours(c)} | {n for c in read for m in neighbours(c) for n in neighbours(m)}
    cells = sorted(near | set(read) | set(faint))
    p = np.array([read[c][0] if c in read else faint[c][0] if c in faint else 0.001 for c in cells])
    medians = np.array([read[c][1] if c in read else faint[c][1] if c in faint else TABLE for c in cells], float)
    colour_of = {WHITE: "white", BLACK: "black"}
    roles = {i: (colour_of.get(tuple(medians[i]), "black"), 1.0) for i, c in enumerate(cells) if c in read}
    changes = _opening_diamond(_colours(), cells, p, medians, roles, {cells.index(c) for c in stacked})
    return None if changes is None else {cells[i]: role for i, role in changes.items()}


def test_a_faint_fourth_tile_completes_the_diamond_in_the_colour_of_the_ends():
    # the two white tiles touch: the black one is an end, and so is the faint dark cell beside both
    read = {(0, 0): (0.96, WHITE), (0, 1): (0.97, WHITE), (1, 0): (1.0, BLACK)}
    assert _read_again(read, faint={(-1, 1): (0.016, (20.0, 1.0, 5.0))}) == {(-1, 1): "black"}


def test_a_middle_tile_under_a_stack_read_in_the_ends_colour_is_read_again():
    # four tiles in a diamond, three of them black: the middle pair shares one colour, the ends the
    # other, so the doubtful middle tile (its colour halfway) is white
    halfway = (48.0, 0.0, 2.5)
    read = {(0, 0): (0.996, halfway), (1, 0): (1.0, WHITE), (0, 1): (1.0, BLACK), (1, -1): (1.0, BLACK)}
    assert _read_again(read, stacked=[(0, 0)]) == {(0, 0): "white"}


def test_a_glare_lit_black_end_and_a_missed_white_middle_are_read_again():
    # dev render s098 of seed 44: one tile of each colour read, a black tile's glare making it
    # light grey, and the last white tile faint on a light cloth
    read = {(0, -1): (1.0, BLACK), (0, 0): (0.98, WHITE)}
    faint = {(1, 0): (0.097, (40.0, 0.0, 3.0)), (1, -1): (0.018, (70.0, 0.0, 5.0))}
    assert _read_again(read, faint) == {(1, 0): "black", (1, -1): "white"}


def test_two_tiles_of_one_colour_become_the_diamond_however_sure_the_networks_are_of_the_rest():
    # fresh 105 s044: black tiles on a cloth of their colour, read as table at chances of 0.003 and
    # less; no game or rule text has a World without a tile of each colour
    read = {(0, 0): (0.99, WHITE), (1, 0): (0.99, WHITE)}
    assert _read_again(read) == {(0, 1): "black", (1, -1): "black"}
    # a single tile could be any of a diamond's four: nothing is made up around it
    assert _read_again({(0, 0): (0.99, WHITE)}) is None


def test_a_rule_text_diagram_of_three_tiles_in_a_line_is_kept():
    read = {(-1, 0): (0.99, WHITE), (0, 0): (0.99, BLACK), (1, 0): (0.99, WHITE)}
    assert _read_again(read) is None


def test_a_reading_with_both_colours_or_more_tiles_is_no_opening_to_mend():
    diamond = {(0, 0): (0.99, WHITE), (1, 0): (0.99, WHITE), (0, 1): (0.99, BLACK), (1, -1): (0.99, BLACK)}
    assert _read_again(diamond) is None
    five = {**diamond, (1, 0): (0.99, BLACK), (2, -1): (0.99, BLACK)}
    assert _read_again(five) is None

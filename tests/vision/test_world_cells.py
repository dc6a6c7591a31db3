"""Which group of tiles read is the World: the largest that holds the opening diamond's two tiles of
each colour (every World does); groups away from it, of one colour, or too small to be laid as a
World's tiles are, are ignored (the supply, spare tiles, or a cloth's light checks read as tiles:
BENCHMARKS.md, sessions 42, 45 and 55)."""
import json
from pathlib import Path

import numpy as np
import pytest

import vision
from synthetic import Scene, midgame, render
from vision.hexgrid import cell_to_plane
from vision.pipeline import WORLD_TILES_MAX, _kept_world, _world_cells
from vision.tiles import CellRead, TileReading

PHOTOS = Path(__file__).resolve().parent.parent / "data" / "photos"

DIAMOND = {(0, 0): "white", (1, 0): "white", (0, 1): "black", (1, -1): "black"}


def _shifted(tiles: dict, dq: int, dr: int) -> dict:
    return {(q + dq, r + dr): colour for (q, r), colour in tiles.items()}


def test_the_largest_group_is_the_world_and_far_groups_are_ignored():
    supply = {(9, 0): "white"}
    world, ignored = _world_cells({**DIAMOND, **supply})
    assert world == set(DIAMOND) and ignored == set(supply)


def test_a_larger_group_of_one_colour_loses_to_the_diamond():
    checks = {(q, r): "white" for q in range(8, 12) for r in range(-2, 1)}     # 12 light checks read as tiles
    world, ignored = _world_cells({**DIAMOND, **checks})
    assert world == set(DIAMOND) and ignored == set(checks)


def test_a_group_within_one_empty_cell_joins_the_world():
    stray = {(3, -1): "white", (4, -1): "black", (3, 0): "white"}   # one empty cell, (2, -1), from (1, -1)
    world, ignored = _world_cells({**DIAMOND, **stray})
    assert world == set(DIAMOND) | set(stray) and not ignored


def test_a_group_of_one_colour_beside_the_world_is_ignored():
    """A leaning pile of spare tiles seen from the side reads as a few cells of its top tiles'
    colour (dev renders seed 44 s052: six black supply tiles beside the opening diamond)."""
    pile = {(3, -1): "black", (4, -1): "black", (3, 0): "black", (4, 0): "black"}
    world, ignored = _world_cells({**DIAMOND, **pile})
    assert world == set(DIAMOND) and ignored == set(pile)


def test_one_or_two_tiles_beside_the_world_are_ignored():
    """No tile of such a group can touch two others, as every laid tile does: a spare tile, or a mug
    or pencil beside the World read as one (dev renders seed 44 s052, seed 69 s129 and s230)."""
    for stray in ({(3, -1): "white"}, {(3, -1): "white", (4, -1): "black"}):
        world, ignored = _world_cells({**DIAMOND, **stray})
        assert world == set(DIAMOND) and ignored == set(stray)


def test_without_a_whole_diamond_anywhere_the_largest_group_stays():
    one_colour = {c: "white" for c in DIAMOND}
    small = _shifted({(0, 0): "black", (1, 0): "black"}, 10, 0)
    world, ignored = _world_cells({**one_colour, **small})
    assert world == set(one_colour) and ignored == set(small)


def test_a_lone_tile_beside_the_world_is_named_and_located_for_the_page():
    # whoever reads `vision analyze`'s output can find on the photo the tile it set aside: the
    # image block gives the pixel of every cell a warning names
    tiles, stacks = midgame()
    lone = (5, -2)                                          # an empty cell, (4, -1) or (4, -2), from (3, -1)
    scene = Scene(tiles={**tiles, lone: "white"}, stacks=stacks, tilt_deg=30)
    img, cam = render(scene)
    obj = vision.analyze_photo(img).to_json()
    ignored = next(w for w in obj["warnings"] if w["code"] == "ignored-tiles")
    assert len(ignored["cells"]) == 1 and len(obj["tiles"]) == len(tiles)
    pixels = {(c["q"], c["r"]): (c["x"], c["y"]) for c in obj["image"]["cells"]}
    assert tuple(ignored["cells"][0]) in pixels
    pixel = pixels[tuple(ignored["cells"][0])]
    x, y = np.array(cell_to_plane(lone)) * scene.pitch_mm
    assert np.hypot(*(np.array(pixel) - cam.project([[x, y, -scene.tile_thick]])[0])) < 10   # tiles ~100 px wide


def _reading(cells) -> TileReading:
    return TileReading(cells={c: CellRead(c, "black" if (c[0] + c[1]) % 2 else "white", 0.9, (0.0, 0.0, 1.0), 1.0)
                              for c in cells})


def test_a_world_of_a_few_tiles_over_a_set_is_kept_to_the_set_and_one_of_far_more_is_the_table():
    rows = lambda n: [(q, r) for r in range(n) for q in range(8)]
    world, _ = _kept_world(_reading(rows(6)[:42]))
    assert len(world) == 39
    assert len(rows(8)) > WORLD_TILES_MAX
    with pytest.raises(vision.NoWorldFoundError, match="the table itself reads as tiles"):
        _kept_world(_reading(rows(8)))


def test_a_single_tile_is_no_world_and_two_are_a_rule_texts_diagram():
    """Every game's World holds the opening diamond's four tiles and the rules' smallest diagram
    two: a reading left with one tile read a pile of spare tiles, or a tile beside the table, in a
    photo that shows no World (3 of the 9 Worlds read on 636 strips of photos beside their World;
    BENCHMARKS.md, session 83)."""
    with pytest.raises(vision.NoWorldFoundError, match="a single tile was read"):
        _kept_world(_reading([(0, 0)]))
    with pytest.raises(vision.NoWorldFoundError, match="a single tile was read"):
        _kept_world(_reading([(0, 0), (5, 0)]))          # the World is one tile, the other set aside
    world, _ = _kept_world(_reading([(0, 0), (1, 0)]))
    assert world == {(0, 0), (1, 0)}


def test_a_desk_as_dark_as_the_black_tiles_is_no_world_rather_than_a_set_of_its_cells():
    """The rules' repetition example (fresh render s009 of seed 126: five tiles in a line and a 6-stack) on a
    desk as dark as the black-and-white set's black tiles, the white tiles in the low sun: the only lattice
    found read 74 tiles, most of them the desk, and 35 of the least sure, a white tile among them, were
    dropped to keep to the 39 tiles a set has. Such a reading is no World."""
    photo = PHOTOS / "repetition-example-on-a-dark-desk-s009.jpg"
    truth = json.loads(photo.with_suffix(".json").read_text())
    with pytest.raises(vision.NoWorldFoundError, match="the table itself reads as tiles"):
        vision.analyze_photo(str(photo), profile=truth["profile"]["name"])

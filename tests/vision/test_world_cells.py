"""Which group of tiles read is the World: the largest that holds the opening diamond's two tiles of
each colour (every World does); groups away from it, of one colour, or too small to be laid as a
World's tiles are, are ignored (the supply, spare tiles, or a cloth's light checks read as tiles:
BENCHMARKS.md, sessions 42, 45 and 55)."""
import numpy as np

import vision
from synthetic import Scene, midgame, render
from vision.hexgrid import cell_to_plane
from vision.pipeline import _world_cells

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

"""A second photo of the same table, from another side, read together with the first
(vision/second_photo.py), on Blender renders: sample_images/second-photos/NAME.jpg shows the scene
of sample_images/NAME.jpg from another side at 35-60° (tools/render/plan.py --second-views), and
sample_images/third-photos/NAME.jpg from a third side (--third-views)."""
import json
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import cv2
import numpy as np
import pytest

import vision
from vision.hexgrid import plane_to_cell
from vision.second_photo import (HEIGHT_PRIOR, DifferentWorldError, combined_chances, place_second, rotate,
                                 settle_tiles)
from vision.stacks import StackRead, StackReading
from vision.tiles import CONFIDENT as TILE_CONFIDENT
from vision.tiles import CellRead, TileReading

SAMPLES = Path(__file__).resolve().parents[2] / "sample_images"
FROM_ABOVE = "s018-finished-redblack-tilt0_15"       # four of its ten stacks read a disc off alone


def _true_discs(reading, name) -> dict:
    """{lattice cell of the reading: discs, bottom to top} of the sample's stacks."""
    truth = json.loads((SAMPLES / f"{name}.json").read_text())
    geo = reading.geometry
    to_ours = {(c["q"], c["r"]): plane_to_cell(*geo.work_to_plane(np.array([c["pixel"]]) * geo.scale)[0])
               for c in truth["pixels"]["cells"]}
    return {to_ours[(s["q"], s["r"])]: s["discs"] for s in truth["position"]["stacks"]}


def _true_heights(reading, name) -> dict:
    """{lattice cell of the reading: height} of the sample's stacks."""
    return {cell: len(discs) for cell, discs in _true_discs(reading, name).items()}


def _heights_right(reading, name) -> int:
    """How many of the sample's stacks the reading has at their true height."""
    stacks = reading.stacks.stacks
    return sum(1 for cell, height in _true_heights(reading, name).items()
               if (st := stacks.get(cell)) is not None and st.height == height)


@pytest.fixture(scope="module")
def first():
    return vision.analyze_photo(SAMPLES / f"{FROM_ABOVE}.jpg")


@pytest.fixture(scope="module")
def second():
    return vision.analyze_photo(SAMPLES / "second-photos" / f"{FROM_ABOVE}.jpg")


@pytest.fixture(scope="module")
def both(first):
    return vision.add_second_photo(first, SAMPLES / "second-photos" / f"{FROM_ABOVE}.jpg")


def test_a_second_photo_from_the_side_mends_heights_a_photo_from_above_misreads(first, both):
    alone, together = _heights_right(first, FROM_ABOVE), _heights_right(both, FROM_ABOVE)
    stacks = len(json.loads((SAMPLES / f"{FROM_ABOVE}.json").read_text())["position"]["stacks"])
    assert alone < stacks
    assert together - alone > (stacks - alone) / 2      # most of the heights misread alone are mended


def test_a_third_photo_from_a_third_side_reads_every_height():
    """sample_images/third-photos/NAME.jpg shows the table of NAME.jpg from a third side: on s015,
    from nearly straight above, two photos still read a stack a disc off; three read every height."""
    name = "s015-midgame-blackwhite-tilt0_15"
    one = vision.analyze_photo(SAMPLES / f"{name}.jpg")
    two = vision.add_second_photo(one, SAMPLES / "second-photos" / f"{name}.jpg")
    three = vision.add_second_photo(two, SAMPLES / "third-photos" / f"{name}.jpg", which="the third photo")
    stacks = len(json.loads((SAMPLES / f"{name}.json").read_text())["position"]["stacks"])
    assert _heights_right(one, name) < _heights_right(two, name) < _heights_right(three, name) == stacks
    assert "second-photo-unused" not in {w["code"] for w in three.warnings}
    assert three.timing["second_photo_s"] > two.timing["second_photo_s"]


def test_the_first_photo_stays_the_reference(first, both):
    assert both.tiles.tiles == first.tiles.tiles
    assert set(both.stacks.stacks) == set(first.stacks.stacks)
    assert both.geometry is first.geometry
    assert {w["code"] for w in both.warnings}.isdisjoint({"view-from-above", "second-photo-unused"})
    assert both.timing["second_photo_s"] > 0
    json.dumps(both.to_json())


def test_fewer_stacks_are_left_unsure(first, both):
    unsure = lambda reading: sum(st.confidence < vision.STACK_CONFIDENT for st in reading.stacks.stacks.values())
    assert unsure(both) < unsure(first)


def test_a_top_the_first_photo_doubts_takes_the_second_photos_surer_read(first, second):
    """A black top under a ceiling light's glare reads white, unsure, from above; the second photo,
    from the side, reads it surely: the reading takes its colour."""
    for cell, st in first.stacks.stacks.items():
        wrong = "black" if st.top == "white" else "white"
        doubted = replace(st, top=wrong, discs=[*st.discs[:-1], wrong], top_confidence=0.3, confidence=0.3)
        reading = replace(first, stacks=replace(first.stacks, stacks={**first.stacks.stacks, cell: doubted}))
        mended = vision.combine_readings(reading, second).stacks.stacks[cell]
        assert (mended.top, mended.discs[-1]) == (st.top, st.top)
        assert mended.top_confidence > 0.3


def test_a_second_photo_from_the_side_reads_the_discs_under_the_tops(first, both):
    """From above the discs under a top hardly show, and are left unread; the second photo's side view
    reads them."""
    truth = _true_discs(first, FROM_ABOVE)
    discs_right = lambda reading: sum(reading.stacks.stacks[c].discs == d for c, d in truth.items()
                                      if c in reading.stacks.stacks)
    tall = sum(len(d) > 1 for d in truth.values())
    assert discs_right(both) >= discs_right(first) + tall // 2


def _missing(reading, cell, chance_of_none):
    """`reading` as if its photo had not shown the stack on `cell`, its networks giving it
    `chance_of_none` of holding no stack."""
    stacks = {c: st for c, st in reading.stacks.stacks.items() if c != cell}
    key = (cell, cell in reading.tiles.tiles)
    rest = np.asarray(reading.stacks.chances[key][1:])
    chances = {**reading.stacks.chances, key: np.array([chance_of_none, *(1 - chance_of_none) * rest / rest.sum()])}
    return replace(reading, stacks=replace(reading.stacks, stacks=stacks, chances=chances))


def test_a_stack_only_the_second_photo_shows_is_added_and_flagged(first, second):
    """A stack the first photo misses (black on black, hidden) but the second reads is added as
    the second photo reads it, where the first was not sure the cell is empty; it is flagged and
    named for the user to check."""
    true_heights = _true_heights(first, FROM_ABOVE)
    heights_right = 0
    for cell, st in first.stacks.stacks.items():
        mended = vision.combine_readings(_missing(first, cell, 0.93), second)
        added = mended.stacks.stacks[cell]
        assert (added.top, added.on_tile) == (st.top, st.on_tile)
        assert added.confidence < vision.STACK_CONFIDENT
        assert [w["cells"] for w in mended.warnings if w["code"] == "second-photo-only"] == [[list(first._public(cell))]]
        heights_right += added.height == true_heights[cell]
    assert heights_right >= 0.8 * len(first.stacks.stacks)


def test_the_warning_about_a_stack_only_one_photo_shows_names_that_photo(first, second):
    """Read as a third photo, the photo that alone shows a stack is named as the third."""
    cell = next(iter(first.stacks.stacks))
    mended = vision.combine_readings(_missing(first, cell, 0.93), second, vision.photo_name(3))
    assert [w["message"] for w in mended.warnings if w["code"] == "second-photo-only"] == \
        ["1 stack(s) only the third photo shows; please check"]


def test_a_stack_only_the_second_photo_shows_is_not_added_where_the_first_is_sure_of_none(first, second):
    cell = next(iter(first.stacks.stacks))
    mended = vision.combine_readings(_missing(first, cell, 0.999), second)
    assert cell not in mended.stacks.stacks
    assert "second-photo-only" not in {w["code"] for w in mended.warnings}


def _tile_doubted(reading, cell, confidence):
    """`reading` as if its photo had read no tile on `cell`, at `confidence`."""
    cells = {**reading.tiles.cells, cell: replace(reading.tiles.cells[cell], colour=None, confidence=confidence)}
    return replace(reading, tiles=replace(reading.tiles, cells=cells))


def test_a_tile_the_first_photo_doubts_is_settled_by_the_second(first, second):
    """A tile the first photo reads as none, unsure (a dim tile, a lamp's glare), and the second
    reads sure, is a tile, and a stack on it stays a stack on a tile."""
    on_tiles = {c for c, st in first.stacks.stacks.items() if st.on_tile}
    for cell in first.tiles.tiles:
        mended = vision.combine_readings(_tile_doubted(first, cell, 0.6), second)
        assert mended.tiles.tiles == first.tiles.tiles
        assert {c for c, st in mended.stacks.stacks.items() if st.on_tile} == on_tiles


def test_a_sure_read_of_the_first_photo_stays(first, second):
    cell = next(iter(first.tiles.tiles))
    mended = vision.combine_readings(_tile_doubted(first, cell, 0.95), second)
    assert cell not in mended.tiles.tiles


def _cell(colour, confidence):
    return CellRead((0, 0), colour, confidence, (0.0, 0.0, 0.0), 1.0)


def _photo(colour, confidence, stack_on_tile=None):
    """What settle_tiles reads of a first photo: one cell, and a stack on it or none."""
    stacks = {} if stack_on_tile is None else {(0, 0): replace(_stack_read((0.9, 0.1)), on_tile=stack_on_tile)}
    return SimpleNamespace(tiles=TileReading(cells={(0, 0): _cell(colour, confidence)}, laid=[(0, 0)]),
                           stacks=StackReading(stacks=stacks))


@pytest.mark.parametrize("first_read, second_read, stack_first, stack_second, settled", [
    (("white", 0.9), ("black", 0.95), None, None, "black"),       # colours: the more confident read
    (("white", 0.95), ("black", 0.9), None, None, "white"),
    ((None, 0.6), ("white", 0.99), None, None, "white"),          # a tile or none: sure against unsure
    ((None, 0.9), ("white", 0.99), None, None, None),             # sure against sure: the first photo's
    (("white", 0.6), (None, 0.7), None, None, "white"),           # unsure against unsure: the first photo's
    ((None, 0.6), ("white", 0.99), False, True, "white"),         # a stack both photos read on the new base
    ((None, 0.6), ("white", 0.99), False, None, None),            # a stack the second photo does not read
    ((None, 0.6), ("white", 0.99), False, False, None),           # ... or reads on the table
])
def test_a_cell_the_photos_read_differently_is_settled(first_read, second_read, stack_first, stack_second, settled):
    first = _photo(*first_read, stack_on_tile=stack_first)
    again = {} if stack_second is None else {(0, 0): replace(_stack_read((0.9, 0.1)), on_tile=stack_second)}
    tiles, rebased = settle_tiles(first, {(0, 0): _cell(*second_read)}, again)
    assert tiles.cells[(0, 0)].colour == settled
    assert rebased == ([(0, 0)] if stack_first is not None and settled != first_read[0] else [])
    assert tiles.laid == ([(0, 0)] if settled == first_read[0] else [])     # a settled cell is no longer mended


def test_a_tile_two_photos_read_sure_and_otherwise_is_flagged_for_a_third_photo_to_settle():
    tiles, _ = settle_tiles(_photo(None, 0.9), {(0, 0): _cell("white", 0.99)}, {})
    assert tiles.cells[(0, 0)].colour is None and tiles.cells[(0, 0)].confidence < TILE_CONFIDENT
    two = SimpleNamespace(tiles=tiles, stacks=StackReading())
    three, _ = settle_tiles(two, {(0, 0): _cell("white", 0.95)}, {})
    assert three.cells[(0, 0)].colour == "white" and three.cells[(0, 0)].confidence >= TILE_CONFIDENT


def test_a_read_another_photo_confirms_sure_is_sure():
    tiles, _ = settle_tiles(_photo("white", 0.6), {(0, 0): _cell("white", 0.95)}, {})
    assert (tiles.cells[(0, 0)].colour, tiles.cells[(0, 0)].confidence) == ("white", 0.95)
    assert tiles.laid == []                 # no longer a mend of the first photo's to check


def test_a_photo_of_another_table_is_not_used_and_says_so(first):
    other = vision.analyze_photo(SAMPLES / "s062-midgame-silverred-tilt15_35.jpg")
    with pytest.raises(DifferentWorldError):
        vision.combine_readings(first, other)
    before = {c: st.height for c, st in first.stacks.stacks.items()}
    reading = vision.add_second_photo(first, SAMPLES / "s062-midgame-silverred-tilt15_35.jpg")
    assert {c: st.height for c, st in reading.stacks.stacks.items()} == before
    assert any(w["code"] == "second-photo-unused" and "does not show the World of the first" in w["message"]
               for w in reading.warnings)


def test_a_second_photo_without_a_world_is_not_used(first, tmp_path):
    blank = tmp_path / "table.png"
    cv2.imwrite(str(blank), np.full((600, 800, 3), (90, 140, 170), np.uint8))
    reading = vision.add_second_photo(first, blank)
    assert [w["code"] for w in reading.warnings][-1] == "second-photo-unused"
    assert "no EXXIT World found" in reading.warnings[-1]["message"]


def test_an_unreadable_second_photo_is_an_error_naming_it(first, tmp_path):
    bad = tmp_path / "bad.jpg"
    bad.write_bytes(b"\xff\xd8\xff garbage")
    with pytest.raises(vision.UnreadableImageError, match="^the second photo: "):
        vision.add_second_photo(first, bad)


def test_the_placement_of_the_second_photo_survives_its_turn_and_shift():
    first = {(0, 0): "white", (1, 0): "white", (0, 1): "black", (1, -1): "black", (2, -1): "white",
             (2, 0): "black", (-1, 1): "white"}
    for k in range(6):
        turned = {(rotate(c, k)[0] + 7, rotate(c, k)[1] - 2): colour for c, colour in first.items()}
        k2, (dq, dr) = place_second(first, turned)
        back = {(rotate(c, k2)[0] + dq, rotate(c, k2)[1] + dr): colour for c, colour in turned.items()}
        assert back == first


def test_a_small_world_inside_a_large_one_is_another_world():
    large = {(q, r): "white" if (q + 2 * r) % 3 else "black" for q in range(-3, 4) for r in range(-3, 4)}
    with pytest.raises(DifferentWorldError):
        place_second(large, {(0, 0): "white", (1, 0): "white", (0, 1): "black", (1, -1): "black"})


def test_a_world_of_three_tiles_seen_again_is_the_same_world():
    """A World smaller than the opening diamond (a set-up given as a position) that a second photo
    shows whole, turned half round, is the same World: its stacks tell the two ways apart."""
    line = {(-1, 0): "white", (0, 0): "black", (1, 0): "white"}
    tops = {(-1, 0): "white", (0, 0): "white", (1, 0): "black"}
    half_round = {(-q + 2, -r + 1): colour for (q, r), colour in line.items()}
    tops_half_round = {(-q + 2, -r + 1): colour for (q, r), colour in tops.items()}
    k, (dq, dr) = place_second(line, half_round, tops, tops_half_round)
    assert {(rotate(c, k)[0] + dq, rotate(c, k)[1] + dr): colour for c, colour in tops_half_round.items()} == tops


def test_a_part_of_a_small_world_is_another_world():
    line = {(-1, 0): "white", (0, 0): "black", (1, 0): "white"}
    with pytest.raises(DifferentWorldError):
        place_second(line, {(5, 5): "white", (6, 5): "black"})


def _stack_read(chances) -> StackRead:
    height = int(np.argmax(chances)) + 1
    return StackRead((0, 0), height, ["white"] * height, "white", max(chances), 1.0, max(chances), True, (0, 0),
                     height_chances=tuple(chances))


@pytest.mark.parametrize("chances", [(0.2, 0.7, 0.1), (0.55, 0.45, 0.0), (0.9, 0.08, 0.02)])
def test_a_second_photo_that_tells_nothing_leaves_the_first_photos_chances(chances):
    """A second photo whose chances are the networks' prior (a stack it cannot see into) adds no
    evidence: the stack keeps the first photo's chances, not chances pushed towards fewer discs."""
    first, second = _stack_read(chances), _stack_read(HEIGHT_PRIOR[:len(chances)])
    together = combined_chances(first, second)
    assert int(np.argmax(together)) == int(np.argmax(chances))
    assert together == pytest.approx(chances, abs=0.03)


def test_an_opening_seen_from_the_other_side_puts_each_stack_on_itself():
    """The opening diamond looks the same turned half round; its stacks do not. A second photo
    from the other side must put each of its stacks on the same stack of the first photo, or the
    two photos' chances of different stacks would be multiplied together."""
    diamond = {(0, 0): "white", (1, 0): "black", (0, 1): "black", (1, 1): "white"}
    tops = {(1, 0): "white", (0, 0): "black", (2, -1): "white"}           # two on tiles, one beside them
    half_round = {(-q + 4, -r + 2): colour for (q, r), colour in diamond.items()}
    tops_half_round = {(-q + 4, -r + 2): colour for (q, r), colour in tops.items()}
    k, (dq, dr) = place_second(diamond, half_round, tops, tops_half_round)
    moved = {(rotate(c, k)[0] + dq, rotate(c, k)[1] + dr): colour for c, colour in tops_half_round.items()}
    assert moved == tops

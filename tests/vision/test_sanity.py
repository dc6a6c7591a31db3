import cv2
import pytest

import rules
import vision
from synthetic import Scene, midgame, render
from vision.sanity import sanity_warnings

DIAMOND = {(0, 0): "white", (1, 0): "white", (0, 1): "black", (1, -1): "black"}


def codes(warnings):
    return [w["code"] for w in warnings]


def test_a_plausible_reading_has_no_warnings():
    assert sanity_warnings(DIAMOND, {(0, 0): ("black", "white"), (2, -1): ("white",)}) == []


def test_more_than_eight_discs_of_a_colour_names_the_stacks():
    stacks = {(0, 0): ("white",) * 5, (1, 0): ("white",) * 4}
    (w,) = [w for w in sanity_warnings(DIAMOND, stacks) if w["code"] == "too-many-discs"]
    assert w["colour"] == "white" and w["count"] == 9 and w["cells"] == [[0, 0], [1, 0]]


def test_disconnected_world_names_the_stray_tiles():
    tiles = {**DIAMOND, (5, 5): "white"}
    (w,) = [w for w in sanity_warnings(tiles, {}) if w["code"] == "world-disconnected"]
    assert w["cells"] == [[5, 5]]


def test_more_tiles_than_a_set_has_is_flagged():
    row = {(q, 0): "white" if q % 2 else "black" for q in range(40)}
    (w,) = [w for w in sanity_warnings(row, {}) if w["code"] == "too-many-tiles"]
    assert w["count"] == 40 and "a set has 39" in w["message"]
    assert "too-many-tiles" not in codes(sanity_warnings(dict(list(row.items())[:39]), {}))


def test_off_world_stack_touching_no_tile_is_flagged_not_removed():
    stacks = {(3, 3): ("black",)}
    warnings = sanity_warnings(DIAMOND, stacks)
    assert "isolated-stack" in codes(warnings)
    assert stacks == {(3, 3): ("black",)}


def test_low_confidence_elements_are_listed():
    warnings = sanity_warnings(DIAMOND, {}, uncertain_tiles=[(0, 1)], uncertain_stacks=[(1, 0)])
    assert {"uncertain-tiles", "uncertain-stacks"} <= set(codes(warnings))


@pytest.fixture(scope="module")
def photo():
    tiles, stacks = midgame()
    return render(Scene(tiles=tiles, stacks=stacks, tilt_deg=30))[0]


@pytest.fixture(scope="module")
def reading(photo):
    return vision.analyze_photo(cv2.imencode(".png", photo)[1].tobytes())


def test_reading_gives_a_rules_position_and_pixels(reading, photo):
    pos = reading.position
    assert isinstance(pos, rules.Position) and len(pos.tiles) == 12
    for cell in pos.tiles:
        x, y = reading.cell_to_pixel(cell)
        assert 0 <= x < 1600 and 0 <= y < 1200
    for cell in pos.stacks:
        assert reading.stack_top_pixel(cell)[1] < reading.cell_to_pixel(cell)[1] + 1  # tops rise
    assert rules.position_from_json(reading.to_json()) == pos
    overlay = reading.draw_overlay(photo)
    assert overlay.shape == photo.shape and (overlay != photo).any()


def test_the_overlay_writes_its_warnings_in_characters_its_font_has_and_within_the_photo():
    from vision.reading import WARNING_FONT, overlay_lines
    message = ("photographed from nearly straight above (9° from vertical), where a stack's height hardly "
               "shows; a photo taken at 30-45° reads heights better")
    lines = overlay_lines(message, 500)
    assert len(lines) > 1 and all(line.isascii() for line in lines)
    assert " ".join(lines).startswith("photographed from nearly straight above (9 deg from vertical)")
    assert all(cv2.getTextSize(line, *WARNING_FONT, 2)[0][0] <= 500 for line in lines)


def test_impossible_reading_raises_a_vision_error(reading):
    stacks = reading.stacks.stacks
    first = next(iter(stacks.values()))
    saved = list(first.discs)
    first.discs = ["white"] * 9                 # as if nine white discs had been read on one cell
    try:
        with pytest.raises(vision.InconsistentReadingError):
            reading.position
    finally:
        first.discs = saved

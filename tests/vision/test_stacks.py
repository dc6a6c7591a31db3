"""Geometry helpers and the disc-colour read of the stack stage."""
import numpy as np
import pytest

from colour_models import colour_model
from vision.colours import ColourModel
from vision.stacks import CONFIDENT, SHIFT_GRID_MM, StackRead, _classify_points, keep_to_the_set


def test_offsets_tried_cover_a_hand_placed_stack():
    """Stacks stand up to about 3.5 mm off their cell's centre; every such offset is within
    0.7 mm of one tried."""
    rng = np.random.default_rng(1)
    angle, radius = rng.random(500) * 2 * np.pi, np.sqrt(rng.random(500)) * 3.5
    offsets = np.stack([np.cos(angle), np.sin(angle)], 1) * radius[:, None]
    nearest = np.linalg.norm(offsets[:, None] - SHIFT_GRID_MM[None], axis=2).min(axis=1)
    assert nearest.max() < 0.7


def colours_showing(lab, white, black) -> ColourModel:
    """A colour model whose working image is one Lab colour everywhere, with these disc colours."""
    return colour_model({"white": white, "black": black}, lab=np.tile(np.array(lab, np.float32), (20, 20, 1)),
                        spread=(1.0, 1.0, 1.0))


SILVER, RED = (60.0, 1.0, 6.0), (35.0, 45.0, 28.0)
WHITE, BLACK = (88.0, 0.0, 2.0), (25.0, 0.0, 0.0)
POINTS = np.array([[5.0, 5.0], [10.0, 10.0], [12.0, 6.0]])


@pytest.mark.parametrize("top, role", [
    ((62.0, 26.0, 20.0), "black"),      # a brightly lit red top: silver's lightness, red's hue
    ((40.0, 3.0, 7.0), "white"),        # a shaded silver top: red's lightness, silver's hue
    (RED, "black"), (SILVER, "white")])
def test_a_top_of_a_red_and_silver_set_is_told_by_its_hue(top, role):
    assert _classify_points(colours_showing(top, SILVER, RED), POINTS)[0] == role


@pytest.mark.parametrize("top, role", [((70.0, 0.0, 1.0), "white"), ((40.0, 0.0, 1.0), "black")])
def test_a_top_of_a_black_and_white_set_is_told_by_its_lightness(top, role):
    assert _classify_points(colours_showing(top, WHITE, BLACK), POINTS)[0] == role


def test_glare_on_half_a_black_top_leaves_it_black_and_a_white_top_stays_white():
    glare, rim_shade = (90.0, 0.0, 1.0), (45.0, 0.0, 1.0)
    colours = colours_showing(BLACK, WHITE, BLACK)
    colours.lab[:, :10] = glare                         # the left half of the image shines
    half_lit = np.array([[x, 5.0] for x in (2.0, 4.0, 6.0, 8.0, 11.0, 13.0, 15.0, 17.0)])
    assert _classify_points(colours, half_lit)[0] == "black"
    colours = colours_showing(WHITE, WHITE, BLACK)
    colours.lab[:, 16:] = rim_shade                     # a shaded sliver of a white top
    assert _classify_points(colours, half_lit)[0] == "white"


def test_a_black_top_lit_by_a_lamp_over_three_quarters_of_it_stays_black():
    """A lamp's glare whitens most of a glossy black top (dev renders: three black tops read white)."""
    colours = colours_showing(BLACK, WHITE, BLACK)
    colours.lab[:, :15] = (80.0, 0.0, 1.0)
    top = np.array([[x, 5.0] for x in (2.0, 4.0, 6.0, 8.0, 11.0, 13.0, 16.0, 18.0)])
    assert _classify_points(colours, top)[0] == "black"


# --- keeping to the set's discs ---------------------------------------------------------------
def stack(cell, discs, side_confidences=None):
    discs = list(discs)
    return StackRead(cell=cell, height=len(discs), discs=discs, top=discs[-1], confidence=0.9,
                     top_confidence=0.9, height_confidence=0.9, on_tile=True, top_pixel=(0.0, 0.0),
                     side_confidences=tuple(side_confidences or [0.9 if d else 0.0 for d in discs[:-1]]))


def chances(*heights):
    """Network chances of no stack and heights 1..8: `heights` {height: chance}."""
    p = np.full(9, 1e-4)
    for h, v in heights:
        p[h] = v
    return p


def rereader(stacks):
    """A stack read again at another height: its top kept, its side colours unread."""
    tops = {c: st.top for c, st in stacks.items()}
    return lambda cell, height, shift: stack(cell, [None] * (height - 1) + [tops[cell]])


def test_the_stack_likeliest_one_lower_is_lowered_when_a_colour_has_more_discs_than_a_set():
    stacks = {(i, 0): stack((i, 0), ["black"]) for i in range(6)}
    stacks[(6, 0)] = stack((6, 0), [None, "black"])
    stacks[(7, 0)] = stack((7, 0), ["black", "black"])
    p = {c: chances((1, 0.9)) for c in stacks}
    p[(6, 0)] = chances((2, 0.8), (1, 0.2))
    p[(7, 0)] = chances((2, 0.55), (1, 0.45))      # two discs, but one is nearly as likely
    assert sum(d == "black" for st in stacks.values() for d in st.discs) == 9
    assert keep_to_the_set(stacks, p, rereader(stacks)) == [(7, 0)]
    assert stacks[(7, 0)].height == 1 and stacks[(7, 0)].confidence < CONFIDENT
    assert stacks[(6, 0)].height == 2


def test_a_side_colour_is_left_unread_rather_than_lowering_a_sure_stack():
    stacks = {(i, 0): stack((i, 0), ["black"]) for i in range(7)}
    stacks[(7, 0)] = stack((7, 0), ["black", "black", "white"])
    stacks[(8, 0)] = stack((8, 0), ["black", "white"])
    p = {c: chances((1, 0.9)) for c in stacks}
    p[(7, 0)], p[(8, 0)] = chances((3, 0.9), (2, 0.05)), chances((2, 0.95), (1, 0.03))
    assert keep_to_the_set(stacks, p, rereader(stacks)) == []
    assert [st.height for st in stacks.values()] == [1] * 7 + [3, 2]
    assert sum(d == "black" for st in stacks.values() for d in st.discs) == 8
    assert sum(d is None for st in stacks.values() for d in st.discs) == 2
    assert stacks[(7, 0)].confidence == stacks[(8, 0)].confidence == 0.9


def test_a_reading_no_change_can_mend_stays_as_read_for_the_sanity_check():
    stacks = {(i, 0): stack((i, 0), ["white"]) for i in range(9)}
    p = {c: chances((1, 0.9)) for c in stacks}
    assert keep_to_the_set(stacks, p, rereader(stacks)) == []
    assert len(stacks) == 9 and all(st.height == 1 for st in stacks.values())


def test_a_reading_within_the_set_is_left_alone():
    stacks = {(i, 0): stack((i, 0), ["white", "black"]) for i in range(8)}
    p = {c: chances((2, 0.4), (1, 0.6)) for c in stacks}
    before = {c: (st.height, list(st.discs)) for c, st in stacks.items()}
    assert keep_to_the_set(stacks, p, rereader(stacks)) == []
    assert {c: (st.height, list(st.discs)) for c, st in stacks.items()} == before

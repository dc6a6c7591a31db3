"""Geometry helpers and the disc-colour read of the stack stage."""
import numpy as np
import pytest

from vision.colours import ColourClass, ColourModel
from vision.stacks import SHIFT_GRID_MM, _classify_points


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
    image = np.tile(np.array(lab, np.float32), (20, 20, 1))
    discs = {"white": ColourClass(np.array(white, float), np.ones(3)),
             "black": ColourClass(np.array(black, float), np.ones(3))}
    return ColourModel(tables=[], tiles=dict(discs), discs=discs, world_mask=np.zeros((20, 20), np.uint8),
                       lab=image)


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

"""A tile's colour is the nearer of the two tile colours; where the set's colours differ in hue (red against black
or silver), each is first dimmed to the tile's own lightness, as shade dims a tile (BENCHMARKS.md, session 78)."""
import numpy as np

from colour_models import colour_model
from vision.colours import lab_distance, shaded_distance
from vision.tiles import _tile_roles


def _roles(edition: str, white, black, medians: list) -> list:
    colours = colour_model({"white": white, "black": black}, edition=edition)
    roles = _tile_roles(colours, np.array(medians, float), np.ones(len(medians), bool), relearn=False)
    return [roles[i][0] for i in range(len(medians))]


def test_a_red_tile_in_shade_reads_red():
    # fresh render s043 of seed 106: a red tile at the World's far edge, out of the lamp's light, is as dark
    # as halfway to the black tiles, and nearer them in Lab; dimmed to its lightness the red tiles match it
    red, black, shaded = [38.1, 48.9, 36.9], [7.9, 3.5, 5.4], [17.6, 21.8, 16.6]
    assert lab_distance(np.array(shaded), np.array(black)) < lab_distance(np.array(shaded), np.array(red))
    assert _roles("jactalea-red-black", red, black, [red, black, shaded]) == ["white", "black", "white"]


def test_a_black_tile_under_glare_stays_black():
    # fresh render s052 of seed 100, under evening light at 60 degrees: a glossy black tile lit grey; red is
    # never lightened to match it, and dimmed to its lightness it is far redder
    red, black, glare = [63.3, 51.2, 13.0], [5.6, 1.7, -3.5], [48.1, 6.7, -7.1]
    assert _roles("jactalea-red-black", red, black, [glare]) == ["black"]


def test_the_black_and_white_sets_tiles_are_told_by_their_lightness():
    # white and black differ in lightness only: a white tile in deep shade is no longer told from a black
    # one by its hue, so there the plain distance decides
    white, black, grey = [80.0, 0.0, 2.0], [8.0, 0.0, 0.0], [30.0, 0.0, 1.0]
    assert shaded_distance(np.array(grey), np.array(white)) < lab_distance(np.array(grey), np.array(black))
    assert _roles("black-white", white, black, [grey]) == ["black"]

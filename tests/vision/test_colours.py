import numpy as np
import pytest

from synthetic import COLOURS, Scene, midgame, render
from vision.colours import BLACK, TABLE, WHITE, find_colours, to_lab
from vision.loading import load_image
from vision.profile import ColourHint, load_profile

LIGHTS = {"neutral": (1.0, 1.0, 1.0), "warm": (0.75, 0.95, 1.15), "cold": (1.15, 1.0, 0.8),
          "dim": (0.45, 0.45, 0.45)}


def _photo(edition, light, tilt=30):
    tiles, stacks = midgame()
    img, cam = render(Scene(tiles=tiles, stacks=stacks, edition=edition, tilt_deg=tilt))
    img = np.clip(img.astype(float) * np.array(LIGHTS[light]), 0, 255).astype(np.uint8)
    bare = {c: v for c, v in tiles.items() if c not in stacks}
    return load_image(img), cam, bare


def _tile_pixel(cam, cell, scale, pitch=42.5):
    from vision.hexgrid import cell_to_plane
    x, y = np.array(cell_to_plane(cell)) * pitch
    return (cam.project([[x, y, 0.0]])[0] * scale).round().astype(int)


@pytest.mark.parametrize("edition", list(COLOURS))
@pytest.mark.parametrize("light", list(LIGHTS))
def test_tile_colours_found_without_configuration(edition, light):
    img, cam, tiles = _photo(edition, light)
    model = find_colours(img.work, load_profile(edition))
    labels, _ = model.pixel_classes()
    assert model.confidence > 0.5
    assert model.tiles["white"].mean[0] > model.tiles["black"].mean[0]      # lighter plays White
    wrong = 0
    for cell, colour in tiles.items():
        x, y = _tile_pixel(cam, cell, img.scale)
        wrong += labels[y, x] != {"white": WHITE, "black": BLACK}[colour]
    assert wrong == 0
    assert labels[5, 5] == TABLE and labels[-5, -5] == TABLE


def test_profile_can_make_the_darker_colour_white():
    img, _, _ = _photo("jactalea-red-black", "neutral")
    prof = load_profile("jactalea-red-black")
    flipped = type(prof)(**{**vars(prof), "colours": {
        "white": ColourHint("black", (30, 30, 30), (30, 30, 30)),
        "black": ColourHint("red", (170, 40, 40), (170, 40, 40))}})
    model = find_colours(img.work, flipped)
    assert model.tiles["white"].mean[0] < model.tiles["black"].mean[0]


def test_world_mask_covers_the_world_not_the_table():
    img, cam, tiles = _photo("silver-red", "neutral")
    model = find_colours(img.work, load_profile())
    for cell in tiles:
        x, y = _tile_pixel(cam, cell, img.scale)
        assert model.world_mask[y, x] > 0
    assert model.world_mask.mean() / 255 < 0.5
    assert to_lab(img.work).shape == img.work.shape

from dataclasses import replace

import cv2
import numpy as np
import pytest

import vision
from colour_models import colour_model
from synthetic import COLOURS, Scene, diamond, midgame, render
from vision.colours import BLACK, TABLE, WHITE, ColourClass, find_colours
from vision.hexgrid import cell_to_plane
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
    model = find_colours(img, load_profile(edition))
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
    model = find_colours(img, flipped)
    assert model.tiles["white"].mean[0] < model.tiles["black"].mean[0]


def test_world_mask_covers_the_world_not_the_table():
    img, cam, tiles = _photo("silver-red", "neutral")
    model = find_colours(img, load_profile())
    for cell in tiles:
        x, y = _tile_pixel(cam, cell, img.scale)
        assert model.world_mask[y, x] > 0
    assert model.world_mask.mean() / 255 < 0.5


def test_a_room_beyond_the_table_is_left_out_of_the_table_colours_from_the_near_border():
    # the top fifth of a tilted photo is a wall as red as the red tiles (cf. sample s041, whose
    # World is found only with the table's colours from the lower border)
    tiles, stacks = midgame()
    img, cam = render(Scene(tiles=tiles, stacks=stacks, edition="jactalea-red-black", tilt_deg=45))
    img[: img.shape[0] // 5] = COLOURS["jactalea-red-black"][0]
    photo = load_image(img)
    red = [c for c, colour in tiles.items() if colour == "white" and c not in stacks]
    pixels = [_tile_pixel(cam, cell, photo.scale) for cell in red]
    whole = find_colours(photo, load_profile())
    near = find_colours(photo, load_profile(), "lower border")
    assert all(whole.pixel_classes()[0][y, x] == TABLE for x, y in pixels)
    assert all(near.pixel_classes()[0][y, x] == WHITE for x, y in pixels)
    assert near.pixel_classes()[0][-5, -5] == TABLE


@pytest.mark.parametrize("wall", [False, True])
def test_a_dark_room_beyond_the_table_is_not_taken_for_the_world(wall):
    # the top fifth of a tilted photo is a dark room, larger than the World (cf. fresh render s036
    # of seed 49), maybe under a pale wall (cf. dev render s011 of seed 40): from the lower border's
    # table colours it stands out, and the World's region, whose tile colours are learnt, must
    # still be the World's
    tiles, stacks = midgame()
    img, cam = render(Scene(tiles=tiles, stacks=stacks, edition="jactalea-red-black", tilt_deg=50,
                            distance_mm=650))
    h = img.shape[0]
    img[: h // 5] = (12, 12, 14)
    if wall:
        img[: h // 20] = (230, 215, 190)
    photo = load_image(img)
    near = find_colours(photo, load_profile(), "lower border")
    room = near.regions[-1]
    assert room[photo.work.shape[0] // 10].mean() / 255 > 0.9
    assert all(near.world_mask[y, x] > 0 for x, y in (_tile_pixel(cam, c, photo.scale) for c in tiles))
    assert not near.world_mask[: photo.work.shape[0] // 5].any()
    red = near.tiles["white"].mean
    assert red[1] > 30                                   # the red tiles' colour, not the room's


def test_a_pool_of_lamp_light_at_the_border_is_left_out_of_the_table_colours_from_its_main_colour():
    # a lamp lights the lower left of the table as light as the light tiles, and shades the rest
    # as dark as the dark tiles (cf. dev render s024 of seed 40: whole border and lower border alike
    # then make both tile colours "table")
    tiles, stacks = midgame()
    img, cam = render(Scene(tiles=tiles, stacks=stacks, edition="black-white", tilt_deg=30))
    white, black, table = (np.array(c, np.float32) for c in COLOURS["black-white"])
    h, w = img.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w]
    pool = np.exp(-(((xx - 0.0 * w) / (0.3 * w)) ** 2 + ((yy - 1.0 * h) / (0.45 * h)) ** 2))[..., None]
    is_table = np.abs(img.astype(np.float32) - table).max(axis=2, keepdims=True) < 40
    lit = np.where(is_table, black * 1.3 * (1 - pool) + white * pool, img)
    photo = load_image(np.clip(lit, 0, 255).astype(np.uint8))
    light = [c for c, colour in tiles.items() if colour == "white" and c not in stacks]
    pixels = [_tile_pixel(cam, cell, photo.scale) for cell in light]
    whole = find_colours(photo, load_profile())
    main = find_colours(photo, load_profile(), "main colour")
    assert sum(whole.pixel_classes()[0][y, x] == WHITE for x, y in pixels) < len(pixels) / 2
    assert all(main.pixel_classes()[0][y, x] == WHITE for x, y in pixels)
    reading = vision.analyze_photo(photo.full)       # the third look finds the World's light tiles
    assert list(reading.tiles.tiles.values()).count("white") >= len(light)


def test_a_pool_of_lamp_light_inside_the_photo_is_set_apart_from_the_world_by_its_surroundings():
    # an opening under a desk lamp: the pool of light beside the four tiles is as light as the light
    # tiles, the shade around it as dark as the dark ones (cf. dev render s138 of seed 44, whose
    # World was found only so); from the border's colours the pool joins the World's region
    img, cam = render(Scene(tiles=diamond(), edition="black-white", tilt_deg=50, distance_mm=700, clutter=True))
    white, black, table = (np.array(c, np.float32) for c in COLOURS["black-white"])
    h, w = img.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w]
    centre = (0.6 * w, 0.6 * h)
    pool = np.exp(-(((xx - centre[0]) / (0.25 * w)) ** 2 + ((yy - centre[1]) / (0.3 * h)) ** 2))[..., None]
    is_table = np.abs(img.astype(np.float32) - table).max(axis=2, keepdims=True) < 40
    photo = load_image(np.clip(np.where(is_table, black * 1.2 * (1 - pool) + white * pool, img), 0, 255).astype(np.uint8))
    pixels = [_tile_pixel(cam, cell, photo.scale) for cell in diamond()]
    pool_x, pool_y = (np.array(centre) * photo.scale).astype(int)
    whole = find_colours(photo, load_profile())
    around = find_colours(photo, load_profile(), "surroundings")
    assert whole.world_mask[pool_y, pool_x] > 0
    assert around.world_mask[pool_y, pool_x] == 0
    assert all(around.world_mask[y, x] > 0 for x, y in pixels)
    assert around.world_mask.mean() / 255 < 0.05


def test_a_hand_reaching_in_from_the_photos_edge_is_set_aside_from_the_world():
    # a player's hand touching the World's eastern tile, its arm reaching in from the photo's edge
    # (cf. fresh render s060 of seed 139 with a hand beside the World): taken with the World's
    # region, the skin is learnt as a tile colour
    tiles, stacks = midgame()
    img, cam = render(Scene(tiles=tiles, stacks=stacks, edition="jactalea-red-black", tilt_deg=30))
    h, w = img.shape[:2]
    pitch = 42.5
    east = max(tiles, key=lambda c: _tile_pixel(cam, c, 1.0)[0])
    x, y = np.array(cell_to_plane(east)) * pitch
    tip_x, tip_y = cam.project([[x + 0.5 * pitch, y, 0.0]])[0]
    radius = 0.12 * h
    centre_x = tip_x + radius
    yy, xx = np.mgrid[0:h, 0:w]
    palm = np.hypot(xx - centre_x, yy - tip_y)
    hand = (palm < radius) | ((xx >= centre_x) & (np.abs(yy - tip_y) < 0.7 * radius))
    shading = 0.8 + 0.2 * np.clip(1 - palm / (2 * radius), 0, 1)
    noise = np.random.default_rng(0).normal(0, 3, img.shape)
    skin = np.array((150, 165, 235), np.float32) * shading[..., None] + noise
    photo = load_image(np.where(hand[..., None], np.clip(skin, 0, 255), img).astype(np.uint8))
    palm_x, palm_y = int(centre_x * photo.scale), int(tip_y * photo.scale)
    red, black = (cv2.cvtColor(np.array(c, np.float32)[None, None] / 255, cv2.COLOR_BGR2Lab)[0, 0]
                  for c in COLOURS["jactalea-red-black"][:2])
    whole = find_colours(photo, load_profile())
    assert whole.world_mask[palm_y, palm_x] > 0
    assert np.linalg.norm(whole.tiles["white"].mean - red) > 20
    aside = find_colours(photo, load_profile(), "reaching in aside")
    assert aside.world_mask[palm_y, palm_x] == 0
    assert all(aside.world_mask[y, x] > 0 for x, y in (_tile_pixel(cam, c, photo.scale) for c in tiles))
    assert np.linalg.norm(aside.tiles["white"].mean - red) < 10
    assert np.linalg.norm(aside.tiles["black"].mean - black) < 10


def test_table_colours_come_from_a_named_part_of_the_border():
    with pytest.raises(ValueError, match="main colour"):
        find_colours(load_image(np.zeros((80, 80, 3), np.uint8)), load_profile(), "the middle")


def _model(tiles, tables):
    return colour_model(tiles, tables, edition="black-white")


def test_a_table_colour_becomes_the_tile_colour_the_tiles_read_lack():
    # dev render s193 of seed 44: light tiles on a cloth whose light checks are their colour; the
    # World's region and the tiles first read are all dark, so both tile colours learnt are black
    model = _model({"white": (4.2, 0.6, 2.2), "black": (2.3, 0.4, 0.9)}, [(26, 1, 9), (71, 1, 20)])
    assert model.tile_colour_from_table()
    assert model.tiles["white"].mean.tolist() == [71, 1, 20]
    assert model.tiles["black"].mean[0] < 5
    assert [t.mean.tolist() for t in model.tables] == [[26, 1, 9]]
    labels, _ = model.classify(np.array([[70.0, 1.0, 19.0], [3.0, 0.5, 1.5], [27.0, 1.0, 9.0]], np.float32))
    assert labels.tolist() == [WHITE, BLACK, TABLE]


@pytest.mark.parametrize("tiles, tables", [
    ({"white": (80, 1, 5), "black": (3, 0, 1)}, [(26, 1, 9), (71, 1, 20)]),    # two tile colours learnt
    ({"white": (4, 1, 2), "black": (2, 0, 1)}, [(71, 1, 20)]),                  # a table of one colour
])
def test_tile_colours_stay_when_they_differ_or_the_table_has_one_colour(tiles, tables):
    model = _model(tiles, tables)
    assert not model.tile_colour_from_table()
    assert [t.mean.tolist() for t in model.tables] == [list(t) for t in tables]
    assert model.tiles["white"].mean.tolist() == list(tiles["white"])


def test_colour_models_of_one_photo_share_its_gradients():
    img, _, _ = _photo("black-white", "neutral")
    whole, lower = find_colours(img, load_profile()), find_colours(img, load_profile(), "lower border")
    assert whole.lightness_gradient() is lower.lightness_gradient() is img.lightness_gradient
    assert whole.lightness_gradient().shape == img.work.shape[:2]
    assert whole.colour_gradients() is lower.colour_gradients() is img.colour_gradients
    gx, gy, magnitude = whole.colour_gradients()
    assert gx.shape == gy.shape == img.work.shape[:2] + (3,) and magnitude.shape == img.work.shape[:2]
    # a model made without its photo (as tests and tools make them) computes the same from its Lab image
    alone = replace(whole, image=None, _gradients={})
    assert np.array_equal(alone.colour_gradients()[2], magnitude)
    assert np.array_equal(alone.lightness_gradient(), whole.lightness_gradient())


def _checkered_cloth_photo(check_labs, noise=2.5, size=(750, 1000), check=30, radius=55):
    """A dim checkered cloth of two close colours (dev render s132 of seed 44: green and beige
    checks 10 Lab units apart) with the opening diamond's four red and black tiles in its middle, at
    the working resolution; returns (photo, the tiles' centres as (row, column))."""
    import cv2
    h, w = size
    labs = np.array(check_labs, np.float32)
    ys, xs = np.mgrid[0:h, 0:w]
    lab = labs[((ys // check) + (xs // check)) % 2]
    lab = lab + np.random.default_rng(3).normal(0, noise, lab.shape).astype(np.float32)
    bgr = (np.clip(cv2.cvtColor(lab, cv2.COLOR_Lab2BGR), 0, 1) * 255).astype(np.uint8)
    centres = []
    for (q, r), colour in zip([(0, 0), (1, 0), (0, 1), (1, -1)],
                              [(34, 36, 168), (34, 36, 168), (32, 32, 34), (32, 32, 34)]):
        cx, cy = 0.47 * w + radius * np.sqrt(3) * (q + r / 2), h / 2 + 1.5 * radius * r
        angles = np.radians(np.arange(30, 390, 60))
        hexagon = np.stack([cx + (radius - 1) * np.cos(angles), cy + (radius - 1) * np.sin(angles)], 1)
        cv2.fillPoly(bgr, [hexagon.round().astype(np.int32)], colour)
        centres.append((round(cy), round(cx)))
    return bgr, centres


def test_both_colours_of_a_dim_checkered_cloth_are_table_colours():
    photo, centres = _checkered_cloth_photo([(38.0, -3.5, 8.4), (47.0, 1.0, 7.3)])
    model = find_colours(load_image(photo), load_profile("jactalea-red-black"))
    assert len(model.tables) == 2
    assert model.world_mask.mean() / 255 < 0.1                     # the four tiles, not the cloth
    assert all(model.world_mask[y, x] for y, x in centres)


def test_one_colour_of_a_plain_cloth_stays_one_table_colour():
    photo, _ = _checkered_cloth_photo([(42.0, -1.0, 8.0), (42.0, -1.0, 8.0)], noise=4.0)
    model = find_colours(load_image(photo), load_profile("jactalea-red-black"))
    assert len(model.tables) == 1


def test_two_clusters_with_one_centre_are_one_table_colour():
    import warnings
    from vision.colours import _valley_between
    centre = ColourClass(np.array([40.0, 1.0, 1.0]), np.array([4.0, 2.5, 2.5]))
    pixels = np.tile(np.array([[40.0, 1.0, 1.0]], np.float32), (100, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")                 # no division by a zero distance
        assert not _valley_between(pixels, pixels, centre, centre)

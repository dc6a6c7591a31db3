"""What the tile networks see (vision/tile_net.py) and the shipped weights."""
import cv2
import numpy as np
import pytest

from synthetic import Scene, render
from vision.convnet import ConvNet
from vision.loading import load_image
from vision.pipeline import locate_world
from vision.profile import load_profile
from vision.tile_net import CHANNELS, SPAN, TILE_PX, tile_input
from vision.tiles import TILE_NETS, tile_chances, tile_evidence, tile_views


@pytest.fixture(scope="module")
def scene_world():
    scene = Scene(tiles={(0, 0): "white", (1, 0): "black", (0, 1): "black", (1, -1): "white"},
                  stacks={}, tilt_deg=40, yaw_deg=20, edition="silver-red")
    img, _ = render(scene)
    located = locate_world(load_image(img), load_profile("silver-red"))
    return located.colours, located.geometry, located.cells, located.outline, located.first


def test_a_crop_is_the_table_plane_around_the_cell(scene_world):
    colours, geo, cells, _, first = scene_world
    hidden = np.zeros(colours.world_mask.shape, np.uint8)
    x = tile_input(colours, geo, cells, hidden)
    assert x.shape == (len(cells), TILE_PX, TILE_PX, CHANNELS) and x.dtype == np.float32
    centres = geo.cell_to_work(cells).astype(np.float32)
    for crop, (cx, cy) in zip(x, centres):
        at_centre = cv2.remap(colours.lab, np.float32([[cx]]), np.float32([[cy]]), cv2.INTER_LINEAR)[0, 0]
        lab = crop[TILE_PX // 2 - 1:TILE_PX // 2 + 1, TILE_PX // 2 - 1:TILE_PX // 2 + 1, :3].mean(axis=(0, 1))
        assert np.allclose(lab * [50, 40, 40] + [50, 0, 0], at_centre, atol=3.0)
        assert np.allclose(crop[..., 3:6] * 20, crop[..., :3] * [50, 40, 40] + [50, 0, 0] - colours.tables[0].mean,
                           atol=1e-3)
    middle_l = {colour: [x[cells.index(c), TILE_PX // 2, TILE_PX // 2, 0] for c, col in first.tiles.items() if col == colour]
                for colour in ("white", "black")}
    assert len(middle_l["white"]) == len(middle_l["black"]) == 2
    assert min(middle_l["white"]) > max(middle_l["black"])      # the tile's own colour at the middle
    assert not x[..., 6].any()                                  # nothing hidden
    assert SPAN > 1.0                                           # a tile and a margin of its neighbours


def test_hidden_pixels_are_marked(scene_world):
    colours, geo, cells, _, _ = scene_world
    hidden = np.zeros(colours.world_mask.shape, np.uint8)
    (cx, cy), = geo.cell_to_work([(0, 0)])
    cv2.circle(hidden, (int(cx), int(cy)), 4, 255, -1)
    x = tile_input(colours, geo, [(0, 0), (1, 0)], hidden)
    assert x[0, TILE_PX // 2, TILE_PX // 2, 6] == 1.0
    assert x[0, 0, 0, 6] == 0.0 and not x[1, ..., 6].any()


def test_no_cells_no_crops(scene_world):
    colours, geo, _, _, _ = scene_world
    assert tile_input(colours, geo, [], np.zeros(colours.world_mask.shape, np.uint8)).shape == (0, TILE_PX, TILE_PX, CHANNELS)


def test_both_shipped_networks_read_the_clear_tiles_and_their_pair_weighs_them_alike(scene_world):
    colours, geo, cells, outline, first = scene_world
    hidden = np.zeros(colours.world_mask.shape, np.uint8)
    features = tile_evidence(colours, geo, cells, outline, hidden, first, set())[0]
    pictures = tile_input(colours, geo, cells, hidden)
    chances = []
    for name in TILE_NETS:
        p = ConvNet.shipped(name).probabilities(pictures, features)
        assert p.shape == (len(cells), 2) and np.allclose(p.sum(axis=1), 1.0)
        assert {c for c, pc in zip(cells, p[:, 1]) if pc > 0.5} == set(first.tiles)    # four clear tiles, nothing else
        chances.append(p[:, 1])
    pair = tile_chances(tile_views(colours, geo, cells, hidden), features)
    assert {c for c, pc in zip(cells, pair) if pc > 0.5} == set(first.tiles)
    lo, hi = (np.clip(f(*chances).astype(float), 1e-6, 1 - 1e-6) for f in (np.minimum, np.maximum))  # as the pair reads them
    assert np.all((pair >= lo * 0.999) & (pair <= hi * 1.001))          # between the two networks' chances

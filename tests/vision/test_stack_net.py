"""The stack network (vision/stack_net.py): its layers, its crops and the shipped weights."""
import cv2
import numpy as np
import pytest

import vision
from reference_net import reference_chances
from synthetic import Scene, render
from vision.errors import VisionError
from vision.hexgrid import ring
from vision.pipeline import locate_world
from vision.loading import load_image
from vision.profile import load_profile
from vision.convnet import ConvNet
from vision.stack_net import BASE_Y, CROP_H, CROP_SCALARS, CROP_W, SECOND_OPINIONS, network_input, stack_chances
from vision.stacks import EdgeMap, _base_height, edge_activity, read_stacks, stack_crops


def test_the_network_computes_what_it_was_trained_as():
    rng = np.random.default_rng(0)
    weights = {"conv0.w": rng.normal(0, 0.3, (5, 6, 3, 3)), "conv0.b": rng.normal(0, 0.1, 5),
               "conv1.w": rng.normal(0, 0.3, (7, 5, 3, 3)), "conv1.b": rng.normal(0, 0.1, 7),
               "fc1.w": rng.normal(0, 0.3, (10, 7 * 2 * 3 + 2)), "fc1.b": rng.normal(0, 0.1, 10),
               "fc2.w": rng.normal(0, 0.3, (4, 10)), "fc2.b": rng.normal(0, 0.1, 4)}
    crops = rng.uniform([0, -40, -40], [100, 40, 40], (3, 8, 12, 3)).astype(np.float32)
    scalars = rng.random((3, 2)).astype(np.float32)
    got = ConvNet(weights).probabilities(network_input(crops), scalars)
    want = reference_chances(weights, network_input(crops).transpose(0, 3, 1, 2), scalars)
    assert np.allclose(got, want, atol=1e-5)
    assert np.allclose(got.sum(axis=1), 1.0)


def test_missing_weights_are_a_clear_error(tmp_path):
    with pytest.raises(VisionError, match="tools/train_stack_net.py"):
        ConvNet.load(tmp_path / "stack_net.npz")


@pytest.fixture(scope="module")
def scene_world():
    scene = Scene(tiles={(0, 0): "white", (1, 0): "black", (0, 1): "black", (1, -1): "white"},
                  stacks={(0, 0): ("black", "black", "black")}, tilt_deg=40, yaw_deg=20, edition="silver-red")
    img, cam = render(scene)
    profile = load_profile("silver-red")
    located = locate_world(load_image(img), profile)
    return scene, located.colours, located.geometry, profile, located.first.tiles


def test_a_crop_puts_the_stack_base_at_its_fixed_place_and_the_stack_upright(scene_world):
    scene, colours, geo, profile, tiles = scene_world
    cells = sorted(set(tiles) | ring(tiles))
    crops, scalars = stack_crops(colours, geo, profile, cells, tiles)
    assert crops.shape == (len(cells), CROP_H, CROP_W, 3) and scalars.shape == (len(cells), CROP_SCALARS)
    for cell, crop, numbers in zip(cells, crops, scalars):
        base = geo.project([cell], _base_height(profile, cell in tiles))[0] * geo.scale
        at_base = cv2.remap(colours.lab, np.float32([[base[0]]]), np.float32([[base[1]]]), cv2.INTER_LINEAR)[0, 0]
        assert np.allclose(crop[BASE_Y, CROP_W // 2], at_base, atol=1.0)
        assert numbers[0] == pytest.approx(geo.camera.tilt_deg / 60)
        assert numbers[1] > 0                      # a disc of height rises up the crop
        assert numbers[3] == (1.0 if cell in tiles else 0.0)


def test_the_network_finds_a_rendered_stack():
    reading = vision.analyze_photo(render(Scene(
        tiles={(0, 0): "white", (1, 0): "black", (0, 1): "black", (1, -1): "white"},
        stacks={(0, 0): ("black", "white")}, tilt_deg=30, yaw_deg=20, edition="silver-red"))[0], profile="silver-red")
    assert len(reading.stacks.stacks) == 1
    (st,) = reading.stacks.stacks.values()
    assert st.top == "white"


def test_no_cell_to_measure_is_no_stack(scene_world):
    scene, colours, geo, profile, tiles = scene_world
    assert read_stacks(colours, geo, profile, [], tiles).stacks == {}
    far = [(40, 40), (41, 40)]                       # bare table far from the World: under the gate
    assert read_stacks(colours, geo, profile, far, tiles).stacks == {}


class _StandIn:
    """A stand-in network giving the chances `rows` (one row a picture, in order)."""

    def __init__(self, rows):
        self.rows = np.array(rows, float)

    def probabilities(self, x, scalars):
        return self.rows[:len(x)].copy()


def test_a_doubtful_stack_gets_the_second_opinions_and_a_sure_one_keeps_the_networks_own(monkeypatch):
    """The stack network sure of one disc, sure of no stack, torn between one and two discs, and
    unsure there is a stack: the two sure reads stay its own; the others become the average of it
    and the two networks trained on other photos, which here see two discs."""
    own = np.array([[0.02, 0.95, 0.03, 0, 0, 0, 0],
                    [0.97, 0.02, 0.01, 0, 0, 0, 0],
                    [0.05, 0.50, 0.45, 0, 0, 0, 0],
                    [0.40, 0.55, 0.05, 0, 0, 0, 0]])
    second = [0.05, 0.10, 0.85, 0, 0, 0, 0]
    asked = []

    def shipped(name):
        assert name in SECOND_OPINIONS
        asked.append(name)
        return _StandIn([second] * len(own))

    monkeypatch.setattr(ConvNet, "shipped", staticmethod(shipped))
    x, scalars = np.zeros((4, CROP_H, CROP_W, 6), np.float32), np.zeros((4, CROP_SCALARS), np.float32)
    p = stack_chances(_StandIn(own), x, scalars)
    assert p[:2] == pytest.approx(own[:2])
    assert p[2:] == pytest.approx((own[2:] + 2 * np.array(second)) / 3)
    assert np.argmax(p[2, 1:]) + 1 == 2 and p[3, 0] < 0.5
    assert sorted(asked) == sorted(SECOND_OPINIONS)
    asked.clear()
    assert stack_chances(_StandIn(own), x[:2], scalars[:2]) == pytest.approx(own[:2]) and asked == []


class _ReadsTheBaseRow:
    """A stand-in network whose chances depend on what its crops show at the base's row: the row
    number each crop's row was painted with (so a crop moved a row shows another number)."""

    def __init__(self, by_row):
        self.by_row = by_row

    def probabilities(self, x, scalars):
        return np.array([self.by_row[int(round(v))] for v in x[:, BASE_Y, 0, 0]], float)


def test_from_35_degrees_a_doubtful_stack_is_also_read_from_its_crop_moved_a_row_each_way(monkeypatch):
    """Seen steeply, a stack set down a millimetre nearer or farther than its cell's centre looks a
    disc lower or higher: the chances of a doubtful read are averaged over the crop as cut and moved
    a row up and down. A sure read, or one seen from under 35 degrees, is read once."""
    torn, nearer, farther = [0.02, 0.50, 0.48, 0, 0, 0, 0], [0.02, 0.10, 0.88, 0, 0, 0, 0], [0.02, 0.30, 0.68, 0, 0, 0, 0]
    sure = [0.01, 0.97, 0.02, 0, 0, 0, 0]
    by_row = {BASE_Y: torn, BASE_Y + 1: nearer, BASE_Y - 1: farther}
    net = _ReadsTheBaseRow(by_row)
    monkeypatch.setattr(ConvNet, "shipped", staticmethod(lambda name: net))
    x = np.zeros((3, CROP_H, CROP_W, 6), np.float32)
    x[..., 0] = np.arange(CROP_H, dtype=np.float32)[None, :, None]
    scalars = np.zeros((3, CROP_SCALARS), np.float32)
    scalars[:, 0] = [45 / 60, 20 / 60, 45 / 60]
    p = stack_chances(net, x[:2], scalars[:2])
    assert p[0] == pytest.approx(np.mean([torn, nearer, farther], axis=0))
    assert np.argmax(p[0, 1:]) + 1 == 2
    assert p[1] == pytest.approx(torn) and np.argmax(p[1, 1:]) + 1 == 1
    net.by_row = {**by_row, BASE_Y: sure}
    assert stack_chances(net, x[2:], scalars[2:])[0] == pytest.approx(sure)


@pytest.mark.parametrize("name", SECOND_OPINIONS)
def test_the_second_opinion_networks_read_the_same_crops(name, scene_world):
    """They take the shipped stack network's inputs and find the one stack where it does."""
    scene, colours, geo, profile, tiles = scene_world
    cells = sorted(set(tiles) | ring(tiles))
    crops, scalars = stack_crops(colours, geo, profile, cells, tiles)
    x = network_input(crops)
    found = {n: {c for c, row in zip(cells, ConvNet.shipped(n).probabilities(x, scalars)) if row[0] < 0.5}
             for n in ("stack_net", name)}
    assert len(found[name]) == 1 and found[name] == found["stack_net"]


def test_a_second_read_reuses_the_chances_of_the_crops_it_has_seen_and_reads_the_same(scene_world, monkeypatch):
    scene, colours, geo, profile, tiles = scene_world
    weighed = []

    def counted(net, x, scalars):
        weighed.append(len(x))
        return stack_chances(net, x, scalars)

    monkeypatch.setattr("vision.stacks.stack_chances", counted)
    first = read_stacks(colours, geo, profile, sorted(tiles), tiles)
    wider = sorted(set(tiles) | ring(tiles))
    fresh = read_stacks(colours, geo, profile, wider, tiles)
    again = read_stacks(colours, geo, profile, wider, tiles, earlier=first)
    assert weighed[2] == weighed[1] - weighed[0] and weighed[0] > 0
    assert set(again.stacks) == set(fresh.stacks) and len(fresh.stacks) == len(scene.stacks) == 1
    assert [(s.height, s.top) for s in again.stacks.values()] == [(s.height, s.top) for s in fresh.stacks.values()]
    assert [(s.height, s.top) for s in fresh.stacks.values()] == [(len(d), d[-1]) for d in scene.stacks.values()]
    (stacked,) = fresh.stacks          # the lattice's cells are numbered from where it was fitted, not as the scene's
    without_a_tile = {c: v for c, v in tiles.items() if c != stacked}
    read_stacks(colours, geo, profile, wider, without_a_tile, earlier=first)
    assert weighed[3] > weighed[2]          # on another base the stack's crop is another picture


def test_a_first_read_of_hundreds_of_cells_is_weighed_like_a_few(scene_world):
    """A misread World can hand the stack reader a few hundred cells (over 32767 sample points)."""
    scene, colours, geo, profile, tiles = scene_world
    many = sorted({(q, r) for q in range(-10, 11) for r in range(-10, 11)})
    edges = EdgeMap(colours)
    assert np.allclose(edge_activity(edges, geo, profile, many, tiles),
                       np.concatenate([edge_activity(edges, geo, profile, many[i:i + 50], tiles)
                                       for i in range(0, len(many), 50)]))
    world = sorted(set(tiles) | ring(tiles))
    assert read_stacks(colours, geo, profile, many, tiles).stacks.keys() == read_stacks(
        colours, geo, profile, world, tiles).stacks.keys() and len(scene.stacks) == 1

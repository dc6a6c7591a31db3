"""The shipped networks (vision/convnet.py): their layers, threads and calibration tables; the robust edge mean."""
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from reference_net import reference_chances
from vision.convnet import ConvNet, calibration_table, with_prior_ratio
from vision.errors import VisionError
from vision.stacks import robust_mean


def test_robust_mean_drops_hidden_points_and_the_weakest_eighth():
    rng = np.random.default_rng(3)
    data = rng.random((5, 7, 24))
    data[rng.random(data.shape) < 0.3] = np.nan
    got = robust_mean(data, 6)
    for idx in np.ndindex(*data.shape[:-1]):
        vals = np.sort(data[idx][~np.isnan(data[idx])])
        want = vals[len(vals) // 8:].mean() if len(vals) >= 6 else 0.0
        assert got[idx] == pytest.approx(want)
    assert robust_mean(np.array([np.nan] * 10 + [1.0] * 3), 6) == 0.0      # too few visible points


def _tiny_weights(classes=2):
    rng = np.random.default_rng(0)
    return {"conv0.w": rng.normal(0, 0.3, (2, 1, 3, 3)), "conv0.b": np.zeros(2),
            "fc1.w": rng.normal(0, 0.3, (3, 2 + 1)), "fc1.b": np.zeros(3),
            "fc2.w": rng.normal(0, 0.3, (classes, 3)), "fc2.b": np.zeros(classes)}


def test_confidence_is_how_often_such_reads_were_right(tmp_path):
    rng = np.random.default_rng(5)
    chance = rng.uniform(0.5, 1.0, 4000)
    right = rng.random(4000) < chance ** 3                  # true accuracy chance**3, below the chance
    table = calibration_table(chance, right.astype(float))
    assert all(a <= b for a, b in zip(table[1], table[1][1:]))          # never decreasing
    np.savez(tmp_path / "toy_net.npz", **_tiny_weights())
    (tmp_path / "toy_net.calibration.json").write_text(
        '{"tile": {"chance": %s, "right": %s}}' % (list(table[0]), list(table[1])))
    net = ConvNet.load(tmp_path / "toy_net.npz")
    for c in (0.6, 0.8, 0.95):
        assert net.confidence("tile", c) == pytest.approx(c ** 3, abs=0.06)
    assert net.confidence("height", 0.7) == 0.7             # no such table: the chance itself
    assert ConvNet(_tiny_weights()).confidence("tile", 0.7) == 0.7


def test_a_missing_network_names_its_training_tool(tmp_path):
    with pytest.raises(VisionError, match="tools/train_tile_net.py"):
        ConvNet.load(tmp_path / "tile_net.npz")


@pytest.mark.parametrize("name, tables", [("stack_net", {"present", "height"}), ("tile_net", {"tile"}),
                                          ("tile_net_worn", {"tile", "pair"})])
def test_the_shipped_networks_load_with_their_tables(name, tables):
    net = ConvNet.shipped(name)
    assert set(net.calibration) == tables
    for kind in tables:
        chance, right = net.calibration[kind]
        assert all(a <= b for a, b in zip(right, right[1:]))


def test_weights_that_do_not_fit_the_input_are_a_clear_error():
    net = ConvNet(_tiny_weights())
    x = np.zeros((2, 4, 4, 1), np.float32)                  # a 2x2 pooled picture: 2 channels x 4 + 1
    with pytest.raises(VisionError, match="retrain it"):
        net.probabilities(x, np.zeros((2, 1), np.float32))
    with pytest.raises(VisionError, match="1-channel pictures, not 3-channel"):
        net.probabilities(np.zeros((2, 2, 2, 3), np.float32), np.zeros((2, 1), np.float32))
    assert net.probabilities(np.zeros((2, 2, 2, 1), np.float32), np.zeros((2, 1), np.float32)).shape == (2, 2)


def test_a_prior_ratio_folded_into_the_weights_multiplies_the_chances():
    rng = np.random.default_rng(2)
    x, scalars = rng.normal(0, 1, (5, 2, 2, 1)).astype(np.float32), rng.normal(0, 1, (5, 1)).astype(np.float32)
    ratio = np.array([1.0, 2.0, 0.25])
    before = ConvNet(_tiny_weights(3)).probabilities(x, scalars)
    after = ConvNet(with_prior_ratio(_tiny_weights(3), ratio)).probabilities(x, scalars)
    want = before * ratio / (before * ratio).sum(axis=1, keepdims=True)
    assert after == pytest.approx(want, rel=1e-5)


def test_the_network_computes_its_convolutions_pools_and_dense_layers_exactly():
    rng = np.random.default_rng(7)
    weights = {"conv0.w": rng.normal(0, 0.4, (4, 3, 3, 3)), "conv0.b": rng.normal(0, 0.1, 4),
               "conv1.w": rng.normal(0, 0.4, (5, 4, 3, 3)), "conv1.b": rng.normal(0, 0.1, 5),
               "fc1.w": rng.normal(0, 0.3, (6, 5 * 3 * 2 + 2)), "fc1.b": rng.normal(0, 0.1, 6),
               "fc2.w": rng.normal(0, 0.3, (3, 6)), "fc2.b": rng.normal(0, 0.1, 3)}
    x = rng.normal(size=(4, 13, 11, 3)).astype(np.float32)        # odd sizes: 13x11 -> 6x5 -> 3x2
    scalars = rng.normal(size=(4, 2)).astype(np.float32)
    got = ConvNet(weights).probabilities(x, scalars)
    assert got == pytest.approx(reference_chances(weights, x.transpose(0, 3, 1, 2), scalars), abs=1e-5)


def test_pictures_convolved_once_are_weighed_with_other_numbers_as_if_read_afresh():
    """vision.tiles reads the same cells' pictures again with other tile colours: the convolutions
    kept from the first read give exactly the chances a whole new read would."""
    net = ConvNet.shipped("tile_net")
    rng = np.random.default_rng(9)
    x = rng.normal(size=(6, 32, 32, net.channels)).astype(np.float32)
    convolved = net.convolved(x)
    for _ in range(2):
        scalars = rng.normal(size=(6, len(net.dense[0][0]) - convolved.shape[1])).astype(np.float32)
        assert np.array_equal(net.dense_probabilities(convolved, scalars), net.probabilities(x, scalars))
    assert net.dense_probabilities(net.convolved(x[:0]), np.zeros((0, 3), np.float32)).shape == (0, 2)


def test_threads_reading_with_one_network_at_once_get_their_own_answers():
    net = ConvNet.shipped("stack_net")
    rng = np.random.default_rng(8)
    batches = [(rng.normal(size=(n, 64, 80, net.channels)).astype(np.float32),
                rng.normal(size=(n, len(net.dense[0][0]) - 64 * 4 * 5)).astype(np.float32)) for n in (3, 7, 5, 9)]
    serial = [net.probabilities(x, s) for x, s in batches]
    with ThreadPoolExecutor(4) as pool:
        for _ in range(3):
            parallel = list(pool.map(lambda b: net.probabilities(*b), batches))
            assert all(a == pytest.approx(b, abs=1e-6) for a, b in zip(serial, parallel))

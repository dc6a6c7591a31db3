"""The classifiers' container (vision/forest.py), the shipped models and the robust edge mean."""
import numpy as np
import pytest

from vision.errors import VisionError
from vision.forest import MODEL_DIR, Forest, calibration_table
from vision.stacks import robust_mean


def _toy(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 6)).astype(np.float32)
    y = (X[:, 0] * 3).astype(np.int32)            # class decided by the first feature alone
    return X, y


def test_a_trained_forest_learns_and_survives_saving(tmp_path):
    X, y = _toy()
    forest = Forest.train(X, y, classes=4, trees=30)
    path = tmp_path / "toy.yml.gz"
    forest.save(path)
    again = Forest.load(path, classes=4)
    Xt, yt = _toy(200, seed=1)
    p = again.probabilities(Xt)
    assert p.shape == (200, 4)
    assert np.allclose(p.sum(axis=1), 1.0)
    assert (p[:, 3] == 0).all()                    # a class never seen gets no votes
    assert (np.argmax(p, axis=1) == yt).mean() > 0.9
    assert np.allclose(p, forest.probabilities(Xt))


def test_a_missing_model_is_a_clear_error(tmp_path):
    with pytest.raises(VisionError, match="tools/train_cells.py"):
        Forest.load(tmp_path / "none.yml.gz", classes=2)


def test_features_of_the_wrong_length_are_refused():
    X, y = _toy()
    forest = Forest.train(X, y, classes=3, trees=5)
    with pytest.raises(VisionError, match="expects 6 features, got 5"):
        forest.probabilities(X[:, :5])


@pytest.mark.parametrize("name, classes", [("tiles", 2)])
def test_the_shipped_models_load(name, classes):
    forest = Forest.shipped(name, classes)
    assert (MODEL_DIR / f"{name}.yml.gz").is_file()
    assert forest.trees.isTrained() and forest.trees.getVarCount() > 10


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


def test_confidence_is_how_often_such_reads_were_right(tmp_path):
    rng = np.random.default_rng(5)
    share = rng.uniform(0.5, 1.0, 4000)
    right = rng.random(4000) < share ** 3                  # true accuracy share**3, below the share
    table = calibration_table(share, right.astype(float))
    assert all(a <= b for a, b in zip(table[1], table[1][1:]))          # never decreasing
    X, y = _toy()
    forest = Forest.train(X, y, classes=4, trees=5)
    forest.calibration = table
    forest.save(tmp_path / "toy.yml.gz")
    again = Forest.load(tmp_path / "toy.yml.gz", classes=4)
    for s in (0.6, 0.8, 0.95):
        assert again.confidence(s) == pytest.approx(s ** 3, abs=0.06)
    assert Forest.train(X, y, classes=4, trees=5).confidence(0.7) == 0.7      # uncalibrated: the share

"""tools/train_stack_net.py: the training crops fit in memory and are trained on as the pipeline cuts them.

PyTorch is a developer-only tool (tools/requirements-train.txt): without it these tests are skipped."""
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools"))
import train_stack_net  # noqa: E402
from vision.stack_net import CROP_H, CROP_W, network_input  # noqa: E402


def photos(n_photos=3, crops_each=4, seed=0):
    rng = np.random.default_rng(seed)
    lab = lambda: np.stack([rng.uniform(0, 100, (crops_each, CROP_H, CROP_W)),
                            rng.uniform(-40, 40, (crops_each, CROP_H, CROP_W)),
                            rng.uniform(-40, 40, (crops_each, CROP_H, CROP_W))], -1).astype(np.float16)
    return [(f"set/p{k}.jpg", {"crops": lab()}) for k in range(n_photos)]


def test_the_inputs_are_kept_at_half_the_memory_and_match_what_the_pipeline_gives():
    given = photos()
    expected = np.concatenate([network_input(p["crops"]).transpose(0, 3, 1, 2) for _, p in given])
    x = train_stack_net.network_inputs(given)
    assert x.dtype == np.float16 and x.nbytes == expected.size * 2
    np.testing.assert_allclose(x.astype(np.float32), expected, rtol=2e-3, atol=2e-3)
    assert all(p["crops"] is None for _, p in given)      # each photo's crops dropped once made


def test_a_batch_is_trained_in_single_precision_with_its_scalars_untouched():
    x = train_stack_net.network_inputs(photos())
    scalars = np.ones((len(x), 4), np.float32)
    xb, sb = train_stack_net.augmented(x, scalars, np.random.default_rng(1))
    assert xb.dtype == np.float32 and xb.shape == x.shape
    assert np.abs(sb[:, 2]).tolist() == [1.0] * len(x) and scalars.tolist() == np.ones((len(x), 4)).tolist()

"""tools/convnet_torch.py: a training cut short goes on from its checkpoint as if never stopped.

PyTorch is a developer-only tool (tools/requirements-train.txt): without it these tests are skipped."""
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools"))
import convnet_torch  # noqa: E402


class Killed(Exception):
    """What the end of a session does to a training, here at a chosen batch."""


def examples(n=96, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 2, 8, 8)).astype(np.float32)
    labels = (x[:, 0].mean(axis=(1, 2)) > 0).astype(np.int64)
    return x, np.zeros((n, 1), np.float32), labels


def small_net():
    return convnet_torch.ConvNetTorch(2, 8, 8, 1, 2, channels=(4, 8), hidden=8)


def augment_killed_at(batch):
    calls = []

    def augment(x, scalars, rng):
        calls.append(1)
        if len(calls) == batch:
            raise Killed
        return x + rng.normal(scale=0.1, size=x.shape).astype(np.float32), scalars
    return augment


def weights(net):
    return {k: v.detach().numpy().copy() for k, v in net.state_dict().items()}


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_a_training_killed_mid_epoch_resumes_to_the_same_network(tmp_path):
    x, scalars, labels = examples()
    whole = convnet_torch.train(small_net, x, scalars, labels, epochs=4, seed=3, augment=augment_killed_at(None),
                                batch=16)
    checkpoint = tmp_path / "net-final.pt"
    with pytest.raises(Killed):          # 6 batches an epoch: killed in the third epoch
        convnet_torch.train(small_net, x, scalars, labels, epochs=4, seed=3, augment=augment_killed_at(15),
                            batch=16, checkpoint=checkpoint)
    assert torch.load(checkpoint, weights_only=False)["epoch"] == 2
    told = []
    resumed = convnet_torch.train(small_net, x, scalars, labels, epochs=4, seed=3, augment=augment_killed_at(None),
                                  batch=16, checkpoint=checkpoint, log=told.append)
    assert told[0] == f"    resumed from {checkpoint} after epoch 2"
    assert [m.split(":")[0] for m in told[1:]] == ["    epoch 3/4", "    epoch 4/4"]
    for name, value in weights(whole).items():
        assert np.array_equal(weights(resumed)[name], value), name


def test_a_finished_training_is_read_back_without_training_again(tmp_path):
    x, scalars, labels = examples()
    checkpoint = tmp_path / "net-final.pt"
    first = convnet_torch.train(small_net, x, scalars, labels, epochs=2, seed=1, augment=augment_killed_at(None),
                                batch=16, checkpoint=checkpoint)
    again = convnet_torch.train(small_net, x, scalars, labels, epochs=2, seed=1, augment=augment_killed_at(1),
                                batch=16, checkpoint=checkpoint)      # a batch would raise Killed
    for name, value in weights(first).items():
        assert np.array_equal(weights(again)[name], value), name


def test_the_checkpoint_of_another_training_is_refused(tmp_path):
    x, scalars, labels = examples()
    checkpoint = tmp_path / "net-final.pt"
    convnet_torch.train(small_net, x, scalars, labels, epochs=1, seed=1, augment=augment_killed_at(None),
                        batch=16, checkpoint=checkpoint)
    with pytest.raises(SystemExit, match="checkpoint of another training"):
        convnet_torch.train(small_net, x, scalars, 1 - labels, epochs=1, seed=1, augment=augment_killed_at(None),
                            batch=16, checkpoint=checkpoint)
    with pytest.raises(SystemExit, match="checkpoint of another training"):
        convnet_torch.train(small_net, x, scalars, labels, epochs=3, seed=1, augment=augment_killed_at(None),
                            batch=16, checkpoint=checkpoint)
    with pytest.raises(SystemExit, match="checkpoint of another training"):   # crops cut by changed code
        convnet_torch.train(small_net, x * 0.5, scalars, labels, epochs=1, seed=1, augment=augment_killed_at(None),
                            batch=16, checkpoint=checkpoint)


def test_each_fold_and_the_final_training_has_its_own_checkpoint(tmp_path):
    assert convnet_torch.checkpoint_file(tmp_path, "stack_net", "fold2of3") == tmp_path / "stack_net-fold2of3.pt"
    assert convnet_torch.checkpoint_file(None, "stack_net", "final") is None


def test_a_fine_tuning_starts_from_the_written_network_exactly():
    x, scalars, labels = examples()
    scalars = np.random.default_rng(1).normal(3.0, 2.0, (len(x), 1)).astype(np.float32)
    mean, scale = scalars.mean(axis=0), scalars.std(axis=0)
    standard = (scalars - mean) / scale
    trained = convnet_torch.train(small_net, x, standard, labels, epochs=2, seed=1, augment=augment_killed_at(None),
                                  batch=16)
    written = trained.numpy_weights(mean, scale)
    again = small_net()
    again.start_from(convnet_torch.scalars_standardised(written, mean, scale))
    again.eval()
    assert np.allclose(convnet_torch.chances(again, x, standard), convnet_torch.chances(trained, x, standard),
                       atol=1e-5)


def test_a_fine_tuning_moves_the_network_and_keeps_its_batch_norms_the_identity():
    x, scalars, labels = examples()
    start = convnet_torch.train(small_net, x, scalars, 1 - labels, epochs=2, seed=1,
                                augment=augment_killed_at(None), batch=16).numpy_weights()
    tuned = convnet_torch.train(small_net, x, scalars, labels, epochs=3, seed=1, augment=augment_killed_at(None),
                                batch=16, start=start)
    for bn in tuned.bns:
        assert torch.equal(bn.running_mean, torch.zeros_like(bn.running_mean))
        assert torch.allclose(bn.running_var, torch.full_like(bn.running_var, 1 - bn.eps))
    before = small_net()
    before.start_from(start)
    before.eval()
    right = lambda net: (convnet_torch.chances(net, x, scalars).argmax(axis=1) == labels).mean()
    assert right(tuned) > right(before)


def test_the_checkpoint_of_a_fine_tuning_from_other_weights_is_refused(tmp_path):
    x, scalars, labels = examples()
    checkpoint = tmp_path / "net-final.pt"
    start = small_net().numpy_weights()
    convnet_torch.train(small_net, x, scalars, labels, epochs=1, seed=1, augment=augment_killed_at(None),
                        batch=16, checkpoint=checkpoint, start=start)
    with pytest.raises(SystemExit, match="checkpoint of another training"):
        convnet_torch.train(small_net, x, scalars, labels, epochs=1, seed=1, augment=augment_killed_at(None),
                            batch=16, checkpoint=checkpoint)

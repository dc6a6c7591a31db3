"""vision.convnet.ConvNet's layers in PyTorch, with batch norms while training, and the training
loop the stack and tile networks share (tools/train_stack_net.py, tools/train_tile_net.py).
PyTorch is a developer-only tool: tools/requirements-train.txt."""
from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from vision.convnet import with_prior_ratio


class ConvNetTorch(nn.Module):
    """3x3 convolutions (batch norm, ReLU, 2x2 max-pool), a dense layer fed also with `scalars`
    numbers, and `outputs` classes."""

    def __init__(self, in_channels: int, height: int, width: int, scalars: int, outputs: int,
                 channels=(16, 32, 64, 64), hidden=96):
        super().__init__()
        chans = (in_channels,) + tuple(channels)
        self.convs = nn.ModuleList(nn.Conv2d(a, b, 3, padding=1) for a, b in zip(chans, chans[1:]))
        self.bns = nn.ModuleList(nn.BatchNorm2d(b) for b in channels)
        side = (height >> len(channels)) * (width >> len(channels))
        self.fc1 = nn.Linear(channels[-1] * side + scalars, hidden)
        self.fc2 = nn.Linear(hidden, outputs)
        self.drop = nn.Dropout(0.3)

    def forward(self, x, scalars):
        for conv, bn in zip(self.convs, self.bns):
            x = F.max_pool2d(F.relu(bn(conv(x))), 2)
        x = torch.cat([x.flatten(1), scalars], 1)
        return self.fc2(self.drop(F.relu(self.fc1(x))))

    def numpy_weights(self, scalar_mean=None, scalar_scale=None) -> dict:
        """The weights vision.convnet.ConvNet reads, each batch norm folded into its convolution;
        a standardisation of the scalars the network was trained on ((s - mean) / scale) folded
        into the dense layer, so that it takes them as they are."""
        out = {}
        with torch.no_grad():
            for k, (conv, bn) in enumerate(zip(self.convs, self.bns)):
                gain = bn.weight / torch.sqrt(bn.running_var + bn.eps)
                out[f"conv{k}.w"] = (conv.weight * gain[:, None, None, None]).numpy()
                out[f"conv{k}.b"] = ((conv.bias - bn.running_mean) * gain + bn.bias).numpy()
            for j, fc in ((1, self.fc1), (2, self.fc2)):
                out[f"fc{j}.w"], out[f"fc{j}.b"] = fc.weight.numpy().copy(), fc.bias.numpy().copy()
        if scalar_mean is not None:
            n = len(scalar_mean)
            w = out["fc1.w"]
            tail = w[:, -n:] / np.asarray(scalar_scale, np.float32)
            out["fc1.b"] = out["fc1.b"] - tail @ np.asarray(scalar_mean, np.float32)
            out["fc1.w"] = np.concatenate([w[:, :-n], tail], axis=1)
        return out

    def start_from(self, weights: dict) -> None:
        """Take the weights of a trained network as numpy_weights wrote them (for scalars standardised
        as this training does: scalars_standardised): each batch norm becomes the identity, its
        convolution holding what it had folded in. The network answers as that one did, and
        fine-tuned with its batch norms in eval mode (train) stays such a network."""
        with torch.no_grad():
            for k, (conv, bn) in enumerate(zip(self.convs, self.bns)):
                conv.weight.copy_(torch.from_numpy(np.asarray(weights[f"conv{k}.w"], np.float32)))
                conv.bias.copy_(torch.from_numpy(np.asarray(weights[f"conv{k}.b"], np.float32)))
                bn.weight.fill_(1.0)
                bn.bias.zero_()
                bn.running_mean.zero_()
                bn.running_var.fill_(1.0 - bn.eps)
            for j, fc in ((1, self.fc1), (2, self.fc2)):
                fc.weight.copy_(torch.from_numpy(np.asarray(weights[f"fc{j}.w"], np.float32)))
                fc.bias.copy_(torch.from_numpy(np.asarray(weights[f"fc{j}.b"], np.float32)))


def scalars_standardised(weights: dict, scalar_mean, scalar_scale) -> dict:
    """Weights that take the scalars as they are (numpy_weights folded their standardisation in)
    turned back into weights that take them standardised, (s - mean) / scale."""
    out = dict(weights)
    n = len(scalar_mean)
    w = np.array(weights["fc1.w"], np.float32)
    out["fc1.b"] = np.asarray(weights["fc1.b"], np.float32) + w[:, -n:] @ np.asarray(scalar_mean, np.float32)
    w[:, -n:] *= np.asarray(scalar_scale, np.float32)
    out["fc1.w"] = w
    return out


FINE_TUNING_RATE = 5e-4     # the one-cycle's top learning rate from a trained network (3e-3 from scratch)


def train(make_net, x, scalars, labels, epochs: int, seed: int, augment, batch=64, log=None,
          checkpoint: Path | None = None, start: dict | None = None) -> nn.Module:
    """A network (`make_net()`) fitted to pictures x (N, C, H, W), their numbers and labels, each
    batch as `augment(x, scalars, rng)` shows it; AdamW with a one-cycle learning rate. `start`:
    begin from these weights (ConvNetTorch.start_from) at a lower rate, a fine-tuning; else from
    scratch.
    With a `checkpoint` file the whole training state is saved there after every epoch, and a
    training of the same labels, epochs and seed goes on from the last epoch saved: one cut short
    (the end of a session) loses at most an epoch. A checkpoint of another training is refused."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    net = make_net()
    if start is not None:
        net.start_from(start)
    top_rate = 3e-3 if start is None else FINE_TUNING_RATE
    opt = torch.optim.AdamW(net.parameters(), top_rate, weight_decay=1e-4)    # the schedule sets the rate
    steps = epochs * ((len(labels) + batch - 1) // batch)
    schedule = torch.optim.lr_scheduler.OneCycleLR(opt, top_rate, total_steps=steps)
    target = torch.from_numpy(np.asarray(labels, np.int64))
    identity = {"labels": hashlib.sha256(np.asarray(labels, np.int64).tobytes()).hexdigest(),
                "inputs": _inputs_digest(x, scalars), "epochs": epochs, "seed": seed, "batch": batch,
                "start": None if start is None else _weights_digest(start)}
    first_epoch = 0
    if checkpoint is not None and checkpoint.exists():
        saved = torch.load(checkpoint, weights_only=False)
        if saved["identity"] != identity:
            raise SystemExit(f"{checkpoint} is the checkpoint of another training (other photos or crops, epochs "
                             "or seed): remove it or choose another --checkpoints folder")
        net.load_state_dict(saved["net"])
        opt.load_state_dict(saved["opt"])
        schedule.load_state_dict(saved["schedule"])
        rng.bit_generator.state = saved["rng"]
        torch.set_rng_state(saved["torch_rng"])
        first_epoch = saved["epoch"]
        if log and first_epoch < epochs:
            log(f"    resumed from {checkpoint} after epoch {first_epoch}")
    for epoch in range(first_epoch, epochs):
        net.train()
        if start is not None:
            for bn in net.bns:
                bn.eval()
        t0, total = time.time(), 0.0
        order = rng.permutation(len(labels))
        for i in range(0, len(order), batch):
            b = order[i:i + batch]
            xb, sb = augment(x[b], scalars[b], rng)
            loss = F.cross_entropy(net(torch.from_numpy(xb), torch.from_numpy(sb)), target[b])
            opt.zero_grad()
            loss.backward()
            opt.step()
            schedule.step()
            total += loss.item() * len(b)
        if checkpoint is not None:
            _save_checkpoint(checkpoint, {"identity": identity, "epoch": epoch + 1, "net": net.state_dict(),
                                          "opt": opt.state_dict(), "schedule": schedule.state_dict(),
                                          "rng": rng.bit_generator.state, "torch_rng": torch.get_rng_state()})
        if log:
            log(f"    epoch {epoch + 1}/{epochs}: loss {total / len(labels):.4f} ({time.time() - t0:.0f} s)")
    return net.eval()


def _inputs_digest(x, scalars) -> str:
    """A digest of the inputs' shape and of about a thousand of them, all their scalars: crops cut
    by other code, with the same labels, must not resume a checkpoint (hashing them all would take
    as long as an epoch)."""
    digest = hashlib.sha256(repr(np.shape(x)).encode())
    digest.update(np.ascontiguousarray(x[::max(1, len(x) // 1000)], np.float32).tobytes())
    digest.update(np.ascontiguousarray(scalars, np.float32).tobytes())
    return digest.hexdigest()


def _weights_digest(weights: dict) -> str:
    """A digest of a network's weights: a checkpoint of a fine-tuning from other weights is refused."""
    digest = hashlib.sha256()
    for key in sorted(weights):
        digest.update(key.encode())
        digest.update(np.ascontiguousarray(weights[key], np.float32).tobytes())
    return digest.hexdigest()


def _save_checkpoint(path: Path, state: dict) -> None:
    """Write `state` whole or not at all (a training killed while saving keeps the previous epoch's)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(path.name + ".part")
    torch.save(state, part)
    os.replace(part, path)


def checkpoint_file(checkpoints: Path | None, name: str, training: str) -> Path | None:
    """Where the training `training` ("fold1of3", "final") of the network `name` keeps its
    checkpoint in the folder `checkpoints` (None: no checkpoints)."""
    return None if checkpoints is None else checkpoints / f"{name}-{training}.pt"


def chances(net: nn.Module, x, scalars) -> np.ndarray:
    """(N, outputs) softmax chances of a trained network."""
    with torch.no_grad():
        return np.concatenate([torch.softmax(net(torch.from_numpy(np.asarray(x[i:i + 256], np.float32)), torch.from_numpy(scalars[i:i + 256])), 1).numpy()
                               for i in range(0, len(x), 256)])


def out_of_fold_chances(make_net, x, scalars, labels, group, folds: int, epochs: int, augment,
                        checkpoints: Path | None = None, name: str = "net", start: dict | None = None) -> np.ndarray:
    """(N, outputs) chances of each sample from a network trained without its photo's fold (the
    photos `group` dealt at random into `folds` folds), from `start` if given (train); each fold's
    training checkpointed in `checkpoints` (checkpoint_file) if given."""
    fold = np.random.default_rng(0).permutation(group.max() + 1)[group] % folds
    p = None
    for k in range(folds):
        print(f"  fold {k + 1}/{folds}", flush=True)
        net = train(make_net, x[fold != k], scalars[fold != k], labels[fold != k], epochs, seed=k, augment=augment,
                    checkpoint=checkpoint_file(checkpoints, name, f"fold{k + 1}of{folds}"), start=start)
        got = chances(net, x[fold == k], scalars[fold == k])
        if p is None:
            p = np.zeros((len(labels), got.shape[1]))
        p[fold == k] = got
    return p


def train_and_write(make_net, x, scalars, labels, epochs: int, seed: int, augment, out_dir: Path, name: str,
                    calibration: dict, scalar_mean=None, scalar_scale=None, prior_ratio=None,
                    checkpoints: Path | None = None, start: dict | None = None) -> None:
    """Train the network on everything and write what vision loads: OUT_DIR/NAME.npz (see
    ConvNetTorch.numpy_weights) and OUT_DIR/NAME.calibration.json (the tables `calibration`).
    `prior_ratio` (per output) multiplies the chances the network gives (vision.convnet.with_prior_ratio).
    The training starts from `start` if given (train) and is checkpointed in `checkpoints`
    (checkpoint_file) if given."""
    print("  training on everything", flush=True)
    net = train(make_net, x, scalars, labels, epochs, seed=seed, augment=augment, log=lambda m: print(m, flush=True),
                checkpoint=checkpoint_file(checkpoints, name, "final"), start=start)
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"{name}.npz"
    weights = net.numpy_weights(scalar_mean, scalar_scale)
    if prior_ratio is not None:
        weights = with_prior_ratio(weights, prior_ratio)
    np.savez_compressed(out, **weights)
    (out_dir / f"{name}.calibration.json").write_text(json.dumps(
        {k: {"chance": [round(v, 4) for v in a], "right": [round(v, 4) for v in b]} for k, (a, b) in calibration.items()}) + "\n")
    print(f"model -> {out} ({out.stat().st_size // 1024} KiB)")

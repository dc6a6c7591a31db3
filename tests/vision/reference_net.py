"""What vision.convnet.ConvNet computes, written out loop by loop, for the tests to check it against."""
import numpy as np


def reference_chances(weights, x, scalars):
    """The network of `weights` on pictures `x` (NCHW, as PyTorch trains it) and their `scalars`:
    3x3 convolutions (zero padding), ReLU, 2x2 max-pools that drop an odd last row or column, then
    the dense layers on the channel-major flattening and the scalars."""
    k = 0
    while f"conv{k}.w" in weights:
        w, b = weights[f"conv{k}.w"], weights[f"conv{k}.b"]
        n, c, h, wd = x.shape
        padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
        y = np.zeros((n, len(w), h, wd))
        for o in range(len(w)):
            for dy in range(3):
                for dx in range(3):
                    y[:, o] += np.einsum("nchw,c->nhw", padded[:, :, dy:dy + h, dx:dx + wd], w[o, :, dy, dx])
            y[:, o] += b[o]
        y = np.maximum(y, 0)[:, :, :h // 2 * 2, :wd // 2 * 2]
        x = y.reshape(n, len(w), h // 2, 2, wd // 2, 2).max(axis=(3, 5))
        k += 1
    x = np.concatenate([x.reshape(len(x), -1), scalars], axis=1)
    hidden = np.maximum(x @ weights["fc1.w"].T + weights["fc1.b"], 0)
    logits = hidden @ weights["fc2.w"].T + weights["fc2.b"]
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)

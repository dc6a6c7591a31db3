"""A small convolutional network that looks at each candidate cell's stack as a picture.

Every cell is cut out of the working image by the same similarity transform (stack_crop): the
cell's centre at the stack's base lands at a fixed point, the disc's diameter across the view
becomes DISC_PX pixels, and up is the way a stack would rise from there. Whatever the tilt and
the stack's place in the photo, a stack of the same height then looks alike, which is what a
network trained on a few thousand rendered stacks needs. It returns the chances of no stack and of
each height 1..MAX_READ, from which read_stacks decides. Where it is not sure, two more networks
trained on other photos give their chances too (stack_chances).

The weights (vision/models/stack_net*.npz) are trained by tools/train_stack_net.py with PyTorch, a
developer-only tool; here they run in OpenCV and NumPy (vision/convnet.py).
"""
from __future__ import annotations

import cv2
import numpy as np

from .convnet import ConvNet, scaled_lab

CROP_W, CROP_H = 64, 80           # pixels of a crop
DISC_PX = 32                      # a disc's diameter in the crop
BASE_Y = 58                       # the row of the stack's base centre (a tall stack rises above it)
CROP_SCALARS = 4                  # numbers given beside each crop (stack_crop)
SECOND_OPINIONS = ("stack_net_b", "stack_net_c")   # trained on other photos (BENCHMARKS.md, session 20)
SURE = 0.9                        # a chance of the stack (or none) and of its height at least this is sure
SHIFTED_FROM_TILT = 35.0          # degrees of the camera's tilt from which doubtful crops are also read moved


def stack_crop(lab: np.ndarray, geo, profile, cell, base_mm: float, toward: np.ndarray):
    """(crop, scalars): the Lab working image around a stack on `cell` standing at `base_mm`
    (CROP_H x CROP_W x 3, float32), and what the crop cannot show by itself: the camera's tilt
    (in units of 60 degrees), the crop's step per disc of height (up and across, in 5 px) and the
    base's height over the table (in tile thicknesses: 1 on a tile, 0 off the World).
    `toward`: the horizontal direction from the cell to the camera (mm, any length)."""
    r = profile.disc_diameter_mm / 2
    tw = toward / (np.linalg.norm(toward) + 1e-9)
    across = np.array([-tw[1], tw[0]])
    p = geo.project([cell] * 4, [base_mm, base_mm, base_mm, base_mm + profile.disc_thickness_mm],
                    np.array([[0.0, 0.0], across * r, tw * r, [0.0, 0.0]])) * geo.scale
    centre, side, near, rise = p[0], p[1] - p[0], p[2] - p[0], p[3] - p[0]
    up = np.array([side[1], -side[0]])
    if up @ near > 0:                 # up points away from the camera's side of the stack
        up = -up
    src = np.float32([centre, centre + side, centre + up])
    dst = np.float32([[CROP_W / 2, BASE_Y], [CROP_W / 2 + DISC_PX / 2, BASE_Y], [CROP_W / 2, BASE_Y - DISC_PX / 2]])
    M = cv2.getAffineTransform(src, dst)
    crop = cv2.warpAffine(lab, M, (CROP_W, CROP_H), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    step = M[:, :2] @ rise
    return crop, np.array([geo.camera.tilt_deg / 60, -step[1] / 5, step[0] / 5,
                           base_mm / profile.tile_thickness_mm + 1], np.float32)


def network_input(crops: np.ndarray) -> np.ndarray:
    """(N, H, W, 6) from Lab crops (N, H, W, 3): the colours as they are, and relative to the
    crop's median colour (the same stack under warmer or dimmer light)."""
    crops = np.asarray(crops, np.float32)
    if not len(crops):
        return np.zeros(crops.shape[:3] + (6,), np.float32)
    median = np.median(crops.reshape(len(crops), -1, 3), axis=1)[:, None, None, :]
    return np.concatenate([scaled_lab(crops), (crops - median) / 20.0], -1)


def stack_chances(net, x: np.ndarray, scalars: np.ndarray) -> np.ndarray:
    """(N, 1 + MAX_READ) chances of no stack and of each height for the network inputs `x`
    (network_input) and `scalars`: the stack network `net`'s where it is sure of the stack, or of
    no stack, and of the height (SURE); elsewhere the average of its chances and those of the
    SECOND_OPINIONS networks. A network's guesses where it cannot tell differ from another's, so
    the average gets more of those right. From SHIFTED_FROM_TILT up, a doubtful stack's chances are
    also averaged over its crop moved a row up and a row down (about a quarter of a disc's rise):
    there the stack's own place on its tile, a millimetre or two nearer or farther than the
    cell's centre, decides its height (BENCHMARKS.md, sessions 51 and 57)."""
    p = _with_second_opinions(net, x, scalars)
    steep = _doubtful(p) & (np.asarray(scalars)[:, 0] * 60 >= SHIFTED_FROM_TILT)
    if steep.any():
        moved = [_with_second_opinions(net, np.ascontiguousarray(np.roll(x[steep], rows, axis=1)), scalars[steep])
                 for rows in (-1, 1)]
        p = p.copy()
        p[steep] = np.mean([p[steep]] + moved, axis=0)
    return p


def _with_second_opinions(net, x: np.ndarray, scalars: np.ndarray) -> np.ndarray:
    p = net.probabilities(x, scalars)
    if not len(p):
        return p
    doubtful = _doubtful(p)
    if doubtful.any():
        opinions = [p[doubtful]] + [ConvNet.shipped(name).probabilities(x[doubtful], scalars[doubtful])
                                    for name in SECOND_OPINIONS]
        p = p.copy()
        p[doubtful] = np.mean(opinions, axis=0)
    return p


def _doubtful(p: np.ndarray) -> np.ndarray:
    """Rows of chances not SURE of no stack, nor of a stack and its height."""
    height_share = p[:, 1:].max(axis=1) / np.maximum(p[:, 1:].sum(axis=1), 1e-9)
    return ~((p[:, 0] >= SURE) | ((p[:, 0] <= 1 - SURE) & (height_share >= SURE)))

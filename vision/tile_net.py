"""What the tile network sees of a cell: the table plane around it, seen from straight above.

Every cell is cut out of the working image by the homography of its lattice (tile_input): the
cell's centre lands at the crop's centre and a tile's flat-to-flat width becomes TILE_PX / SPAN
pixels, whatever the tilt. Beside the colours (as they are, and relative to this photo's table
colour) a channel says which pixels the stacks' silhouettes hide. Two networks (vision/convnet.py,
weights vision/models/tile_net.npz and tile_net_worn.npz trained by tools/train_tile_net.py, the
second also on photos worn as real cameras wear them, then on checked tablecloths) weigh that
picture and the cell's tile evidence (vision.tiles.tile_evidence) into the chance of a tile there
(vision.tiles.tile_chances).
"""
from __future__ import annotations

import cv2
import numpy as np

from .convnet import scaled_lab
from .geometry import _apply, sample_image
from .hexgrid import cells_to_plane

TILE_PX = 32                      # pixels of a crop's side
SPAN = 1.6                        # lattice units (tile widths) a crop's side covers
CHANNELS = 7                      # Lab, Lab relative to the table, hidden


def tile_input(colours, geo, cells, hidden: np.ndarray) -> np.ndarray:
    """(N, TILE_PX, TILE_PX, CHANNELS) float32: the working image around each cell, resampled on
    the table plane (rows south, columns east), as the tile network takes it."""
    cells = list(cells)
    if not cells:
        return np.zeros((0, TILE_PX, TILE_PX, CHANNELS), np.float32)
    grid = (np.arange(TILE_PX) + 0.5) / TILE_PX * SPAN - SPAN / 2
    gx, gy = np.meshgrid(grid, grid)
    pts = cells_to_plane(cells)[:, None, :] + np.stack([gx.ravel(), gy.ravel()], 1)[None]
    pix = _apply(geo.plane_to_work, pts.reshape(-1, 2))
    lab = sample_image(colours.lab, pix[:, 0], pix[:, 1], border_value=None)
    shade = sample_image(hidden, pix[:, 0], pix[:, 1], cv2.INTER_NEAREST, border_value=255)
    lab = lab.reshape(len(cells), TILE_PX, TILE_PX, 3)
    shade = (shade.reshape(len(cells), TILE_PX, TILE_PX, 1) > 0).astype(np.float32)
    table = np.asarray(colours.tables[0].mean, np.float32)
    return np.concatenate([scaled_lab(lab), (lab - table) / 20.0, shade], -1)

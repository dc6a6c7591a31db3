"""Pointy-topped hex lattice in axial coordinates, in units of the tile pitch (centre spacing = 1).

>>> cell_to_plane((1, 0))
(1.0, 0.0)
>>> plane_to_cell(0.52, 0.85)
(0, 1)
"""
from __future__ import annotations

import math

import numpy as np
from rules import neighbours

SQRT3 = math.sqrt(3.0)
CIRCUMRADIUS = 1.0 / SQRT3       # centre to corner for flat-to-flat width 1


def cell_to_plane(cell) -> tuple[float, float]:
    q, r = cell
    return (q + r / 2.0, r * SQRT3 / 2.0)


def cells_to_plane(cells) -> np.ndarray:
    c = np.asarray(cells, dtype=float).reshape(-1, 2)
    return np.stack([c[:, 0] + c[:, 1] / 2.0, c[:, 1] * SQRT3 / 2.0], axis=1)


def plane_to_cells(xy) -> np.ndarray:
    """Nearest axial cells (N,2 ints) of plane points (N,2)."""
    xy = np.asarray(xy, dtype=float).reshape(-1, 2)
    r = xy[:, 1] * 2.0 / SQRT3
    q = xy[:, 0] - r / 2.0
    s = -q - r
    rq, rr, rs = np.round(q), np.round(r), np.round(s)
    dq, dr, ds = abs(rq - q), abs(rr - r), abs(rs - s)
    fix_q = (dq > dr) & (dq > ds)
    fix_r = ~fix_q & (dr > ds)
    rq = np.where(fix_q, -rr - rs, rq)
    rr = np.where(fix_r, -rq - rs, rr)
    return np.stack([rq, rr], axis=1).astype(int)


def distinct_cells(cells) -> np.ndarray:
    """The distinct cells (rows) of an (N, 2) int array, sorted by q then r, as np.unique(axis=0)
    gives them but faster: each cell is one 64-bit key. Coordinates beyond ±2**30 (points near a
    photo's horizon) are clipped there.

    >>> distinct_cells([[1, 0], [0, 2], [1, 0], [0, -1]]).tolist()
    [[0, -1], [0, 2], [1, 0]]
    """
    c = np.clip(np.asarray(cells, dtype=np.int64).reshape(-1, 2), -2 ** 30, 2 ** 30)
    _, first = np.unique(c[:, 0] * 2 ** 32 + c[:, 1], return_index=True)
    return c[first]


def plane_to_cell(x, y) -> tuple[int, int]:
    q, r = plane_to_cells([[x, y]])[0]
    return int(q), int(r)


def hexagon(cell, scale=1.0) -> np.ndarray:
    """Corners (6,2) of a cell's hexagon in plane units; scale 1 = the full cell."""
    cx, cy = cell_to_plane(cell)
    ang = np.radians(30.0 + 60.0 * np.arange(6))
    rad = CIRCUMRADIUS * scale
    return np.stack([cx + rad * np.cos(ang), cy + rad * np.sin(ang)], axis=1)


def ring(cells) -> set:
    """The cells next to `cells` that are not in it."""
    cells = set(cells)
    return {n for c in cells for n in neighbours(c)} - cells


def components(cells) -> list[set]:
    """Connected groups of cells, largest first."""
    left, groups = set(cells), []
    while left:
        seed = left.pop()
        group, todo = {seed}, [seed]
        while todo:
            for n in neighbours(todo.pop()):
                if n in left:
                    left.remove(n)
                    group.add(n)
                    todo.append(n)
        groups.append(group)
    return sorted(groups, key=len, reverse=True)

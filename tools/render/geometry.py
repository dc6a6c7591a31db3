"""Camera and lattice geometry of a render, in plain numpy (no bpy).

World frame: millimetres, origin at the nominal centre of cell (0, 0) on the table top, x toward E,
y toward north (NW/NE side), z up. Camera frame and pixels follow OpenCV: x right, y down, z forward;
the centre of the top-left pixel is (0, 0).
"""
from __future__ import annotations

import math

import numpy as np

SQRT3 = math.sqrt(3.0)


def cell_centre_mm(q: int, r: int, pitch_mm: float) -> tuple[float, float]:
    """Nominal table-plane centre of axial cell (q, r) for pointy-topped hexes of the given pitch.

    >>> cell_centre_mm(1, 0, 10.0)
    (10.0, 0.0)
    >>> [round(v, 3) for v in cell_centre_mm(0, 1, 10.0)]   # SE: right and down (south)
    [5.0, -8.66]
    """
    return pitch_mm * (q + r / 2.0), -pitch_mm * SQRT3 / 2.0 * r


def intrinsics(width: int, height: int, hfov_deg: float) -> np.ndarray:
    """Pinhole K for square pixels, principal point at the image centre, horizontal field of view."""
    fx = (width / 2.0) / math.tan(math.radians(hfov_deg) / 2.0)
    return np.array([[fx, 0.0, width / 2.0 - 0.5],
                     [0.0, fx, height / 2.0 - 0.5],
                     [0.0, 0.0, 1.0]])


def look_pose(target_mm, distance_mm: float, tilt_deg: float, azimuth_deg: float, roll_deg: float):
    """Camera centre and OpenCV rotation (world -> camera) of a camera `distance_mm` from `target_mm`.

    tilt: angle of the optical axis from straight down; azimuth: direction (from +x, counter-clockwise)
    in which the camera stands away from the target; roll: rotation about the optical axis.
    Returns (C, R) with x_cam = R @ (X - C).
    """
    th, ph, ro = (math.radians(a) for a in (tilt_deg, azimuth_deg, roll_deg))
    back = np.array([math.sin(th) * math.cos(ph), math.sin(th) * math.sin(ph), math.cos(th)])
    centre = np.asarray(target_mm, float) + distance_mm * back
    forward = -back
    up = np.array([-math.cos(th) * math.cos(ph), -math.cos(th) * math.sin(ph), math.sin(th)])
    right = np.cross(forward, up)
    right_r = math.cos(ro) * right + math.sin(ro) * up
    up_r = -math.sin(ro) * right + math.cos(ro) * up
    rotation = np.stack([right_r, -up_r, forward])
    return centre, rotation


def project(points_mm, K: np.ndarray, R: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Pixel coordinates (N, 2) of world points (N, 3)."""
    pts = np.atleast_2d(np.asarray(points_mm, float))
    cam = pts @ R.T + t
    uvw = cam @ K.T
    return uvw[:, :2] / uvw[:, 2:3]

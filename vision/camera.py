"""A pinhole camera over the table, recovered from the tile-top plane's homography.

World frame in millimetres: x east, y south on the tile tops, z = x cross y points *into* the
table, so a point h mm above the tile tops has z = -h.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Camera:
    K: np.ndarray                # 3x3 intrinsics (full-resolution pixels)
    R: np.ndarray                # 3x3 rotation world -> camera
    t: np.ndarray                # (3,) translation world -> camera
    focal_estimated: bool        # False when the focal length is a default (near-vertical views)

    def project(self, pts) -> np.ndarray:
        """Image pixels (N,2) of world points (N,3) in mm."""
        p = np.asarray(pts, dtype=float).reshape(-1, 3)
        cam = p @ self.R.T + self.t
        img = cam @ self.K.T
        return img[:, :2] / img[:, 2:3]

    @property
    def centre(self) -> np.ndarray:
        return -self.R.T @ self.t

    @property
    def tilt_deg(self) -> float:
        """Angle between the optical axis and the table's downward normal."""
        axis = self.R[2]                      # optical axis in world coordinates
        return float(np.degrees(np.arccos(np.clip(axis[2], -1.0, 1.0))))

    def plane_homography(self, z: float = 0.0) -> np.ndarray:
        """Homography from plane (x, y) at height coordinate z to image pixels."""
        return self.K @ np.column_stack([self.R[:, 0], self.R[:, 1], self.R[:, 2] * z + self.t])

    def pixel_to_plane(self, pix, z: float = 0.0) -> np.ndarray:
        Hinv = np.linalg.inv(self.plane_homography(z))
        p = np.column_stack([np.asarray(pix, float).reshape(-1, 2), np.ones(len(np.atleast_2d(pix)))])
        w = p @ Hinv.T
        return w[:, :2] / w[:, 2:3]


def look_at(position, target, focal_px, image_size, roll_deg=0.0) -> Camera:
    """A camera at `position` (mm) looking at `target`, image 'up' toward world -z (up)."""
    w, h = image_size
    pos, tgt = np.asarray(position, float), np.asarray(target, float)
    fwd = tgt - pos
    fwd /= np.linalg.norm(fwd)
    up_world = np.array([0.0, 0.0, -1.0])
    if abs(fwd @ up_world) > 0.999:
        up_world = np.array([0.0, -1.0, 0.0])
    right = np.cross(fwd, up_world)
    right /= np.linalg.norm(right)
    down = np.cross(fwd, right)
    R = np.stack([right, down, fwd])
    roll = np.radians(roll_deg)
    Rz = np.array([[np.cos(roll), -np.sin(roll), 0], [np.sin(roll), np.cos(roll), 0], [0, 0, 1]])
    R = Rz @ R
    K = np.array([[focal_px, 0, w / 2.0], [0, focal_px, h / 2.0], [0, 0, 1.0]])
    return Camera(K=K, R=R, t=-R @ pos, focal_estimated=True)


def focal_from_homography(H: np.ndarray, principal) -> float | None:
    """Focal length (px) implied by a plane homography with square pixels; None if degenerate.

    Zhang's two constraints (r1 . r2 = 0, |r1| = |r2|) solved for 1/f^2 in least squares, in
    coordinates scaled by the principal point's distance so that every term is of order one.
    """
    cx, cy = principal
    s = float(np.hypot(cx, cy))
    T = np.array([[1 / s, 0, -cx / s], [0, 1 / s, -cy / s], [0, 0, 1]])
    G = T @ H
    G = G / np.linalg.norm(G[:, :2])
    h1, h2 = G[:, 0], G[:, 1]
    a = np.array([h1[0] * h2[0] + h1[1] * h2[1], h1[0] ** 2 + h1[1] ** 2 - h2[0] ** 2 - h2[1] ** 2])
    b = np.array([h1[2] * h2[2], h1[2] ** 2 - h2[2] ** 2])
    denom = float(a @ a)
    if denom < 1e-12:
        return None
    w = -float(a @ b) / denom
    if w <= 0:
        return None
    return float(s / np.sqrt(w))


def camera_from_homography(H: np.ndarray, image_size, focal_px: float, estimated: bool) -> Camera:
    """Decompose a plane(mm)->image homography into a Camera (principal point at the centre)."""
    w, h = image_size
    principal = (w / 2.0, h / 2.0)
    K = np.array([[focal_px, 0, principal[0]], [0, focal_px, principal[1]], [0, 0, 1.0]])
    B = np.linalg.inv(K) @ H
    lam = 2.0 / (np.linalg.norm(B[:, 0]) + np.linalg.norm(B[:, 1]))
    if B[2, 2] * lam < 0:
        lam = -lam                              # the plane must lie in front of the camera
    r1, r2, t = B[:, 0] * lam, B[:, 1] * lam, B[:, 2] * lam
    Rm = np.column_stack([r1, r2, np.cross(r1, r2)])
    U, _, Vt = np.linalg.svd(Rm)
    Rm = U @ Vt
    if np.linalg.det(Rm) < 0:
        Rm = U @ np.diag([1, 1, -1]) @ Vt
    return Camera(K=K, R=Rm, t=t, focal_estimated=estimated)

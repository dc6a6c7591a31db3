"""Synthetic photos of the printed ChArUco board taken through a known, distorting lens.

Each photo is made by inverse mapping: every photo pixel is undistorted to a ray of the camera,
the ray meets the board's plane (z = 0 in board coordinates, mm, origin at the chessboard's
top-left corner, x right, y down: OpenCV's CharucoBoard object points), and that board point is
looked up in the image `board_image` prints (a homography from the undistorted rays, which are
computed once per camera). Outside the paper the photo is grey; the photos have a little noise.
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from calibration.camera import BoardSpec, board_image

SPEC = BoardSpec()
DPI = 127                        # 5 board-image pixels a mm: squares and margin fall on whole pixels
MARGIN_MM = 10.0
PX_PER_MM = DPI / 25.4
BACKGROUND = 110                 # the table around the paper
EDGE_PX = 20                     # a corner closer than this to the frame's edge does not count as seen

SIZE = (1280, 960)
K = np.array([[1000.0, 0.0, 652.0], [0.0, 1004.0, 470.0], [0.0, 0.0, 1.0]])
DISTORTION = np.array([-0.25, 0.08, 0.0, 0.0, 0.0])      # barrel: a webcam's or a wide phone lens's


@dataclass
class View:
    photo: np.ndarray            # greyscale uint8, SIZE
    rvec: np.ndarray             # board -> camera
    tvec: np.ndarray             # mm


class Camera:
    """A camera of intrinsics `K` and `distortion` taking photos of `size` (width, height)."""

    def __init__(self, K=K, distortion=DISTORTION, size=SIZE):
        self.K, self.distortion, self.size = np.asarray(K, float), np.asarray(distortion, float), size
        w, h = size
        u, v = np.meshgrid(np.arange(w, dtype=np.float64), np.arange(h, dtype=np.float64))
        pixels = np.stack([u, v], -1).reshape(-1, 1, 2)
        criteria = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 50, 1e-10)
        rays = cv2.undistortPointsIter(pixels, self.K, self.distortion, None, None, criteria)
        self.ray_x, self.ray_y = rays[:, 0, 0].reshape(h, w), rays[:, 0, 1].reshape(h, w)   # z = 1
        self.board = cv2.GaussianBlur(board_image(SPEC, dpi=DPI, margin_mm=MARGIN_MM), (0, 0), 0.8)

    def photo(self, rvec, tvec, rng=None) -> np.ndarray:
        """The board seen from pose (rvec, tvec): board point X (mm) is at R X + t in the camera."""
        R, _ = cv2.Rodrigues(np.asarray(rvec, float))
        board_to_ray = np.column_stack([R[:, 0], R[:, 1], np.asarray(tvec, float).ravel()])   # z = 0 plane
        to_board_px = np.array([[PX_PER_MM, 0, MARGIN_MM * PX_PER_MM - 0.5],    # pixel centres at integers
                                [0, PX_PER_MM, MARGIN_MM * PX_PER_MM - 0.5], [0, 0, 1]])
        H = to_board_px @ np.linalg.inv(board_to_ray)
        x, y = self.ray_x, self.ray_y
        scale = H[2, 0] * x + H[2, 1] * y + H[2, 2]
        scale[scale <= 0] = np.nan                    # rays beyond the board plane's horizon
        map_x = ((H[0, 0] * x + H[0, 1] * y + H[0, 2]) / scale).astype(np.float32)
        map_y = ((H[1, 0] * x + H[1, 1] * y + H[1, 2]) / scale).astype(np.float32)
        map_x[np.isnan(map_x)] = -1e6
        photo = cv2.remap(self.board, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT,
                          borderValue=BACKGROUND)
        if rng is not None:
            noise = rng.normal(0.0, 2.0, photo.shape)
            photo = np.clip(photo + noise, 0, 255).astype(np.uint8)
        return photo

    def project(self, points_mm, rvec, tvec) -> np.ndarray:
        """Photo pixels (N, 2) of board points (N, 2) in mm."""
        p = np.column_stack([np.asarray(points_mm, float), np.zeros(len(points_mm))])
        out, _ = cv2.projectPoints(p, np.asarray(rvec, float), np.asarray(tvec, float), self.K, self.distortion)
        return out.reshape(-1, 2)


def random_views(camera: Camera, count: int, seed: int = 0, min_corners: int = 12) -> list:
    """`count` photos of the board 300-600 mm away, tilted 0-45 degrees about a random axis in its
    plane, its centre anywhere in the frame and at least `min_corners` of the chessboard's inner
    corners inside it (the rest of the board may be cut off, as near a real frame's edges); seeded."""
    rng = np.random.default_rng(seed)
    inner_corners = SPEC.charuco_board().getChessboardCorners()[:, :2]
    width_mm, height_mm = SPEC.size_mm
    centre = np.array([width_mm / 2, height_mm / 2, 0.0])
    w, h = camera.size
    views = []
    while len(views) < count:
        axis_angle = rng.uniform(0, np.pi)
        tilt = np.radians(rng.uniform(0, 45))
        spin = rng.uniform(-0.3, 0.3)                 # the board turned a little in its own plane
        rvec = tilt * np.array([np.cos(axis_angle), np.sin(axis_angle), 0.0]) + np.array([0.0, 0.0, spin])
        R, _ = cv2.Rodrigues(rvec)
        target = rng.uniform([0, 0], [w, h])          # where the board's centre lands in the photo
        ray = np.append(cv2.undistortPoints(target.reshape(1, 1, 2), camera.K, camera.distortion).ravel(), 1.0)
        tvec = rng.uniform(300, 600) * ray - R @ centre
        corners = camera.project(inner_corners, rvec, tvec)
        in_frame = ((corners >= EDGE_PX) & (corners <= [w - EDGE_PX, h - EDGE_PX])).all(axis=1)
        if in_frame.sum() >= min_corners:
            views.append(View(camera.photo(rvec, tvec, rng), rvec, tvec))
    return views

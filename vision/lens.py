"""A camera's lens, measured once (`python -m calibration camera`): its intrinsics and distortion.

Vision reads every photo as a pinhole camera would have taken it: the hex lattice is fitted to
straight tile edges by a homography. A webcam's or a wide lens's barrel distortion bends those
edges (a World near the frame's edge drifts off its lattice), so a photo taken through a measured
lens is undistorted before anything else reads it. The file is `exxit-camera/1` JSON:

    {"format": "exxit-camera/1", "image_size": [W, H], "K": [[fx, 0, cx], [0, fy, cy], [0, 0, 1]],
     "distortion": [k1, k2, p1, p2, k3]}

(OpenCV's model and pixel convention), plus whatever the calibration reports about itself.

>>> lens = lens_from_json({"format": "exxit-camera/1", "image_size": [1600, 1200],
...     "K": [[1300, 0, 799.5], [0, 1300, 599.5], [0, 0, 1]], "distortion": [-0.25, 0.05, 0, 0, 0]})
>>> half = lens.scaled_to((800, 600))
>>> round(float(half.K[0, 0]), 1), round(float(half.K[0, 2]), 2)
(650.0, 399.5)
>>> straight = lens.undistort_points([[20.0, 30.0]])
>>> [round(float(v), 2) for v in lens.to_photo(straight)[0]]
[20.0, 30.0]
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import cv2
import numpy as np

from .errors import LensError
from .profile import read_json_file

FORMAT = "exxit-camera/1"
ASPECT_TOLERANCE = 0.01          # a photo of another size must keep the measured frame's shape
_ITERATIONS = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 40, 1e-6)


@dataclass(frozen=True, eq=False)
class Lens:
    K: np.ndarray                # 3x3 intrinsics, pixels of a photo of `image_size`
    distortion: np.ndarray       # OpenCV's (k1, k2, p1, p2[, k3[, k4, k5, k6]])
    image_size: tuple            # (width, height) the lens was measured at

    def scaled_to(self, size) -> "Lens":
        """The same lens for a photo of `size` (width, height): the camera's other resolution, or a
        photo resized on its way here. Raises LensError if the photo's shape is not the measured one
        (a cropped or rotated photo, or another camera)."""
        w, h = size
        mw, mh = self.image_size
        if (w, h) == (mw, mh):
            return self
        if abs((w / h) / (mw / mh) - 1) > ASPECT_TOLERANCE:
            raise LensError(f"the camera file was measured on {mw}x{mh} photos; this photo is {w}x{h}, "
                            "another shape (cropped, rotated or from another camera?)")
        s = w / mw
        K = self.K.copy()
        K[:2, :2] *= s
        K[:2, 2] = (K[:2, 2] + 0.5) * s - 0.5          # pixel centres at integer coordinates
        return Lens(K=K, distortion=self.distortion, image_size=(w, h))

    def undistort(self, image: np.ndarray) -> np.ndarray:
        """`image` (taken through this lens, of its size) as a pinhole camera with the same K sees it."""
        h, w = image.shape[:2]
        map_x, map_y = self._maps(w, h)
        return cv2.remap(image, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)

    @functools.lru_cache(maxsize=2)      # the working and the full image of one photo size
    def _maps(self, w: int, h: int) -> tuple:
        lens = self.scaled_to((w, h))
        return cv2.initUndistortRectifyMap(lens.K, lens.distortion, None, lens.K, (w, h), cv2.CV_16SC2)

    def to_photo(self, points) -> np.ndarray:
        """Photo pixels (N, 2) of points (N, 2) of the undistorted image."""
        p = np.asarray(points, np.float64).reshape(-1, 2)
        rays = np.column_stack([(p - self.K[:2, 2]) / np.diag(self.K)[:2], np.ones(len(p))])
        out, _ = cv2.projectPoints(rays, np.zeros(3), np.zeros(3), self.K, self.distortion)
        return out.reshape(-1, 2)

    def undistort_points(self, points) -> np.ndarray:
        """Undistorted-image pixels (N, 2) of photo pixels (N, 2)."""
        p = np.asarray(points, np.float64).reshape(-1, 1, 2)
        return cv2.undistortPointsIter(p, self.K, self.distortion, None, self.K, _ITERATIONS).reshape(-1, 2)

    def to_json(self, **report) -> dict:
        """The exxit-camera/1 document of this lens; `report` adds what the calibration measured."""
        return {"format": FORMAT, "image_size": list(self.image_size),
                "K": [[round(float(v), 4) for v in row] for row in self.K],
                "distortion": [round(float(v), 6) for v in self.distortion], **report}


def lens_from_json(obj) -> Lens:
    """Validate an `exxit-camera/1` document and build its Lens."""
    if not isinstance(obj, dict) or obj.get("format") != FORMAT:
        raise LensError(f"camera file: expected a JSON object with \"format\": \"{FORMAT}\"")
    size = obj.get("image_size")
    if (not isinstance(size, list) or len(size) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) and 16 <= v <= 100_000 for v in size)):
        raise LensError("camera file: image_size must be [width, height] in pixels")
    try:
        K = np.array(obj.get("K"), np.float64)
        dist = np.array(obj.get("distortion"), np.float64).ravel()
    except (TypeError, ValueError):
        raise LensError("camera file: K and distortion must be numbers") from None
    if K.shape != (3, 3) or not np.isfinite(K).all() or K[0, 0] <= 0 or K[1, 1] <= 0 or K[0, 1] != 0 \
            or not np.allclose(K[2], [0, 0, 1]) or K[1, 0] != 0:
        raise LensError("camera file: K must be [[fx, 0, cx], [0, fy, cy], [0, 0, 1]] with fx, fy > 0")
    if len(dist) not in (4, 5, 8) or not np.isfinite(dist).all() or np.abs(dist).max() > 1000:
        raise LensError("camera file: distortion must be OpenCV's 4, 5 or 8 coefficients (k1, k2, p1, p2[, k3 ...])")
    return Lens(K=K, distortion=dist, image_size=(size[0], size[1]))


def load_lens(source) -> Lens:
    """A Lens from an exxit-camera/1 file (path), a document (dict), or a Lens."""
    if isinstance(source, Lens):
        return source
    if isinstance(source, dict):
        return lens_from_json(source)
    return lens_from_json(read_json_file(source, LensError, "camera file"))

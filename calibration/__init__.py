"""Measure a physical EXXIT set, or a camera's lens, from photos.

`measure_set(photo)` learns the two colours (and which one plays White: the pair of touching tiles
of the opening diamond) and the tile thickness relative to the tile width; with a photo of
one stack of known height it also measures the disc thickness, for a set profile (`exxit-set/1`).
It uses vision's detectors; vision never imports calibration.

`board_image(BoardSpec())` is a ChArUco board to print; `measure_camera(photos)` measures the lens
(intrinsics and distortion) from photos of the printed board, for a camera file (`exxit-camera/1`)
vision undistorts photos with.
"""
from .camera import BoardSpec, board_image, measure_camera
from .profile import CalibrationError, measure_set

__all__ = ["measure_set", "measure_camera", "BoardSpec", "board_image", "CalibrationError"]

"""A camera's lens from photos of a printed ChArUco board (`python -m calibration camera`).

A ChArUco board is a chessboard whose white squares hold ArUco markers: each inner corner of the
chessboard is identified by its neighbouring markers, so a photo showing only part of the board
(tilted, near the frame's edge, where the distortion is) still says which corner is which. From
the corners found in photos taken from different angles, `cv2.calibrateCamera` measures the
intrinsics and the distortion, which `vision.lens.Lens` writes as an `exxit-camera/1` file.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import cv2
import numpy as np

from vision.errors import UnreadableImageError
from vision.lens import Lens
from vision.loading import decode_image, read_photo_bytes

from .profile import CalibrationError

MM_PER_INCH = 25.4
MIN_CORNERS = 6                  # ChArUco corners a photo must show to count as a view
MIN_VIEWS = 4
OUTLIER_FACTOR = 4               # a view whose reprojection error is over this many times the median ...
OUTLIER_FLOOR_PX = 1.0           # ... and over this is left out, and the lens measured again without it
GOOD_VIEWS = 10                  # fewer usable views than this: warn that the lens may be off
MAX_GOOD_RMS_PX = 1.0            # a reprojection error above this means a poor calibration
MIN_COVERAGE = 0.7               # the corners of all views together should span this much of each side
MAX_HALF_WINDOW = 10             # px, of the corner refinement's window
SUBPIXEL_CRITERIA = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 100, 1e-3)
SQUARES_RANGE = (3, 30)
DPI_RANGE = (50, 1200)
MAX_BOARD_PIXELS = 150_000_000   # a 1 m board at 300 dpi


@dataclass(frozen=True)
class BoardSpec:
    """A printed ChArUco board: `squares` (columns, rows) of chessboard squares of `square_mm`,
    ArUco markers of `marker_mm` from OpenCV's predefined `dictionary`. Raises CalibrationError
    on values no board can have."""
    squares: tuple = (7, 5)
    square_mm: float = 30.0
    marker_mm: float = 22.0
    dictionary: str = "DICT_5X5_100"

    def __post_init__(self):
        lo, hi = SQUARES_RANGE
        if (len(self.squares) != 2
                or not all(isinstance(n, (int, np.integer)) and lo <= n <= hi for n in self.squares)):
            raise CalibrationError(f"the board needs {lo} to {hi} squares each way; got {self.squares}")
        if not all(math.isfinite(size) and size > 0 for size in (self.square_mm, self.marker_mm)):
            raise CalibrationError("the square and marker sizes must be positive numbers (mm)")
        if self.marker_mm >= self.square_mm:
            raise CalibrationError(f"the markers ({self.marker_mm:g} mm) must be smaller than the squares "
                                   f"({self.square_mm:g} mm)")
        if not (self.dictionary.startswith("DICT_") and hasattr(cv2.aruco, self.dictionary)):
            raise CalibrationError(f"unknown ArUco dictionary {self.dictionary!r} (e.g. DICT_5X5_100, DICT_6X6_250)")
        needed, available = self.markers_needed, self._aruco_dictionary().bytesList.shape[0]
        if available < needed:
            raise CalibrationError(f"{self.dictionary} has {available} markers; a {self.squares[0]}x"
                                   f"{self.squares[1]} board needs {needed}")

    @property
    def markers_needed(self) -> int:
        """Markers on the board: one in every white square."""
        return self.squares[0] * self.squares[1] // 2

    @property
    def size_mm(self) -> tuple:
        """(width, height) of the chessboard, mm."""
        return self.squares[0] * self.square_mm, self.squares[1] * self.square_mm

    def _aruco_dictionary(self):
        return cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, self.dictionary))

    def charuco_board(self) -> cv2.aruco.CharucoBoard:
        """OpenCV's board, in mm: object points have their origin at the chessboard's top-left
        corner, x to the right, y down."""
        return cv2.aruco.CharucoBoard(tuple(int(n) for n in self.squares), float(self.square_mm),
                                      float(self.marker_mm), self._aruco_dictionary())

    def to_json(self) -> dict:
        return {"squares": [int(n) for n in self.squares], "square_mm": float(self.square_mm),
                "marker_mm": float(self.marker_mm), "dictionary": self.dictionary}


def board_image(spec: BoardSpec = BoardSpec(), dpi: int = 300, margin_mm: float = 10.0) -> np.ndarray:
    """The board to print, greyscale uint8, at real size: printed at `dpi` (100% scale) its squares
    measure `spec.square_mm`. A white margin of `margin_mm` surrounds the chessboard."""
    lo, hi = DPI_RANGE
    if not lo <= dpi <= hi:
        raise CalibrationError(f"the print resolution must be {lo} to {hi} dpi; got {dpi:g}")
    if margin_mm < 0:
        raise CalibrationError("the margin must not be negative")
    px_per_mm = dpi / MM_PER_INCH
    width_mm, height_mm = spec.size_mm
    margin_px = round(margin_mm * px_per_mm)
    size = (round(width_mm * px_per_mm) + 2 * margin_px, round(height_mm * px_per_mm) + 2 * margin_px)
    if size[0] * size[1] > MAX_BOARD_PIXELS:
        raise CalibrationError(f"a {width_mm:g} x {height_mm:g} mm board at {dpi:g} dpi is too large an image; "
                               "use a lower --dpi")
    return spec.charuco_board().generateImage(size, marginSize=margin_px)


@dataclass
class _View:
    """What one photo showed: its size and the board's corners found in it (object, image points)."""
    name: str
    size: tuple
    object_points: np.ndarray | None
    image_points: np.ndarray | None


def measure_camera(photos, spec: BoardSpec = BoardSpec()) -> tuple:
    """(the Lens, a report) measured from photos (paths or encoded bytes) of the printed board
    `spec`, all taken by one camera at one resolution. The report: "rms_px" (reprojection error),
    "views" (photos used: a photo that fits the others far worse than they fit each other is left
    out, one at a time), "photos", "board", "view_errors" (each used photo's "rms_px") and
    "warnings" (sentences about a calibration to redo or improve).
    Raises UnreadableImageError (naming the photo) or CalibrationError."""
    photos = list(photos)
    if not photos:
        raise CalibrationError("no photos of the board given")
    board = spec.charuco_board()
    detector = cv2.aruco.CharucoDetector(board)
    views = [_find_board(photo, _photo_name(photo, i), board, detector) for i, photo in enumerate(photos)]
    size = _common_size(views)
    used = [v for v in views if v.object_points is not None]
    if len(used) < MIN_VIEWS:
        raise CalibrationError(f"the board was found in {len(used)} of {len(views)} photo{_plural(views)}; "
                               f"at least {MIN_VIEWS} are needed (10-20 from different angles are best)")
    left_out = []
    while True:
        rms, K, distortion, rvecs, tvecs = cv2.calibrateCamera([v.object_points for v in used],
                                                               [v.image_points for v in used], size, None, None)
        errors = [_reprojection_rms(v, K, distortion, rvec, tvec) for v, rvec, tvec in zip(used, rvecs, tvecs)]
        worst = int(np.argmax(errors))
        if len(used) <= MIN_VIEWS or errors[worst] <= max(OUTLIER_FLOOR_PX, OUTLIER_FACTOR * np.median(errors)):
            break
        left_out.append((used.pop(worst).name, errors[worst]))
    view_errors = [{"photo": v.name, "rms_px": error} for v, error in zip(used, errors)]
    warnings = _warnings(float(rms), views, used, size)
    warnings += [f"{name} did not fit the other photos ({error:.1f} px): left out (a board bent, moved or "
                 "misread in it?)" for name, error in left_out]
    lens = Lens(K=K, distortion=distortion.ravel(), image_size=size)
    report = {"rms_px": round(float(rms), 4), "views": len(used), "photos": len(views), "board": spec.to_json(),
              "view_errors": view_errors, "warnings": warnings}
    return lens, report


def _photo_name(photo, index: int) -> str:
    return f"photo {index + 1}" if isinstance(photo, (bytes, bytearray)) else str(photo)


def _find_board(photo, name: str, board, detector) -> _View:
    """Decode one photo at full resolution and find the board's corners; none if fewer than
    MIN_CORNERS or all on one line (such a view says nothing about the lens)."""
    try:
        image, _ = decode_image(read_photo_bytes(photo))
    except UnreadableImageError as exc:
        raise UnreadableImageError(f"{name}: {exc}", exc.reason) from None
    height, width = image.shape[:2]
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    corners, ids, marker_corners, _ = detector.detectBoard(gray)
    if ids is None or len(ids) < MIN_CORNERS or board.checkCharucoCornersCollinear(ids):
        return _View(name, (width, height), None, None)
    object_points, image_points = board.matchImagePoints(_refined(gray, corners, marker_corners), ids)
    return _View(name, (width, height), object_points, image_points)


def _refined(gray: np.ndarray, corners: np.ndarray, marker_corners) -> np.ndarray:
    """The ChArUco corners refined again to the chessboard's saddle points. OpenCV's CharucoDetector
    returns them shifted by +0.5 px in x and y (opencv/opencv#25539, fixed after 4.12), which would
    move the measured principal point; `cv2.cornerSubPix` converges to the saddle from either start.
    Each corner's window stops short of the nearest marker corner, as the detector's own does."""
    marker_points = np.concatenate([m.reshape(-1, 2) for m in marker_corners])
    refined = np.empty_like(corners)
    for i, corner in enumerate(corners.reshape(-1, 2)):
        nearest_marker = np.sqrt(((marker_points - corner) ** 2).sum(axis=1).min())
        half_window = int(np.clip(nearest_marker - 2, 1, MAX_HALF_WINDOW))
        refined[i] = cv2.cornerSubPix(gray, corner.reshape(1, 1, 2).copy(), (half_window, half_window), (-1, -1),
                                      SUBPIXEL_CRITERIA)
    return refined


def _plural(items) -> str:
    return "" if len(items) == 1 else "s"


def _common_size(views) -> tuple:
    """The photos' (width, height); CalibrationError naming the first photo of another size."""
    sizes = Counter(v.size for v in views)
    size = sizes.most_common(1)[0][0]
    for v in views:
        if v.size != size:
            raise CalibrationError(f"{v.name} is {v.size[0]}x{v.size[1]} but the other photos are "
                                   f"{size[0]}x{size[1]}: take all photos with one camera at one resolution")
    return size


def _reprojection_rms(view: _View, K, distortion, rvec, tvec) -> float:
    projected, _ = cv2.projectPoints(view.object_points, rvec, tvec, K, distortion)
    residuals = projected.reshape(-1, 2) - view.image_points.reshape(-1, 2)
    return round(float(np.sqrt((residuals ** 2).sum(axis=1).mean())), 4)


def _warnings(rms: float, views, used, size) -> list:
    """Sentences about a calibration that worked but should be redone or improved."""
    warnings = []
    if rms > MAX_GOOD_RMS_PX:
        warnings.append(f"the reprojection error is {rms:.2f} px (over {MAX_GOOD_RMS_PX:g} px): a poor calibration; "
                        "retake sharp photos of a flat board")
    if len(used) < GOOD_VIEWS:
        warnings.append(f"only {len(used)} photos were used: 10-20 from different angles measure the lens better")
    missed = [v.name for v in views if v.object_points is None]
    if missed:
        warnings.append(f"the board was not found in {len(missed)} photo{_plural(missed)}: "
                        + ", ".join(missed))
    corners = np.concatenate([v.image_points.reshape(-1, 2) for v in used])
    spans = (corners.max(axis=0) - corners.min(axis=0)) / np.asarray(size)
    if spans.min() < MIN_COVERAGE:
        warnings.append("the board never came near the frame's edges, where the lens distorts most: "
                        "add photos with the board in the corners of the frame")
    return warnings

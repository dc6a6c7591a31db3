import json
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration import BoardSpec, CalibrationError, board_image, measure_camera
from charuco_views import DISTORTION, K, SIZE, SPEC, Camera, random_views
from vision.errors import UnreadableImageError
from vision.lens import Lens, load_lens

ROOT = Path(__file__).resolve().parents[2]


def run(*args):
    return subprocess.run([sys.executable, "-m", "calibration", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True)


def one_line_error(res) -> str:
    assert res.returncode == 2, res.stderr
    assert "Traceback" not in res.stderr and res.stderr.count("\n") == 1, res.stderr
    return res.stderr


@pytest.fixture(scope="module")
def photos(tmp_path_factory):
    """12 PNG photos of the board through the known lens, from different angles and places."""
    d = tmp_path_factory.mktemp("camera")
    paths = []
    for i, view in enumerate(random_views(Camera(), 12, seed=1)):
        paths.append(d / f"view{i:02d}.png")
        cv2.imwrite(str(paths[-1]), view.photo)
    return paths


@pytest.fixture(scope="module")
def measured(photos):
    return measure_camera(photos)


def test_recovers_the_lens(measured):
    lens, report = measured
    assert lens.image_size == SIZE
    assert lens.K[0, 0] == pytest.approx(K[0, 0], rel=0.015)
    assert lens.K[1, 1] == pytest.approx(K[1, 1], rel=0.015)
    assert lens.K[0, 2] == pytest.approx(K[0, 2], abs=10)
    assert lens.K[1, 2] == pytest.approx(K[1, 2], abs=10)
    assert lens.distortion[0] == pytest.approx(DISTORTION[0], abs=0.03)
    assert report["rms_px"] < 0.5
    assert report["views"] == report["photos"] == 12 and len(report["view_errors"]) == 12
    assert report["board"] == {"squares": [7, 5], "square_mm": 30.0, "marker_mm": 22.0, "dictionary": "DICT_5X5_100"}
    assert report["warnings"] == []


def test_a_photo_that_does_not_fit_the_others_is_left_out_and_named(photos):
    """A photo taken through another lens (say, zoomed, or the board lifted off the table) would pull
    the whole measurement off: it is left out, the lens measured from the others, and the user told."""
    other = Camera(K=K * [[1.3], [1.3], [1]], distortion=[0.1, 0.0, 0.0, 0.0, 0.0])
    stray = cv2.imencode(".png", random_views(other, 1, seed=7)[0].photo)[1].tobytes()
    lens, report = measure_camera([stray, *photos[:10]])
    assert report["views"] == 10 and report["photos"] == 11
    assert any(w.startswith("photo 1 did not fit the other photos") for w in report["warnings"])
    assert lens.K[0, 0] == pytest.approx(K[0, 0], rel=0.015)
    assert lens.distortion[0] == pytest.approx(DISTORTION[0], abs=0.03)


def test_cli_camera_file_undistorts_like_the_true_lens(photos, tmp_path):
    out = tmp_path / "camera.json"
    res = run("camera", *photos, "--out", out)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith(f"wrote {out}: 12 of 12 photos used, reprojection error 0.")
    assert json.loads(out.read_text())["rms_px"] < 0.5
    lens, true = load_lens(str(out)), Lens(K, DISTORTION, SIZE)
    # Over the frame (but its outermost 5%, where no board corner reached and the fit extrapolates),
    # both lenses straighten the photo alike: their undistorted images differ by a homography only
    # (the measured K's), to within a pixel.
    w, h = SIZE
    u, v = np.meshgrid(np.linspace(0.05 * w, 0.95 * w, 25), np.linspace(0.05 * h, 0.95 * h, 19))
    photo_px = np.column_stack([u.ravel(), v.ravel()])
    straight_true, straight_measured = true.undistort_points(photo_px), lens.undistort_points(photo_px)
    H, _ = cv2.findHomography(straight_true, straight_measured, 0)
    mapped = cv2.perspectiveTransform(straight_true.reshape(-1, 1, 2), H).reshape(-1, 2)
    assert np.linalg.norm(mapped - straight_measured, axis=1).max() < 1.0
    assert np.linalg.norm(lens.to_photo(mapped) - photo_px, axis=1).max() < 1.0


def test_board_prints_at_real_size_and_reads_back(tmp_path):
    out = tmp_path / "board.png"
    res = run("board", "--out", out, "--dpi", 150)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == f"wrote {out} (print at 100% scale: squares of 30 mm)"
    image = cv2.imread(str(out), cv2.IMREAD_GRAYSCALE)
    assert image.shape[1] == pytest.approx((7 * 30 + 2 * 10) / 25.4 * 150, abs=2)
    assert image.shape[0] == pytest.approx((5 * 30 + 2 * 10) / 25.4 * 150, abs=2)
    board = SPEC.charuco_board()
    _, ids, _, _ = cv2.aruco.CharucoDetector(board).detectBoard(image)
    assert sorted(ids.ravel()) == list(range(6 * 4))             # every inner corner of a 7x5 board


def test_other_board_sizes_print_at_their_size():
    spec = BoardSpec(squares=(9, 6), square_mm=20.0, marker_mm=15.0, dictionary="DICT_4X4_50")
    image = board_image(spec, dpi=300, margin_mm=5)
    assert image.shape == pytest.approx(((6 * 20 + 10) / 25.4 * 300, (9 * 20 + 10) / 25.4 * 300), abs=2)
    _, ids, _, _ = cv2.aruco.CharucoDetector(spec.charuco_board()).detectBoard(image)
    assert len(ids) == 8 * 5


@pytest.mark.parametrize("kwargs, message", [
    (dict(squares=(2, 5)), "3 to 30 squares"),
    (dict(marker_mm=30.0), "smaller than the squares"),
    (dict(square_mm=-1.0), "positive"),
    (dict(dictionary="DICT_9X9_1"), "unknown ArUco dictionary"),
    (dict(squares=(12, 10), dictionary="DICT_4X4_50"), "needs 60"),
])
def test_impossible_boards_are_refused(kwargs, message):
    with pytest.raises(CalibrationError, match=message):
        BoardSpec(**kwargs)


def test_photos_without_the_board_say_how_many_showed_it(photos, tmp_path):
    blank = tmp_path / "blank.png"
    cv2.imwrite(str(blank), np.full((SIZE[1], SIZE[0]), 128, np.uint8))
    res = run("camera", *photos[:2], blank, blank, blank, "--out", tmp_path / "c.json")
    assert "found in 2 of 5 photos; at least 4 are needed" in one_line_error(res)
    assert not (tmp_path / "c.json").exists()


def test_photos_the_board_was_missing_from_are_named(photos, tmp_path):
    blank = tmp_path / "blank.png"
    cv2.imwrite(str(blank), np.full((SIZE[1], SIZE[0]), 128, np.uint8))
    lens, report = measure_camera([*photos[:6], blank])
    assert report["views"] == 6 and report["photos"] == 7
    assert any("not found in 1 photo: " + str(blank) in w for w in report["warnings"])
    assert any("only 6 photos" in w for w in report["warnings"])


def test_a_file_that_is_not_an_image_is_named(photos, tmp_path):
    notes = tmp_path / "notes.jpg"
    notes.write_text("not a photo")
    assert f"{notes}: this file is not an image" in one_line_error(run("camera", *photos[:4], notes, "--out",
                                                                         tmp_path / "c.json"))
    with pytest.raises(UnreadableImageError, match="photo 2: the image is empty"):
        measure_camera([photos[0].read_bytes(), b""])


def test_photos_of_another_size_are_refused(photos, tmp_path):
    small = tmp_path / "small.png"
    cv2.imwrite(str(small), cv2.resize(cv2.imread(str(photos[0])), (640, 480)))
    err = one_line_error(run("camera", *photos[:4], small, "--out", tmp_path / "c.json"))
    assert f"{small} is 640x480 but the other photos are 1280x960" in err


@pytest.mark.parametrize("option", [["--squares", "7"], ["--marker-mm", "31"], ["--dictionary", "DICT_X"]])
def test_bad_board_options_are_one_line_usage_errors(tmp_path, option):
    one_line_error(run("camera", tmp_path / "a.png", "--out", tmp_path / "c.json", *option))
    one_line_error(run("board", "--out", tmp_path / "b.png", *option))


def test_an_unwritable_board_path_is_one_line(tmp_path):
    err = one_line_error(run("board", "--out", tmp_path / "missing" / "b.png"))
    assert err.startswith("calibration: cannot write")

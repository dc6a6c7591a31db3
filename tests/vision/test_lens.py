"""A photo taken through a measured lens (vision.lens, `--camera CAMERA.json`) is read undistorted."""
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

import vision
from vision.lens import Lens, lens_from_json, load_lens

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "sample_images" / "s003-midgame-redblack-tilt35_60"


def _module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


lens_distort = _module("lens_distort", REPO / "tools" / "lens_distort.py")
vision_accuracy = _module("vision_accuracy", REPO / "bench" / "vision_accuracy.py")

WEBCAM = {"format": "exxit-camera/1", "image_size": [1600, 1200],
          "K": [[1300.0, 0.0, 801.0], [0.0, 1302.0, 598.0], [0.0, 0.0, 1.0]],
          "distortion": [-0.28, 0.09, 0.0005, -0.0003, 0.0]}


def test_a_photo_point_undistorted_and_taken_back_is_where_it_was_over_the_whole_frame():
    lens = lens_from_json(WEBCAM)
    xs, ys = np.meshgrid(np.linspace(0, 1599, 17), np.linspace(0, 1199, 13))
    photo = np.column_stack([xs.ravel(), ys.ravel()])
    assert np.abs(lens.to_photo(lens.undistort_points(photo)) - photo).max() < 0.01
    corner = lens.undistort_points([[0.0, 0.0]])[0]
    assert corner[0] < -100 and corner[1] < -70        # a barrel lens sees beyond its pinhole frame


def test_a_curved_line_comes_out_straight():
    """A straight edge (a tile's side) bent by the lens is straight again in the undistorted photo."""
    lens = lens_from_json(WEBCAM)
    x = np.linspace(100, 1500, 200)
    straight = np.column_stack([x, 150 + 0.1 * x])      # near the top edge, where the bend is largest
    bent = lens.to_photo(straight)
    image = np.zeros((1200, 1600), np.uint8)
    cv2.polylines(image, [bent.round().astype(np.int32)], False, 255, 3)
    bend = bent[:, 1] - np.polyval(np.polyfit(bent[:, 0], bent[:, 1], 1), bent[:, 0])
    assert np.abs(bend).max() > 10
    undistorted = lens.undistort(image).astype(float)
    columns = np.nonzero(undistorted.sum(axis=0) > 0)[0][5:-5]        # not the line's round ends
    rows = (undistorted[:, columns] * np.arange(1200)[:, None]).sum(axis=0) / undistorted[:, columns].sum(axis=0)
    assert columns.min() < 200 and columns.max() > 1400
    assert np.abs(rows - np.polyval(np.polyfit(columns, rows, 1), columns)).max() < 1


def test_a_lens_serves_photos_of_its_shape_at_any_size_and_refuses_another_shape():
    lens = lens_from_json(WEBCAM)
    small = lens.scaled_to((800, 600))
    point = np.array([[1500.0, 100.0]])
    assert np.allclose(small.undistort_points((point + 0.5) / 2 - 0.5), (lens.undistort_points(point) + 0.5) / 2 - 0.5,
                       atol=0.01)
    with pytest.raises(vision.LensError, match="measured on 1600x1200 photos; this photo is 1200x1600"):
        lens.scaled_to((1200, 1600))


@pytest.mark.parametrize("change, message", [
    ({"format": "exxit-set/1"}, "exxit-camera/1"),
    ({"image_size": [1600]}, "image_size"),
    ({"K": [[0, 0, 800], [0, 1300, 600], [0, 0, 1]]}, "fx, fy > 0"),
    ({"K": "wide"}, "K"),
    ({"distortion": [0.1, 0.2, 0.3]}, "4, 5 or 8 coefficients"),
    ({"distortion": [float("nan")] * 5}, "4, 5 or 8 coefficients"),
])
def test_a_bad_camera_file_is_refused_with_what_is_wrong(change, message):
    with pytest.raises(vision.LensError, match=message):
        lens_from_json({**WEBCAM, **change})


def test_a_camera_file_round_trips():
    lens = load_lens(json.loads(json.dumps(lens_from_json(WEBCAM).to_json(rms_px=0.2))))
    assert isinstance(lens, Lens) and lens.image_size == (1600, 1200)
    assert np.allclose(lens.K, WEBCAM["K"]) and np.allclose(lens.distortion, WEBCAM["distortion"])


@pytest.fixture(scope="module")
def webcam_photo(tmp_path_factory):
    """s003 (a World near the frame's edge) as a strong barrel lens (k1 -0.3) would have taken it,
    with that lens's camera file."""
    truth = json.loads(SAMPLE.with_suffix(".json").read_text())
    photo, lens = lens_distort.distort_photo(cv2.imread(str(SAMPLE.with_suffix(".jpg"))),
                                             np.array(truth["camera"]["K"]), [-0.3, 0.0, 0.0, 0.0, 0.0])
    folder = tmp_path_factory.mktemp("webcam")
    cv2.imwrite(str(folder / "photo.jpg"), photo, [cv2.IMWRITE_JPEG_QUALITY, 92])
    (folder / "camera.json").write_text(json.dumps(lens.to_json()))
    return truth, folder / "photo.jpg", folder / "camera.json", lens


def test_a_photo_through_a_barrel_lens_reads_its_world_exactly_with_the_camera_file(webcam_photo):
    truth, photo, camera, _ = webcam_photo
    reading = vision.analyze_photo(photo, truth["meta"]["edition"], lens=camera)
    row = vision_accuracy.score_image(truth["position"], reading.to_json())
    assert row["world_right"] and row["stacks_matched"] == row["stacks_true"]


def test_the_pixels_reported_are_the_photos_own(webcam_photo):
    """The "image" block (FORMATS.md) places each cell in the photo as taken, not in the undistorted one."""
    truth, photo, camera, lens = webcam_photo
    reading = vision.analyze_photo(photo, truth["meta"]["edition"], lens=camera)
    K = np.array(truth["camera"]["K"])
    geo = reading.geometry
    errors = []
    for cell in truth["pixels"]["cells"]:
        straight = lens.K @ np.linalg.solve(K, [*cell["pixel"], 1.0])     # the render's pixel in the lens's pinhole
        ours = vision.hexgrid.plane_to_cell(*geo.work_to_plane(np.array([straight[:2]]) * geo.scale)[0])
        public = reading._public(ours)
        if public in reading.tile_colours:
            errors.append(np.hypot(*(np.array(reading.cell_to_pixel(public)) - lens.to_photo([straight[:2]])[0])))
    assert len(errors) >= 5 and np.median(errors) < 5          # the undistorted pixels are about 10 off


def test_the_cli_reads_through_the_camera_file_and_refuses_a_bad_one(webcam_photo, tmp_path):
    truth, photo, camera, _ = webcam_photo
    run = lambda *args: subprocess.run([sys.executable, "-m", "vision", "analyze", str(photo), "--json",
                                        "--profile", truth["meta"]["edition"], *args],
                                       cwd=REPO, capture_output=True, text=True, timeout=120)
    debug = tmp_path / "debug.png"
    done = run("--camera", str(camera), "--debug", str(debug))
    assert done.returncode == 0, done.stderr
    assert vision_accuracy.score_image(truth["position"], json.loads(done.stdout))["world_right"]
    assert cv2.imread(str(debug)).shape == (1200, 1600, 3)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    for path, message in [(bad, "not valid JSON"), (tmp_path / "none.json", "camera file not found")]:
        refused = run("--camera", str(path))
        assert refused.returncode == 2 and message in refused.stderr and "Traceback" not in refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1

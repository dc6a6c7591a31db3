import json
import subprocess
import sys
from pathlib import Path

import cv2
import pytest

from calibration import CalibrationError, measure_set
from synthetic import Scene, diamond, midgame, render
from vision import load_profile

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def photos(tmp_path_factory):
    d = tmp_path_factory.mktemp("calib")
    common = dict(tilt_deg=40, pitch_mm=43.0, tile_mm=42.0, tile_thick=4.0, edition="silver-red")
    img, _ = render(Scene(tiles=diamond(), **common))
    cv2.imwrite(str(d / "diamond.png"), img)
    img, _ = render(Scene(tiles=diamond(), stacks={(0, 0): ("white", "black", "white")},
                          disc_thick=5.0, disc_diam=30.0, **common))
    cv2.imwrite(str(d / "stack.png"), img)
    tiles, stacks = midgame()
    img, _ = render(Scene(tiles=tiles, stacks=stacks, tilt_deg=30))
    cv2.imwrite(str(d / "midgame.png"), img)
    return d


def test_diamond_gives_colours_roles_and_thickness(photos):
    prof = measure_set(photos / "diamond.png", base="silver-red")
    white, black = prof.colours["white"].tile_rgb, prof.colours["black"].tile_rgb
    assert white[0] > 150 and white[2] > 150          # silver: light and neutral
    assert black[0] > 120 and black[1] < 80           # red
    assert prof.white_is_lighter()
    assert prof.tile_thickness_mm == pytest.approx(4.0, abs=0.8)


def test_roles_come_from_the_diamond_not_from_lightness(photos, tmp_path):
    # Swap the colours in the photo: now the darker colour forms the touching pair (plays White).
    img = cv2.imread(str(photos / "diamond.png"))
    img = 255 - img
    cv2.imwrite(str(tmp_path / "inverted.png"), img)
    prof = measure_set(tmp_path / "inverted.png", base="silver-red")
    assert not prof.white_is_lighter()


def test_stack_photo_measures_disc_thickness(photos):
    prof = measure_set(photos / "diamond.png", base="silver-red", stack_photo=photos / "stack.png",
                       stack_height=3)
    assert prof.disc_thickness_mm == pytest.approx(5.0, abs=0.35)       # the base profile says 4.5


def test_not_a_diamond_is_refused(photos):
    with pytest.raises(CalibrationError, match="opening diamond"):
        measure_set(photos / "midgame.png")


def test_cli_writes_a_profile_vision_reads(photos, tmp_path):
    out = tmp_path / "set.json"
    res = subprocess.run([sys.executable, "-m", "calibration", "profile", str(photos / "diamond.png"),
                          "--out", str(out), "--base", "silver-red"], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert json.loads(out.read_text())["format"] == "exxit-set/1"
    assert load_profile(str(out)).tile_thickness_mm > 0
    res = subprocess.run([sys.executable, "-m", "calibration", "profile", str(photos / "midgame.png"),
                          "--out", str(out)], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 2 and "Traceback" not in res.stderr and res.stderr.count("\n") == 1

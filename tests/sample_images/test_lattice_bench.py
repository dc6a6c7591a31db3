"""bench/lattice_accuracy.py measures the fitted lattice against the renders' true cell centres."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = "s003-midgame-redblack-tilt35_60"


def run(*args):
    return subprocess.run([sys.executable, "bench/lattice_accuracy.py", *map(str, args)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_a_sample_whose_world_is_read_right_has_its_lattice_within_a_twentieth_of_a_cell(tmp_path):
    out = tmp_path / "lattice.json"
    result = run("sample_images", "--only", SAMPLE, "--jobs", "1", "--json", out)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[2].split()[:2] == ["all", "1"]
    photo = json.loads(out.read_text())["photos"][0]
    assert photo["found"] and photo["lattice_right"]
    assert photo["tile_median"] < 0.05 and photo["tile_max"] < 0.2


def test_a_truth_half_a_cell_away_from_the_photo_is_measured_as_a_wrong_lattice(tmp_path):
    shutil.copy(ROOT / "sample_images" / f"{SAMPLE}.jpg", tmp_path)
    truth = json.loads((ROOT / "sample_images" / f"{SAMPLE}.json").read_text())
    cells = truth["pixels"]["cells"]
    pixels = np.array([c["pixel"] for c in cells])
    gaps = np.linalg.norm(pixels[1:] - pixels[0], axis=1)
    half = (pixels[1 + int(np.argmin(gaps))] - pixels[0]) / 2          # half the way to a neighbour
    for c in cells:
        c["pixel"] = [c["pixel"][0] + half[0], c["pixel"][1] + half[1]]
    (tmp_path / f"{SAMPLE}.json").write_text(json.dumps(truth))
    out = tmp_path / "lattice.json"
    result = run(tmp_path, "--jobs", "1", "--json", out)
    assert result.returncode == 0, result.stderr
    photo = json.loads(out.read_text())["photos"][0]
    assert photo["found"] and not photo["lattice_right"]
    assert photo["tile_median"] > 0.3


def test_a_folder_without_truth_is_refused(tmp_path):
    result = run(tmp_path)
    assert result.returncode == 2 and "no photos with truth" in result.stderr
    result = run(tmp_path / "missing")
    assert result.returncode == 2 and "is not a folder" in result.stderr

"""bench/vision_no_world.py reads the strip of each photo beside its World and counts the Worlds found there."""
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("vision_no_world", ROOT / "bench" / "vision_no_world.py")
vnw = importlib.util.module_from_spec(spec)
spec.loader.exec_module(vnw)


def truth_with_cells(*pixels, tops=()):
    return {"pixels": {"cells": [{"pixel": list(p)} for p in pixels], "stacks": [{"top_pixel": list(p)} for p in tops]}}


def test_the_widest_strip_clear_of_the_world_and_its_margins_is_cut():
    image = np.zeros((800, 1000, 3), np.uint8)
    truth = truth_with_cells((600, 300), (800, 500), tops=[(700, 280)])
    strip, side = vnw.strip_beside_world(image, truth)
    margin = vnw.MARGIN * 220 + vnw.MARGIN_OF_PHOTO * 1000        # the box is 200 x 220 with the stack's top
    assert side == "left" and strip.shape == (800, int(600 - margin), 3)


def test_a_world_filling_the_photo_leaves_no_strip():
    image = np.zeros((800, 1000, 3), np.uint8)
    assert vnw.strip_beside_world(image, truth_with_cells((150, 120), (850, 700))) is None


def run(*args):
    return subprocess.run([sys.executable, "bench/vision_no_world.py", *map(str, args)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_a_samples_table_beside_its_world_holds_no_world(tmp_path):
    """The sample s003 (a midgame at 35-60 degrees on red and black): the cloth left of its World,
    read as a photo, shows no World."""
    for path in ROOT.glob("sample_images/s003-*"):
        (tmp_path / path.name).symlink_to(path)
    out = tmp_path / "strips.json"
    result = run(tmp_path, "--jobs", "1", "--json", out)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "false_worlds=0 strips=1"
    [row] = json.loads(out.read_text())["strips"]
    assert row["side"] == "left" and row["tiles"] is None


def test_an_empty_folder_or_no_jobs_is_refused(tmp_path):
    result = run(tmp_path)
    assert result.returncode == 2 and "no photos with truth" in result.stderr
    result = run("sample_images", "--jobs", "0")
    assert result.returncode == 2 and "--jobs takes 1 or more" in result.stderr

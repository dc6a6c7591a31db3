"""bench/vision_speed.py times every photo of a folder and ends with its summary line."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PHOTO = ROOT / "sample_images" / "s003-midgame-redblack-tilt35_60.jpg"


def run(*args):
    return subprocess.run([sys.executable, "bench/vision_speed.py", *map(str, args)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_times_each_stage_and_ends_with_the_summary_line(tmp_path):
    shutil.copy(PHOTO, tmp_path)
    result = run(tmp_path, "--repeat", "1", "--size", "800x600")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "1 photos" in lines[0] and "800x600" in lines[0]
    assert any(line.strip().startswith("cells_s") for line in lines)
    assert re.fullmatch(r"median_s=\d+\.\d{3} p95_s=\d+\.\d{3}", lines[-1])


def test_bad_arguments_are_refused_with_a_message(tmp_path):
    result = run(tmp_path)
    assert result.returncode != 0 and "no photos" in result.stderr
    result = run(ROOT / "sample_images", "--size", "big")
    assert result.returncode == 2 and "WIDTHxHEIGHT" in result.stderr


def test_times_two_checkouts_in_turns_and_says_whether_they_read_alike(tmp_path):
    shutil.copy(PHOTO, tmp_path)
    result = run(tmp_path, "--repeat", "1", "--size", "800x600", "--against", ROOT)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "1 photos" in lines[0] and "in turns" in lines[0]
    assert "0 of 1 photos read differently" in result.stdout      # a checkout reads as itself
    assert re.fullmatch(r"median_ratio=\d+\.\d{3} differ=0", lines[-1])


def test_against_a_folder_that_is_no_checkout_is_refused(tmp_path):
    result = run(ROOT / "sample_images", "--against", tmp_path)
    assert result.returncode == 2 and "not a checkout" in result.stderr

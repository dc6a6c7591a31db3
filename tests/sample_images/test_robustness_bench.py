"""bench/vision_robustness.py reads the samples as changed and prints one row of measures a change."""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(*args):
    return subprocess.run([sys.executable, "bench/vision_robustness.py", *map(str, args)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_prints_a_row_for_each_change_and_reads_through_the_lens_with_its_camera_file(tmp_path):
    out = tmp_path / "robustness.json"
    result = run("sample_images", "--only", "s003", "--changes", "as-rendered,lens-k1-0.3+camera,jpeg-35",
                 "--jobs", "1", "--json", out)
    assert result.returncode == 0, result.stderr
    rows = {line.split()[0]: line.split()[1:] for line in result.stdout.splitlines()[2:]}
    assert list(rows) == ["as-rendered", "lens-k1-0.3+camera", "jpeg-35"]
    summaries = json.loads(out.read_text())["summaries"]
    assert summaries["as-rendered"]["images"] == 1
    assert summaries["as-rendered"]["World exactly right"] == summaries["lens-k1-0.3+camera"]["World exactly right"] == 1


def test_an_unknown_change_or_an_empty_folder_is_refused(tmp_path):
    result = run("sample_images", "--changes", "sepia")
    assert result.returncode == 2 and "sepia" in result.stderr
    result = run(tmp_path)
    assert result.returncode == 2 and "no photos with truth" in result.stderr

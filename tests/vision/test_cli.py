import json
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from synthetic import Scene, midgame, render

ROOT = Path(__file__).resolve().parents[2]


def run(*args):
    return subprocess.run([sys.executable, "-m", "vision", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


@pytest.fixture(scope="module")
def photo(tmp_path_factory):
    tiles, stacks = midgame()
    img, _ = render(Scene(tiles=tiles, stacks=stacks, tilt_deg=30))
    path = tmp_path_factory.mktemp("cli") / "table.png"
    cv2.imwrite(str(path), img)
    return path


def test_analyze_prints_position_with_image_block(photo, tmp_path):
    debug = tmp_path / "dbg.png"
    res = run("analyze", str(photo), "--json", "--debug", str(debug))
    assert res.returncode == 0, res.stderr
    obj = json.loads(res.stdout)
    assert obj["format"] == "exxit-position/1"
    assert len(obj["tiles"]) == 12
    assert all(0 <= t["confidence"] <= 1 for t in obj["tiles"] + obj["stacks"])
    assert {(c["q"], c["r"]) for c in obj["image"]["cells"]} >= {(t["q"], t["r"]) for t in obj["tiles"]}
    assert len(obj["image"]["stack_tops"]) == len(obj["stacks"])
    assert obj["timing"]["total_s"] > 0 and isinstance(obj["warnings"], list)
    assert cv2.imread(str(debug)) is not None


def test_a_second_photo_from_another_side_is_read_with_the_first(photo, tmp_path):
    tiles, stacks = midgame()
    img, _ = render(Scene(tiles=tiles, stacks=stacks, tilt_deg=50, yaw_deg=140))
    second = tmp_path / "side.png"
    cv2.imwrite(str(second), img)
    alone = json.loads(run("analyze", str(photo), "--json").stdout)
    res = run("analyze", str(photo), "--second-photo", str(second), "--json")
    assert res.returncode == 0, res.stderr
    both = json.loads(res.stdout)
    assert both["tiles"] == alone["tiles"]
    assert [(s["q"], s["r"]) for s in both["stacks"]] == [(s["q"], s["r"]) for s in alone["stacks"]]
    assert "second-photo-unused" not in {w["code"] for w in both["warnings"]}
    assert both["timing"]["second_photo_s"] > 0
    bad = tmp_path / "bad.jpg"
    bad.write_bytes(b"\xff\xd8\xff garbage")
    res = run("analyze", str(photo), "--second-photo", str(bad))
    assert res.returncode == 2 and res.stderr.startswith("vision: the second photo: ")
    assert res.stderr.count("\n") == 1


def test_a_third_photo_is_read_with_the_first_two_and_named_in_messages(photo, tmp_path):
    tiles, stacks = midgame()
    for name, yaw in (("side.png", 140), ("other-side.png", 250)):
        img, _ = render(Scene(tiles=tiles, stacks=stacks, tilt_deg=50, yaw_deg=yaw))
        cv2.imwrite(str(tmp_path / name), img)
    res = run("analyze", str(photo), "--second-photo", str(tmp_path / "side.png"),
              "--second-photo", str(tmp_path / "other-side.png"), "--json")
    assert res.returncode == 0, res.stderr
    three = json.loads(res.stdout)
    assert "second-photo-unused" not in {w["code"] for w in three["warnings"]}
    blank = tmp_path / "table.png"
    cv2.imwrite(str(blank), np.full((600, 800, 3), (90, 140, 170), np.uint8))
    res = run("analyze", str(photo), "--second-photo", str(tmp_path / "side.png"), "--second-photo", str(blank),
              "--json")
    unused = [w["message"] for w in json.loads(res.stdout)["warnings"] if w["code"] == "second-photo-unused"]
    assert len(unused) == 1 and unused[0].startswith("the third photo: no EXXIT World found")
    bad = tmp_path / "bad.jpg"
    bad.write_bytes(b"\xff\xd8\xff garbage")
    res = run("analyze", str(photo), "--second-photo", str(tmp_path / "side.png"), "--second-photo", str(bad))
    assert res.returncode == 2 and res.stderr.startswith("vision: the third photo: ")


def test_exit_codes_and_one_line_messages(tmp_path):
    bad = tmp_path / "bad.jpg"
    bad.write_bytes(b"\xff\xd8\xff garbage")
    res = run("analyze", str(bad))
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "Traceback" not in res.stderr
    res = run("analyze", str(tmp_path / "missing.jpg"))
    assert res.returncode == 2 and "no such file" in res.stderr
    blank = tmp_path / "blank.png"
    cv2.imwrite(str(blank), (cv2.UMat(400, 600, cv2.CV_8UC3, (90, 140, 170)).get()))
    res = run("analyze", str(blank))
    assert res.returncode == 3 and res.stderr.startswith("vision: no EXXIT World")
    res = run("analyze", str(blank), "--profile", str(tmp_path / "none.json"))
    assert res.returncode == 2 and "profile" in res.stderr
    res = run("frobnicate")
    assert res.returncode == 2 and "Traceback" not in res.stderr


def test_a_bug_while_reading_is_one_line_and_exit_1_not_a_traceback(photo, monkeypatch, capsys):
    import vision
    from vision.__main__ import main

    def broken(*args, **kwargs):
        raise IndexError("index 7 is out of bounds")

    monkeypatch.setattr(vision, "analyze_photo", broken)
    assert main(["analyze", str(photo)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("vision: internal error (IndexError: index 7 is out of bounds)")


def test_reserves_the_players_counted_fit_the_heights(photo):
    res = run("analyze", str(photo), "--json")
    read = json.loads(res.stdout)
    assert all(len(s["height_chances"]) == 8 and abs(sum(s["height_chances"]) - 1) < 0.01 for s in read["stacks"])
    discs = [d for s in read["stacks"] for d in s["discs"]]
    white = 8 - discs.count("white")                 # then a disc more is on the table than read
    black = 8 + discs.count("white") - len(discs) - 1
    res = run("analyze", str(photo), "--json", "--reserves", f"{white},{black}")
    assert res.returncode == 0, res.stderr
    fitted = json.loads(res.stdout)
    assert sum(s["height"] for s in fitted["stacks"]) == len(discs) + 1
    assert fitted["reserves"] == {"white": white, "black": black}
    (warning,) = [w for w in fitted["warnings"] if w["code"] == "fitted-to-reserves"]
    (cell,) = warning["cells"]
    (raised,) = [s for s in fitted["stacks"] if [s["q"], s["r"]] == cell]
    assert raised["discs"][-2] is None and raised["confidence"] <= 0.5


@pytest.mark.parametrize("reserves", ["9,0", "1", "a,b", "1,2,3"])
def test_reserves_that_are_not_two_counts_are_refused_in_one_line(photo, reserves):
    res = run("analyze", str(photo), "--reserves", reserves)
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "W,B" in res.stderr


def test_reserves_the_reading_cannot_meet_exit_2_with_why(photo):
    res = run("analyze", str(photo), "--reserves", "8,8")
    assert res.returncode == 2 and "0 discs are on the table" in res.stderr and "Traceback" not in res.stderr


@pytest.mark.parametrize("name", ["debug.txt", "debug", "no/such/folder/debug.png"])
def test_a_debug_image_that_cannot_be_written_is_refused_before_reading(photo, tmp_path, name):
    res = run("analyze", str(photo), "--debug", str(tmp_path / name))
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "Traceback" not in res.stderr
    assert res.stderr.startswith("vision: ") and "debug" in res.stderr and not res.stdout

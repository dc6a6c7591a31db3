"""The scoring and alignment of bench/vision_accuracy.py."""
from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "vision_accuracy.py"
spec = importlib.util.spec_from_file_location("vision_accuracy", BENCH)
va = importlib.util.module_from_spec(spec)
spec.loader.exec_module(va)

W, B = "white", "black"


def position(tiles, stacks):
    return {"format": "exxit-position/1",
            "tiles": [{"q": q, "r": r, "colour": c} for (q, r), c in tiles.items()],
            "stacks": [{"q": q, "r": r, "discs": list(d)} for (q, r), d in stacks.items()]}


# a mid-game: 9 tiles, an on-World mixed stack, a 3-stack, a perimeter stack; white has a dance
TRUTH = position(
    {(0, 0): W, (1, 0): W, (0, 1): B, (1, -1): B, (2, -1): W, (-1, 1): B, (-1, 0): W, (2, 0): B,
     (0, -1): W},
    {(0, 0): [B, W], (1, 0): [B], (2, -1): [W, B, B], (3, -1): [W], (-1, 1): [B]})


def moved(pos, k, shift):
    out = copy.deepcopy(pos)
    for item in out["tiles"] + out["stacks"]:
        q, r = va.rotate((item["q"], item["r"]), k)
        item["q"], item["r"] = q + shift[0], r + shift[1]
    return out


def rates(truth, pred):
    return va.summarise([dict(va.score_image(truth, pred), wall_s=1.0)])


@pytest.mark.parametrize("k", range(6))
def test_a_rotated_translated_copy_scores_perfectly(k):
    got = rates(TRUTH, moved(TRUTH, k, (5, -3)))
    for metric in ("tile accuracy per cell", "World exactly right", "stack precision", "stack recall",
                   "top colour right", "height exactly right", "disc order exactly right",
                   "forced dances exactly right", "score exactly right", "position exactly right"):
        assert got[metric] == 1.0, metric
    assert got["no World found"] == 0.0


def test_rotation_is_a_lattice_symmetry():
    assert [va.rotate((1, 0), k) for k in range(6)] == [(1, 0), (0, 1), (-1, 1), (-1, 0), (0, -1), (1, -1)]


def test_a_mirrored_world_is_not_right():
    mirrored = copy.deepcopy(TRUTH)
    for item in mirrored["tiles"] + mirrored["stacks"]:
        item["q"], item["r"] = item["q"] + item["r"], -item["r"]      # reflection of the lattice
    assert rates(TRUTH, mirrored)["position exactly right"] == 0.0


def test_one_flipped_tile_breaks_the_world_but_not_the_stacks():
    pred = moved(TRUTH, 2, (1, 1))
    pred["tiles"][3]["colour"] = W if pred["tiles"][3]["colour"] == B else B
    got = rates(TRUTH, pred)
    assert got["World exactly right"] == 0.0
    assert got["position exactly right"] == 0.0
    assert got["score exactly right"] == 0.0          # an island changed size
    cells = len(set(va.tile_map(TRUTH)) | va.perimeter(va.tile_map(TRUTH)))
    assert got["tile accuracy per cell"] == pytest.approx((cells - 1) / cells)
    assert got["stack recall"] == 1.0 and got["disc order exactly right"] == 1.0


def test_stack_errors_are_counted():
    pred = copy.deepcopy(TRUTH)
    pred["stacks"] = [s for s in pred["stacks"] if (s["q"], s["r"]) != (1, 0)]      # missed
    pred["stacks"].append({"q": 1, "r": -1, "discs": [W]})                          # invented
    pred["stacks"][0]["discs"] = [W, W]                                              # wrong order
    pred["stacks"][1] = {"q": 2, "r": -1, "height": 2, "top": B, "discs": [None, B]}  # short
    got = rates(TRUTH, pred)
    assert got["stack recall"] == pytest.approx(4 / 5)
    assert got["stack precision"] == pytest.approx(4 / 5)
    assert got["top colour right"] == 1.0
    assert got["height exactly right"] == pytest.approx(3 / 4)
    assert got["disc order exactly right"] == pytest.approx(2 / 4)
    assert got["World exactly right"] == 1.0 and got["position exactly right"] == 0.0


def test_forced_dances_compare_on_the_aligned_positions():
    pred = moved(TRUTH, 1, (0, 0))
    for s in pred["stacks"]:
        if s["discs"] == [B, W]:
            s["discs"] = [W]       # the 2-stack read as 1: its dance E drops one disc, not two
    got = rates(TRUTH, pred)
    assert got["forced dances exactly right"] == 0.0
    assert got["... if found stacks had their true heights"] == 1.0     # the height was all that was wrong
    assert got["score exactly right"] == 1.0


def test_wrong_dances_count_as_named_when_an_unsure_stack_a_disc_off_gives_them():
    pred = moved(TRUTH, 1, (0, 0))
    two = next(s for s in pred["stacks"] if s["discs"] == [B, W])
    two["discs"] = [W]                                     # the 2-stack read as 1 ...
    assert rates(TRUTH, pred)["... or given by an unsure stack a disc off"] == 0.0
    pred["warnings"] = [{"code": "uncertain-stacks", "cells": [[two["q"], two["r"]]]}]   # ... and flagged
    got = rates(TRUTH, pred)
    assert got["forced dances exactly right"] == 0.0
    assert got["... or given by an unsure stack a disc off"] == 1.0


def test_a_wrong_owner_stays_wrong_when_heights_are_put_right():
    pred = copy.deepcopy(TRUTH)
    for s in pred["stacks"]:
        if s["discs"] == [B, W]:
            s["discs"] = [B]       # read one short and with the wrong owner
    got = rates(TRUTH, pred)
    assert got["forced dances exactly right"] == 0.0
    assert got["... if found stacks had their true heights"] == 0.0


def test_the_height_confusion_counts_found_stacks_by_true_and_read_height():
    pred = copy.deepcopy(TRUTH)
    pred["stacks"][2] = {"q": 2, "r": -1, "height": 2, "top": B, "discs": [None, B]}   # a 3 read as 2
    pred["stacks"] = [s for s in pred["stacks"] if (s["q"], s["r"]) != (1, 0)]          # a 1 missed
    rows = [va.score_image(TRUTH, pred), va.score_image(TRUTH, TRUTH)]
    confusion = va.height_confusion(rows)
    assert confusion == {(1, 1): 2 + 3, (2, 2): 1 + 1, (3, 2): 1, (3, 3): 1}


def test_heights_are_also_scored_from_20_degrees_of_tilt_and_under_as_the_targets_are():
    """The issue sets the heights' targets at 99% from 20 degrees of tilt and 95% under: the rows
    split the found stacks at the photo's true tilt, not at the tilt bands' 15 and 35 degrees."""
    short = copy.deepcopy(TRUTH)
    short["stacks"][2] = {"q": 2, "r": -1, "height": 2, "top": B, "discs": [None, B]}   # a 3 read as 2
    rows = [dict(va.score_image(TRUTH, short), tilt_deg=20.0, wall_s=1.0),      # 4 of 5 right
            dict(va.score_image(TRUTH, TRUTH), tilt_deg=19.5, wall_s=1.0),      # 5 of 5 right
            dict(va.score_image(TRUTH, short), tilt_deg=None, wall_s=1.0)]      # tilt unknown: in neither
    got = va.summarise(rows)
    assert got["... at 20 degrees of tilt and more"] == pytest.approx(4 / 5)
    assert got["... under 20 degrees"] == 1.0
    assert got["height exactly right"] == pytest.approx(13 / 15)


def test_no_world_counts_every_truth_tile_as_missed():
    got = rates(TRUTH, None)
    assert got["no World found"] == 1.0
    assert got["World exactly right"] == 0.0 and got["stack recall"] == 0.0
    tiles = va.tile_map(TRUTH)
    cells = len(set(tiles) | va.perimeter(tiles))
    assert got["tile accuracy per cell"] == pytest.approx((cells - len(tiles)) / cells)


def test_a_missing_vision_reports_no_world(tmp_path):
    pred, wall, inner, note = va.run_vision(tmp_path / "missing.jpg", None, 30, "/nonexistent/python")
    assert pred is None and note != "ok"


def test_sure_and_flagged_reads_are_scored_apart():
    pred = moved(TRUTH, 3, (2, 2))
    cell = lambda item: [item["q"], item["r"]]
    pred["warnings"] = [{"code": "uncertain-tiles", "cells": [cell(pred["tiles"][0])]},
                        {"code": "uncertain-stacks", "cells": [cell(pred["stacks"][1])]}]
    pred["tiles"][0]["colour"] = W if pred["tiles"][0]["colour"] == B else B     # flagged, and wrong
    # stacks[1] is flagged, and right
    pred["stacks"][2]["discs"] = pred["stacks"][2]["discs"][:-1]                # sure, and one short
    got = rates(TRUTH, pred)
    assert got["tiles read sure: right"] == 1.0
    assert got["tiles flagged uncertain: right"] == 0.0
    assert got["stacks read sure: exactly right"] == pytest.approx(3 / 4)
    assert got["stacks flagged uncertain: exactly right"] == 1.0


def test_a_comparison_names_the_images_that_changed_and_the_totals():
    def row(name, cells, world):
        return {"name": name, "cells_right": cells, "world_right": world, "no_world": 0}
    earlier = [row("s001", 30, 1), row("s002", 40, 0), row("s003", 20, 1)]
    now = [row("s001", 30, 1), row("s002", 42, 1), row("s004", 10, 1)]
    lines = va.compare_runs(earlier, now)
    assert lines[0] == "s002: cells_right 40 -> 42, world_right 0 -> 1"
    assert lines[1] == "totals over 2 images both runs read:"
    assert "  cells_right            70 ->     72" in lines
    assert "  world_right             1 ->      2" in lines
    assert not any(line.startswith(("s001", "s003", "s004")) for line in lines)


def test_images_are_grouped_by_the_truths_light_and_table():
    right = dict(va.score_image(TRUTH, moved(TRUTH, 1, (1, 0))), wall_s=1.0)
    wrong = dict(va.score_image(TRUTH, None), wall_s=1.0)
    rows = [dict(right, light="window", table="desk"), dict(right, light="lamp", table="desk"),
            dict(wrong, light="window", table="felt")]
    tables = va.grouped(rows, ["light", "table"])
    assert list(tables) == ["light", "table"]
    assert list(tables["light"]) == ["all", "light lamp", "light window"]
    assert tables["light"]["all"]["images"] == 3
    assert tables["light"]["light window"]["World exactly right"] == 0.5
    assert tables["light"]["light lamp"]["World exactly right"] == 1.0
    assert tables["table"]["table desk"]["World exactly right"] == 1.0
    assert tables["table"]["table felt"]["no World found"] == 1.0


def test_an_unknown_grouping_is_refused(tmp_path):
    with pytest.raises(SystemExit) as exit_:
        va.main([str(tmp_path), "--by", "colour"])
    assert "--by takes some of" in str(exit_.value.code)


def test_a_measured_profile_gives_vision_the_sizes_of_the_renders_own_pieces(tmp_path):
    """--measured-profile: vision is told the sizes the render's pieces really have (plan.py
    --sizes-off), as a user who measured the set would tell it."""
    sized = {"format": "exxit-set/1", "name": "silver-red", "tile_width_mm": 46.0, "tile_thickness_mm": 3.1,
             "disc_diameter_mm": 25.0, "disc_thickness_mm": 5.2, "colours": {}}
    (tmp_path / "s001.jpg").write_bytes(b"not read")
    (tmp_path / "s001.json").write_text(json.dumps(
        {"format": "exxit-sample/1", "position": TRUTH, "profile": sized, "meta": {"edition": "silver-red"}}))
    seen = tmp_path / "seen.json"
    fake = tmp_path / "python"
    fake.write_text(f'#!/bin/sh\nwhile [ "$1" != "--profile" ]; do shift; done\ncp "$2" {seen}\nexit 3\n')
    fake.chmod(0o755)
    va.main([str(tmp_path), "--measured-profile", "--python", str(fake)])
    assert json.loads(seen.read_text()) == sized
    with pytest.raises(SystemExit):
        va.main([str(tmp_path), "--measured-profile", "--no-profile"])


def test_photos_read_two_at_a_time_score_as_one_at_a_time(tmp_path):
    """--jobs 2: the same rows, in the photos' order, as read one after another."""
    for i in range(5):
        (tmp_path / f"s00{i}.jpg").write_bytes(b"not read")
        (tmp_path / f"s00{i}.json").write_text(json.dumps(
            {"format": "exxit-sample/1", "position": TRUTH, "meta": {"edition": "silver-red", "tilt_deg": 30.0}}))
    answer = tmp_path / "answer.json"
    answer.write_text(json.dumps(moved(TRUTH, 2, (1, 1))))
    fake = tmp_path / "python"      # photos s001 and s003 have no World; the others read right
    fake.write_text(f'#!/bin/sh\ncase "$4" in *s001*|*s003*) sleep 0.2; exit 3;; esac\ncat {answer}\n')
    fake.chmod(0o755)

    def run(jobs):
        out = tmp_path / f"run{jobs}.json"
        va.main([str(tmp_path), "--python", str(fake), "--jobs", str(jobs), "--json", str(out)])
        return [{k: v for k, v in row.items() if k not in ("wall_s", "vision_s")}
                for row in json.loads(out.read_text())["images"]]

    one, two = run(1), run(2)
    assert [row["name"] for row in two] == ["s000", "s001", "s002", "s003", "s004"]
    assert [row["no_world"] for row in two] == [0, 1, 0, 1, 0]
    assert two == one
    with pytest.raises(SystemExit) as exit_:
        va.main([str(tmp_path), "--jobs", "0"])
    assert "--jobs takes 1 or more" in str(exit_.value.code)

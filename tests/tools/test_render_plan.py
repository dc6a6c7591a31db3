"""The render plan's training-only positions (tools/render/positions.py): what they promise."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import rules

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "render"))

import plan  # noqa: E402
import positions  # noqa: E402


def test_restacked_positions_are_legal_keep_the_world_and_are_rich_in_tall_stacks():
    heights = []
    for seed in range(12):
        rng = np.random.default_rng(seed)
        game = positions.game_snapshot(rng, "midgame")
        pos = positions.restacked(rng, game)
        rules.position_from_json(pos)                    # raises if the position is not legal
        assert pos["tiles"] == game["tiles"]
        tiles = {(t["q"], t["r"]) for t in pos["tiles"]}
        discs = [d for s in pos["stacks"] for d in s["discs"]]
        assert discs.count("white") <= 8 and discs.count("black") <= 8
        assert pos["reserves"] == {"white": 8 - discs.count("white"), "black": 8 - discs.count("black")}
        for s in pos["stacks"]:
            cell = (s["q"], s["r"])
            assert cell in tiles or any(n in tiles for n in rules.neighbours(cell))
        heights += [len(s["discs"]) for s in pos["stacks"]]
    assert sum(h >= 3 for h in heights) >= len(heights) / 3


@pytest.mark.parametrize("want, tallest", [("restacked", 2), ("towers", 5)])
def test_a_plan_asked_for_regrouped_discs_gets_them_and_the_default_cycle_does_not(want, tallest):
    specs = plan.make_plan(24, seed=5, wants=[want])
    regrouped = [s for s in specs if s["source"] == "random-game" and s["phase"] in ("midgame", "finished")]
    assert len(regrouped) >= 4
    assert all(max(len(st["discs"]) for st in s["position"]["stacks"]) >= tallest for s in regrouped)
    assert all(s["regrouped"] == want for s in regrouped)             # the trainers leave them out of the games' mix
    assert not any("regrouped" in s for s in specs if s not in regrouped)
    assert want not in plan.WANTS


def test_crowded_positions_regroup_two_sets_of_discs_on_the_same_world():
    for seed in range(8):
        rng = np.random.default_rng(seed)
        game = positions.game_snapshot(rng, "finished")
        pos = positions.restacked(rng, game, sets=2)
        assert pos["tiles"] == game["tiles"]
        tiles = {(t["q"], t["r"]) for t in pos["tiles"]}
        discs = [d for s in pos["stacks"] for d in s["discs"]]
        assert discs.count("white") == 16 and discs.count("black") == 16
        assert pos["reserves"] == {"white": 0, "black": 0}          # no reserve discs beside the World
        assert len(pos["stacks"]) >= 8
        for s in pos["stacks"]:
            cell = (s["q"], s["r"])
            assert cell in tiles or any(n in tiles for n in rules.neighbours(cell))


def test_crowded_is_a_training_want_only():
    specs = plan.make_plan(24, seed=5, wants=["crowded"])
    crowded = [s for s in specs if s["source"] == "random-game" and s["phase"] in ("midgame", "finished")]
    assert len(crowded) >= 4
    assert all(sum(len(st["discs"]) for st in s["position"]["stacks"]) == 32 for s in crowded)
    assert "crowded" not in plan.WANTS and "crowded" in plan.EXTRA_WANTS


def test_a_plan_asked_for_black_on_black_games_is_richer_in_them_than_the_default_cycle():
    pick = lambda specs: [s["position"] for s in specs
                          if s["source"] == "random-game" and s["phase"] in ("midgame", "finished")]
    asked = pick(plan.make_plan(24, seed=5, wants=["black-on-black"]))
    default = pick(plan.make_plan(24, seed=5))
    assert len(asked) >= 4
    assert sum(positions.black_on_black(p) >= positions.BLACK_ON_BLACK for p in asked) > len(asked) / 2
    assert sum(map(positions.black_on_black, asked)) > sum(map(positions.black_on_black, default))
    assert "black-on-black" not in plan.WANTS and "black-on-black" in plan.EXTRA_WANTS


def test_black_on_black_counts_black_tops_on_black_tiles_only():
    pos = positions.position({(0, 0): "white", (1, 0): "white", (0, 1): "black", (1, -1): "black"},
                             {(0, 1): ["white", "black"], (1, -1): ["black", "white"], (0, 0): ["black"],
                              (2, -1): ["black"]})
    assert positions.black_on_black(pos) == 1                  # (0, 1) only; (2, -1) is off the World


def test_a_plan_is_written_into_a_folder_that_does_not_exist_yet(tmp_path):
    out = tmp_path / "renders" / "holdout-seed99" / "plan.json"
    plan.main(["--count", "30", "--seed", "99", "--games-only", "--out", str(out)])
    specs = json.loads(out.read_text())
    assert specs and all(s["source"] == "random-game" for s in specs)


def test_a_plan_kept_to_one_tilt_band_has_only_its_photos_in_every_edition(tmp_path):
    out = tmp_path / "plan.json"
    plan.main(["--count", "45", "--seed", "3", "--games-only", "--tilts", "0-15", "--out", str(out)])
    specs = json.loads(out.read_text())
    whole = [s for s in plan.make_plan(45, seed=3) if s["source"] == "random-game"]
    assert [s["name"] for s in specs] == [s["name"] for s in whole if s["tilt_band"] == "0-15"]
    assert {s["tilt_band"] for s in specs} == {"0-15"}
    assert {s["edition"] for s in specs} == set(plan.EDITIONS)


def test_a_plan_kept_to_one_table_has_only_its_photos(tmp_path):
    out = tmp_path / "plan.json"
    plan.main(["--count", "60", "--seed", "5", "--games-only", "--tables", "tablecloth", "--out", str(out)])
    specs = json.loads(out.read_text())
    whole = [s for s in plan.make_plan(60, seed=5) if s["source"] == "random-game"]
    assert specs and [s["name"] for s in specs] == [s["name"] for s in whole if s["table"] == "tablecloth"]


def test_an_unknown_tilt_band_is_refused_with_the_bands_there_are(tmp_path, capsys):
    try:
        plan.main(["--count", "9", "--tilts", "0-90", "--out", str(tmp_path / "plan.json")])
    except SystemExit as exit:
        assert exit.code == 2
    else:
        raise AssertionError("an unknown tilt band was accepted")
    assert "0-15" in capsys.readouterr().err
    assert not (tmp_path / "plan.json").exists()


def test_second_views_show_the_same_scene_from_another_side_at_35_to_60_degrees(tmp_path):
    specs = plan.make_plan(6, seed=3)
    source = tmp_path / "plan.json"
    source.write_text(json.dumps(specs))
    plan.main(["--second-views", str(source), "--seed", "9", "--out", str(tmp_path / "second.json")])
    second = json.loads((tmp_path / "second.json").read_text())
    assert [s["name"] for s in second] == [s["name"] for s in specs]
    for first, other in zip(specs, second):
        assert other["tilt_band"] == "35-60" and 45 <= abs(other["azimuth_offset_deg"]) <= 135
        same = lambda spec: {k: v for k, v in spec.items() if k not in ("tilt_band", "azimuth_offset_deg")}
        assert same(other) == same(json.loads(json.dumps(first)))


@pytest.mark.parametrize("hand", plan.HANDS)
def test_a_plan_with_a_hand_asks_for_it_in_every_scene_and_changes_nothing_else(tmp_path, hand):
    plan.main(["--count", "12", "--seed", "4", "--hand", hand, "--out", str(tmp_path / "hands.json")])
    with_hand = json.loads((tmp_path / "hands.json").read_text())
    without = json.loads(json.dumps(plan.make_plan(12, seed=4)))
    assert [s.pop("hand") for s in with_hand] == [hand] * 12
    assert with_hand == without


def test_third_views_show_the_scene_from_a_third_side(tmp_path):
    """A third photo turned from the first as far as the second, the other way: three sides of one table."""
    specs = plan.make_plan(6, seed=3)
    source = tmp_path / "plan.json"
    source.write_text(json.dumps(specs))
    plan.main(["--second-views", str(source), "--seed", "9", "--out", str(tmp_path / "second.json")])
    plan.main(["--third-views", str(tmp_path / "second.json"), "--out", str(tmp_path / "third.json")])
    second, third = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("second", "third"))
    for two, three in zip(second, third):
        assert three["azimuth_offset_deg"] == -two["azimuth_offset_deg"]
        assert {k: v for k, v in three.items() if k != "azimuth_offset_deg"} == \
            {k: v for k, v in two.items() if k != "azimuth_offset_deg"}


def test_a_plan_with_sizes_off_shows_pieces_of_other_sizes_within_the_bound_and_the_truth_records_them():
    specs = plan.sizes_off(plan.make_plan(12, seed=5), 0.2, seed=5)
    factors = [f for s in specs for f in s["size_factors"].values()]
    assert all(0.8 <= f <= 1.2 for f in factors) and max(factors) - min(factors) > 0.2
    assert specs == plan.sizes_off(plan.make_plan(12, seed=5), 0.2, seed=5)       # drawn from the seed
    edition = json.loads((Path(plan.REPO) / "vision" / "profiles" / "black-white.json").read_text())
    sized = plan.sized_profile(edition, {"size_factors": {"disc_thickness_mm": 0.8}})
    assert sized["disc_thickness_mm"] == round(edition["disc_thickness_mm"] * 0.8, 3)
    assert {k: v for k, v in sized.items() if k != "disc_thickness_mm"} == \
        {k: v for k, v in edition.items() if k != "disc_thickness_mm"}
    assert plan.sized_profile(edition, {}) == edition


def test_towers_regroup_the_discs_into_legal_stacks_of_five_to_eight():
    heights = []
    for seed in range(8):
        rng = np.random.default_rng(seed)
        game = positions.game_snapshot(rng, "midgame")
        pos = positions.restacked(rng, game, heights=positions.TOWER_HEIGHTS)
        rules.position_from_json(pos)                    # raises if the position is not legal
        assert pos["tiles"] == game["tiles"]
        discs = [d for s in pos["stacks"] for d in s["discs"]]
        assert len(discs) == 16 and pos["reserves"] == {"white": 0, "black": 0}
        heights += [len(s["discs"]) for s in pos["stacks"]]
    assert sum(h >= 5 for h in heights) >= 0.75 * len(heights)   # the last tower takes the discs left
    assert max(heights) >= 7


"""render.py --part K/N: renderers on several cores share one plan, each spec rendered once."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "render"))

import render  # noqa: E402

SPECS = [{"name": f"s{i:03d}-midgame-redblack-tilt0_15"} for i in range(1, 12)]


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_the_parts_of_a_plan_render_every_spec_exactly_once(n):
    parts = [render.chosen_specs(SPECS, part=(k, n)) for k in range(1, n + 1)]
    names = [s["name"] for part in parts for s in part]
    assert sorted(names) == [s["name"] for s in SPECS]
    assert max(map(len, parts)) - min(map(len, parts)) <= 1          # the cores get even shares


def test_a_part_is_taken_of_the_specs_only_names():
    only = ["s001", "s002", "s003", "s010"]
    assert [s["name"][:4] for s in render.chosen_specs(SPECS, only, (2, 2))] == ["s002", "s010"]


def test_the_part_option_reads_k_of_n():
    assert render.plan_part("2/3") == (2, 3)
    assert render.plan_part(" 1/1 ") == (1, 1)


@pytest.mark.parametrize("text", ["0/2", "3/2", "1/0", "2", "a/b", "1/2/3", "-1/2"])
def test_a_part_that_is_no_part_of_the_plan_is_refused_with_a_message(text, capsys):
    with pytest.raises(SystemExit) as stop:
        render.main(["--plan", "unused.json", f"--part={text}"])
    assert stop.value.code == 2
    assert "K/N with 1 <= K <= N" in capsys.readouterr().err

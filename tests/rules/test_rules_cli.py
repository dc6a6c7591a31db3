"""The command line of FORMATS.md: analyze, replay, show; exit codes and one-line errors."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rules.cli import main

ROOT = Path(__file__).resolve().parents[2]
POSITIONS = ROOT / "tests" / "data" / "positions"

TILES3 = [{"q": -1, "r": 0, "colour": "white"}, {"q": 0, "r": 0, "colour": "black"},
          {"q": 1, "r": 0, "colour": "white"}]


def run(args, stdin_text, capsys, monkeypatch):
    """Run the CLI in-process with ``stdin_text`` on stdin; (exit code, stdout, stderr)."""
    import io
    data = stdin_text if isinstance(stdin_text, bytes) else stdin_text.encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def position(**fields):
    obj = {"tiles": TILES3, "stacks": [], "to_move": "white"}
    obj.update(fields)
    return obj


BAD_POSITIONS = {
    "not JSON": "{tiles: []",
    "empty input": "",
    "not UTF-8": b"\xff\xfe{",
    "a list": "[]",
    "a number": "42",
    "no tiles": "{}",
    "tiles not a list": json.dumps({"tiles": {"q": 0}}),
    "tile not an object": json.dumps({"tiles": [[0, 0]]}),
    "q a string": json.dumps({"tiles": [{"q": "0", "r": 0, "colour": "white"}]}),
    "q a float": json.dumps({"tiles": [{"q": 0.5, "r": 0, "colour": "white"}]}),
    "q a bool": json.dumps({"tiles": [{"q": True, "r": 0, "colour": "white"}]}),
    "q huge": json.dumps({"tiles": [{"q": 10 ** 30, "r": 0, "colour": "white"}]}),
    "unknown colour": json.dumps({"tiles": [{"q": 0, "r": 0, "colour": "red"}]}),
    "colour missing": json.dumps({"tiles": [{"q": 0, "r": 0}]}),
    "colour a list": json.dumps({"tiles": [{"q": 0, "r": 0, "colour": ["white"]}]}),
    "two tiles on a cell": json.dumps({"tiles": TILES3 + [{"q": 0, "r": 0, "colour": "white"}]}),
    "two stacks on a cell": json.dumps(position(stacks=[{"q": 0, "r": 0, "discs": ["white"]},
                                                        {"q": 0, "r": 0, "discs": ["black"]}])),
    "nine white discs": json.dumps(position(stacks=[{"q": 0, "r": 0, "discs": ["white"] * 9}])),
    "disconnected World": json.dumps({"tiles": TILES3 + [{"q": 5, "r": 5, "colour": "white"}]}),
    "empty World": json.dumps({"tiles": []}),
    "off-World stack touching no tile": json.dumps(position(stacks=[{"q": 4, "r": 0, "discs": ["white"]}])),
    "empty stack": json.dumps(position(stacks=[{"q": 0, "r": 0, "discs": []}])),
    "discs not a list": json.dumps(position(stacks=[{"q": 0, "r": 0, "discs": "white"}])),
    "unknown disc colour": json.dumps(position(stacks=[{"q": 0, "r": 0, "discs": ["green"]}])),
    "unknown top": json.dumps(position(stacks=[{"q": 0, "r": 0, "discs": ["white", None]}])),
    "height disagrees": json.dumps(position(stacks=[{"q": 0, "r": 0, "discs": ["white"], "height": 2}])),
    "top disagrees": json.dumps(position(stacks=[{"q": 0, "r": 0, "discs": ["white"], "top": "black"}])),
    "height without top": json.dumps(position(stacks=[{"q": 0, "r": 0, "height": 2}])),
    "height zero": json.dumps(position(stacks=[{"q": 0, "r": 0, "height": 0, "top": "white"}])),
    "reserves a list": json.dumps(position(reserves=[8, 8])),
    "reserve negative": json.dumps(position(reserves={"white": -1, "black": 8})),
    "reserve too big": json.dumps(position(stacks=[{"q": 0, "r": 0, "discs": ["white"]}],
                                           reserves={"white": 8, "black": 8})),
    "reserve a string": json.dumps(position(reserves={"white": "8", "black": 8})),
    "reserve of an unknown colour": json.dumps(position(reserves={"red": 8})),
    "tiles_left inconsistent": json.dumps(position(tiles_left=10, total_tiles=39)),
    "total_tiles 40": json.dumps(position(total_tiles=40)),
    "more tiles than total": json.dumps(position(total_tiles=2)),
    "passes 3": json.dumps(position(passes=3)),
    "to_move unknown colour": json.dumps(position(to_move="red")),
    "unknown format": json.dumps(position(format="exxit-position/9")),
    "deeply nested": "[" * 100000 + "]" * 100000,
}


@pytest.mark.parametrize("name", sorted(BAD_POSITIONS))
@pytest.mark.parametrize("command", ["analyze", "replay", "show"])
def test_bad_input_exits_2_with_one_line(name, command, capsys, monkeypatch):
    text = BAD_POSITIONS[name]
    if command == "replay" and name not in ("not JSON", "empty input", "not UTF-8", "deeply nested"):
        obj = json.loads(text)
        text = json.dumps({"setup": obj, "moves": []})
    code, out, err = run([command, "-"], text, capsys, monkeypatch)
    assert code == 2, (name, out, err)
    assert out == ""
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err


BAD_GAMES = {
    "game a list": [],
    "no setup": {"moves": []},
    "unknown variant": {"setup": "chess", "moves": []},
    "moves not a list": {"setup": "standard", "moves": {"type": "pass"}},
    "move not an object": {"setup": "standard", "moves": ["place 0,0"]},
    "unknown move type": {"setup": "standard", "moves": [{"type": "jump", "at": [0, 0]}]},
    "move without type": {"setup": "standard", "moves": [{"at": [0, 0]}]},
    "place without at": {"setup": "standard", "moves": [{"type": "place"}]},
    "at not a pair": {"setup": "standard", "moves": [{"type": "place", "at": [0]}]},
    "at floats": {"setup": "standard", "moves": [{"type": "place", "at": [0.0, 0]}]},
    "dance without direction": {"setup": "standard", "moves": [{"type": "dance", "from": [0, 0]}]},
    "dance unknown direction": {"setup": "standard", "moves": [{"type": "dance", "from": [0, 0], "direction": "N"}]},
    "drops not a list": {"setup": "standard", "moves": [{"type": "dance", "from": [0, 0], "direction": "E", "drops": 3}]},
    "bad shape after an illegal move": {"setup": "standard",
                                        "moves": [{"type": "pass"}, {"type": "fly"}]},
    "resign unknown colour": {"setup": "standard", "moves": [{"type": "resign", "colour": "red"}]},
}


@pytest.mark.parametrize("name", sorted(BAD_GAMES))
def test_bad_game_exits_2(name, capsys, monkeypatch):
    code, out, err = run(["replay"], json.dumps(BAD_GAMES[name]), capsys, monkeypatch)
    assert code == 2, (name, err)
    assert err.startswith("error: ") and err.count("\n") == 1


@pytest.mark.parametrize("moves, index", [
    ([{"type": "pass"}], 0),
    ([{"type": "place", "at": [0, 0]}, {"type": "place", "at": [0, 0]}], 1),
    ([{"type": "place", "at": [0, 0]}, {"type": "place", "at": [5, 5]}], 1),
    ([{"type": "place", "at": [0, 0]}, {"type": "dance", "from": [0, 1], "direction": "E"}], 1),
    ([{"type": "enlarge", "at": [2, 0]}], 0),
    ([{"type": "tile", "at": [2, 0]}], 0),
])
def test_replay_names_the_first_illegal_move(moves, index, capsys, monkeypatch):
    code, out, err = run(["replay"], json.dumps({"setup": "standard", "moves": moves}), capsys, monkeypatch)
    assert code == 1
    assert err.startswith(f"illegal move at index {index}:") and err.count("\n") == 1


def test_replay_wrong_dance_details_are_illegal(capsys, monkeypatch):
    setup = position(stacks=[{"q": 0, "r": 0, "discs": ["black", "white"]}, {"q": 1, "r": 0, "discs": ["black"]},
                             {"q": -1, "r": 0, "discs": ["white"]}])
    good = {"type": "dance", "from": [0, 0], "direction": "E", "target": [1, 0],
            "drops": [[1, 0], [2, 0]], "perimeter": True}
    code, out, _ = run(["replay"], json.dumps({"setup": setup, "moves": [good]}), capsys, monkeypatch)
    assert code == 0
    result = json.loads(out)
    assert result["analysis"]["forced_dances"]["black"][0]["from"] == [1, 0]
    assert result["position"]["to_move"] == "black"
    for field, wrong in (("target", [2, 0]), ("drops", [[1, 0]]), ("perimeter", False)):
        code, _, err = run(["replay"], json.dumps({"setup": setup, "moves": [dict(good, **{field: wrong})]}),
                           capsys, monkeypatch)
        assert code == 1 and field in err


def test_replay_of_a_finished_game_reports_the_outcome(capsys, monkeypatch):
    moves = [{"type": "place", "at": [0, 0]}, {"type": "resign"}]
    code, out, _ = run(["replay"], json.dumps({"setup": "blitz-19", "moves": moves}), capsys, monkeypatch)
    assert code == 0
    analysis = json.loads(out)["analysis"]
    assert analysis["game_over"] and analysis["legal_moves"] == []
    assert analysis["outcome"] == {"reason": "resignation", "winner": "white", "score": {"white": 4, "black": 3}}


def test_analyze_reads_vision_output_with_unknown_discs(capsys, monkeypatch):
    obj = position(stacks=[{"q": 0, "r": 0, "height": 3, "top": "white", "discs": [None, "black", None],
                            "confidence": 0.7}, {"q": 1, "r": 0, "discs": ["black"], "confidence": 0.9}],
                   confidence=0.8, image={"width": 100, "height": 80, "cells": []})
    code, out, _ = run(["analyze", "-"], json.dumps(obj), capsys, monkeypatch)
    assert code == 0
    analysis = json.loads(out)
    assert [d["from"] for d in analysis["forced_dances"]["white"]] == [[0, 0]]


def test_missing_file_exits_2(capsys):
    assert main(["analyze", "/nonexistent/position.json"]) == 2
    assert capsys.readouterr().err.startswith("error: cannot read")


def test_usage_errors_exit_2(capsys):
    assert main([]) == 2
    assert main(["fly"]) == 2


def test_example_positions_analyze_in_a_subprocess():
    files = sorted(POSITIONS.glob("*.json"))
    assert files, "tests/data/positions holds example positions"
    for path in files:
        result = subprocess.run([sys.executable, "-m", "rules", "analyze", str(path)], cwd=ROOT,
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, (path, result.stderr)
        assert set(json.loads(result.stdout)) >= {"forced_dances", "score", "islands", "game_over"}
        shown = subprocess.run([sys.executable, "-m", "rules", "show", str(path)], cwd=ROOT,
                               capture_output=True, text=True, timeout=60)
        assert shown.returncode == 0 and "to move:" in shown.stdout


def test_subprocess_bad_input_has_no_traceback():
    result = subprocess.run([sys.executable, "-m", "rules", "analyze", "-"], cwd=ROOT, input="{",
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1


def test_sgf_export_and_replay_of_the_record(capsys, monkeypatch, tmp_path):
    moves = [{"type": "place", "at": [0, 0]}, {"type": "place", "at": [0, 1]}, {"type": "dance", "from": [0, 0], "direction": "SE"}]
    game = json.dumps({"setup": "standard", "moves": moves})
    code, record, _ = run(["sgf", "--white", "ann"], game, capsys, monkeypatch)
    assert code == 0 and record.startswith("(;GM[28]") and 'P0[id "ann"]' in record
    code, from_record, _ = run(["replay", "-"], record, capsys, monkeypatch)
    code2, from_json, _ = run(["replay", "-"], game, capsys, monkeypatch)
    assert code == code2 == 0 and json.loads(from_record) == json.loads(from_json)
    code, shown, _ = run(["show", "-"], record, capsys, monkeypatch)
    assert code == 0 and "to move: black" in shown


def test_bad_records_exit_2_and_illegal_record_moves_exit_1(capsys, monkeypatch):
    code, _, err = run(["replay"], "(;GM[28]SU[exxit];P0[Fly N 14])", capsys, monkeypatch)
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1
    code, _, err = run(["replay"], "(;GM[28]SU[exxit];P0[Dropb W N 14];P0[Done];P1[Dropb B N 14];P1[Done])",
                       capsys, monkeypatch)
    assert code == 1 and err.startswith("illegal move at index 1:")
    code, _, err = run(["sgf"], json.dumps({"setup": {"tiles": [{"q": 0, "r": 0, "colour": "white"}]}, "moves": []}),
                       capsys, monkeypatch)
    assert code == 2 and "Boardspace" in err


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10 ** 6, 10 ** 6) | st.floats(allow_nan=False) | st.text(max_size=8)
    | st.sampled_from(["white", "black", "red", "E", "dance", "place", "enlarge", "pass", "tile"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["q", "r", "colour", "discs", "height", "top", "tiles", "stacks", "to_move", "reserves",
                         "tiles_left", "total_tiles", "passes", "type", "at", "from", "direction", "setup", "moves"]),
        inner, max_size=5),
    max_leaves=12)

VALID = json.loads(json.dumps({"tiles": TILES3, "stacks": [{"q": 0, "r": 0, "discs": ["black", "white"]},
                                                            {"q": 1, "r": 0, "discs": ["black"]}],
                               "to_move": "white"}))


def mutate(obj, path, value):
    """``obj`` with the element at ``path`` (keys/indices, wrapped around) replaced by ``value``."""
    if not path or not isinstance(obj, (dict, list)) or not obj:
        return value
    obj = dict(obj) if isinstance(obj, dict) else list(obj)
    keys = sorted(obj) if isinstance(obj, dict) else range(len(obj))
    key = list(keys)[path[0] % len(obj)]
    obj[key] = mutate(obj[key], path[1:], value)
    return obj


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=JSON_VALUES, path=st.lists(st.integers(0, 10), max_size=4))
def test_no_input_gives_a_traceback(value, path, capsys, monkeypatch):
    for command, document in (("analyze", mutate(VALID, path, value)),
                              ("replay", {"setup": mutate(VALID, path, value), "moves": []}),
                              ("replay", {"setup": "standard", "moves": [mutate({"type": "place", "at": [0, 0]}, path, value)]}),
                              ("analyze", value)):
        code, out, err = run([command, "-"], json.dumps(document), capsys, monkeypatch)
        assert code in (0, 1, 2)
        if code:
            assert err.count("\n") == 1 and "Traceback" not in err

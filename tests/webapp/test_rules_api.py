"""POST /api/rules/analyze: the answer the page shows, and every kind of malformed position."""

import pytest

import rules
from webapp_examples import example_position


def analyse(client, position):
    response = client.post("/api/rules/analyze", json=position)
    assert response.status_code == 200, response.json
    return response.json


def test_opening_has_no_dance_and_scores_islands(client):
    answer = analyse(client, rules.position_to_json(rules.Position.standard()))
    assert answer["forced_dances"] == {"white": [], "black": []}
    assert answer["score"] == {"white": 4, "black": 3}   # one white island of 2 (double), 1 + 1
    assert answer["winner"] == "white"
    assert answer["game_over"] is False
    assert {m["text"] for m in answer["build_moves"]["white"]} == {
        "place 0,0", "place 1,0", "place 0,1", "place 1,-1"}


def test_forced_dances_carry_notation_preview_and_priority(client):
    answer = analyse(client, example_position())
    (white,) = answer["forced_dances"]["white"]
    assert white["text"] == "dance 0,0 W" and white["perimeter"] is True
    assert white["drops"] == [[-1, 0], [-2, 0]]
    assert "3 other dances" in answer["priority"]["white"]
    (black,) = answer["forced_dances"]["black"]
    assert black["text"] == "dance 0,1 NW"
    assert "1 other dance is" in answer["priority"]["black"]
    # the preview: the disc that left the World stands on (-2, 0), and Black replies
    after = white["after"]
    stacks = {(s["q"], s["r"]): s["discs"] for s in after["position"]["stacks"]}
    assert stacks[(-2, 0)] == ["white"] and stacks[(-1, 0)] == ["black", "white"]
    assert after["next_side"] == "black"
    assert [d["text"] for d in after["next_dances"]] == ["dance 1,0 NE"]  # Black's forced reply, drawn as an arrow
    assert [(d["from"], d["direction"]) for d in after["next_dances"]] == [([1, 0], "NE")]
    assert answer["build_moves"] == {"white": [], "black": []}


def test_an_unsure_stack_whose_height_decides_the_dances_is_named_with_the_other_answer(client):
    position = example_position()
    unsure = next(s for s in position["stacks"] if (s["q"], s["r"]) == (1, 0))
    unsure["confidence"] = 0.5                 # a Black 1-stack: with 2 discs it has a dance too
    answer = analyse(client, position)
    [unsure_height] = answer["unsure_heights"]
    assert (unsure_height["at"], unsure_height["read"], unsure_height["height"]) == ([1, 0], 1, 2)
    dances = unsure_height["forced_dances"]
    assert {c: [d["text"] for d in dances[c]] for c in dances} == {
        "white": ["dance 0,0 W"], "black": ["dance 0,1 NW", "dance 1,0 NE"]}
    assert [(d["from"], d["direction"], d["target"]) for d in dances["black"]] == [([0, 1], "NW", [0, 0]), ([1, 0], "NE", [2, -1])]
    unsure["confidence"] = 0.9                 # read sure (or corrected by hand): nothing to check first
    assert analyse(client, position)["unsure_heights"] == []


def test_an_unsure_stack_whose_height_changes_nothing_is_not_named(client):
    position = example_position()
    for stack in position["stacks"]:
        if (stack["q"], stack["r"]) in {(2, -1), (-1, 0)}:
            stack["confidence"] = 0.3          # with a disc more, no dance starts, ends or turns there
    assert analyse(client, position)["unsure_heights"] == []


def test_no_priority_line_when_only_inner_dances_exist(client):
    position = rules.position_to_json(rules.Position(
        {(0, 0): "white", (1, 0): "white", (2, 0): "black"},
        {(0, 0): ("white",), (1, 0): ("black",)}))
    answer = analyse(client, position)
    assert [d["text"] for d in answer["forced_dances"]["white"]] == ["dance 0,0 E"]
    assert answer["priority"]["white"] is None


def test_unknown_disc_colours_give_the_dance_but_no_preview(client):
    position = rules.position_to_json(rules.Position(
        {(0, 0): "white", (1, 0): "white", (2, 0): "black", (3, 0): "black"},
        {(0, 0): (None, "white"), (1, 0): ("black",)}))
    del position["reserves"]   # as a photo reading gives it: reserves unknown
    answer = analyse(client, position)
    (dance,) = answer["forced_dances"]["white"]
    assert dance["text"] == "dance 0,0 E"
    assert "position" not in dance["after"] and dance["after"]["unknown"]


def test_side_to_move_adds_legal_moves(client):
    position = example_position()
    position["to_move"] = "black"
    answer = analyse(client, position)
    assert [m["type"] for m in answer["legal_moves"]] == ["dance"]
    assert answer["legal_moves"][0]["from"] == [0, 1]


@pytest.mark.parametrize("body, code", [
    ([1, 2], "bad_position"),
    ({"stacks": []}, "bad_position"),
    ({"tiles": "none"}, "bad_position"),
    ({"tiles": [{"q": 0, "r": 0, "colour": "red"}]}, "bad_position"),
    ({"tiles": [{"q": 0, "r": 0, "colour": "white"}, {"q": 0, "r": 0, "colour": "black"}]},
     "bad_position"),
    ({"tiles": [{"q": "a", "r": 0, "colour": "white"}]}, "bad_position"),
    ({"tiles": [{"q": 0, "r": 0, "colour": "white"}],
      "stacks": [{"q": 0, "r": 0, "discs": ["white"] * 9}]}, "bad_position"),
    ({"tiles": [{"q": 0, "r": 0, "colour": "white"}],
      "stacks": [{"q": 0, "r": 0, "discs": ["white", None]}]}, "bad_position"),
    ({"tiles": [{"q": 0, "r": 0, "colour": "white"}], "to_move": "green"}, "bad_position"),
    ({"tiles": [{"q": q, "r": 0, "colour": "white"} for q in range(100_000)]}, "bad_position"),
])
def test_malformed_positions_get_a_422_with_a_message(client, body, code):
    response = client.post("/api/rules/analyze", json=body)
    assert response.status_code == 422
    assert response.json["code"] == code
    assert response.json["error"].startswith("Invalid position") or "position" in response.json["error"]


@pytest.mark.parametrize("data, content_type", [
    ("{not json", "application/json"),
    ("", "application/json"),
    ("tiles=1", "application/x-www-form-urlencoded"),
])
def test_a_body_that_is_not_json_gets_a_400(client, data, content_type):
    response = client.post("/api/rules/analyze", data=data, content_type=content_type)
    assert response.status_code == 400
    assert response.json == {"error": response.json["error"], "code": "bad_json"}


def test_unknown_api_paths_and_methods_answer_json(client):
    assert client.get("/api/nothing").json["code"] == "not_found"
    response = client.get("/api/rules/analyze")
    assert response.status_code == 405 and response.json["code"] == "method_not_allowed"


def test_openapi_document_describes_the_api(client):
    doc = client.get("/api/openapi.json").json
    assert doc["openapi"].startswith("3.")
    assert {"/api/analyze", "/api/rules/analyze"} <= set(doc["paths"])
    upload = doc["paths"]["/api/analyze"]["post"]
    assert "photo" in upload["requestBody"]["content"]["multipart/form-data"]["schema"]["properties"]
    assert {"400", "413", "422"} <= set(upload["responses"])


def test_game_over_names_the_winner(client):
    position = rules.position_to_json(rules.Position.standard(total_tiles=4))   # no tile left
    answer = analyse(client, position)
    assert answer["game_over"] is True
    assert answer["winner"] == "white" and answer["outcome"]["reason"] == "supply_exhausted"
    assert answer["legal_moves"] == []


def test_with_the_reserves_counted_an_unsure_height_is_a_disc_moved_between_unsure_stacks(client):
    position = example_position()
    for stack in position["stacks"]:
        if (stack["q"], stack["r"]) in {(1, 0), (0, 1)}:
            stack["confidence"] = 0.5              # Black 1-stack at 1,0 and Black 2-stack at 0,1
    position["reserves_counted"] = True
    moved = {(tuple(u["at"]), tuple(u["to"]["at"])): (u["read"], u["height"], u["to"]["read"], u["to"]["height"])
             for u in analyse(client, position)["unsure_heights"]}
    assert moved == {((0, 1), (1, 0)): (2, 1, 1, 2)}   # never a disc more or less in all
    del position["reserves_counted"]
    assert all("to" not in u for u in analyse(client, position)["unsure_heights"])

"""POST /api/fit-heights: the stacks' heights fitted to the discs the players count in their reserves."""

import pytest

import rules


def line_position(*stacks):
    return {"format": "exxit-position/1", "to_move": "white",
            "tiles": [{"q": q, "r": 0, "colour": "white" if q < 2 else "black"} for q in range(4)],
            "stacks": list(stacks)}


def stack(q, discs, chances=None, confidence=0.9):
    s = {"q": q, "r": 0, "discs": discs, "confidence": confidence}
    if chances:
        s["height_chances"] = chances
    return s


def fit(client, position, reserves, status=200):
    response = client.post("/api/fit-heights", json={"position": position, "reserves": reserves})
    assert response.status_code == status, response.json
    return response.json


def test_a_disc_missing_from_the_count_goes_where_the_photo_most_likely_hid_it(client):
    position = line_position(stack(0, ["white"], [0.55, 0.45]), stack(2, ["black"], [0.95, 0.05]))
    assert client.post("/api/rules/analyze", json=position).json["forced_dances"]["white"] == []
    body = fit(client, position, {"white": 6, "black": 7})                # 3 discs on the table, 2 read
    assert body["changes"] == [{"at": [0, 0], "read": 1, "height": 2}]
    fitted = rules.position_from_json(body["position"])
    assert fitted.stacks[(0, 0)] == (None, "white") and dict(fitted.reserves) == {"white": 6, "black": 7}
    analysis = client.post("/api/rules/analyze", json=body["position"]).json   # now it reaches the black stack
    assert [d["text"] for d in analysis["forced_dances"]["white"]] == ["dance 0,0 E"]


def test_stacks_given_by_height_and_top_are_fitted_too(client):
    position = line_position({"q": 0, "r": 0, "height": 2, "top": "white", "height_chances": [0.4, 0.6]},
                             stack(3, ["black"]))
    body = fit(client, position, {"white": 7, "black": 7})                # 2 on the table, 3 read
    assert [s["discs"] for s in body["position"]["stacks"]] == [["white"], ["black"]]


def test_reserves_the_stacks_cannot_meet_are_a_422_saying_why(client):
    position = line_position(stack(0, ["white"], [0.9, 0.1]), stack(3, ["black"], [0.9, 0.1]))
    response = client.post("/api/fit-heights", json={"position": position, "reserves": {"white": 8, "black": 8}})
    assert response.status_code == 422 and response.json["code"] == "reserves_not_met"
    assert "0 discs are on the table" in response.json["error"]


@pytest.mark.parametrize("body,status,code", [
    ([], 400, "bad_body"),
    ({"reserves": {"white": 1, "black": 1}}, 400, "bad_body"),
    ({"position": {"tiles": "none"}, "reserves": {"white": 1, "black": 1}}, 422, "bad_position"),
    ({"position": line_position(stack(0, ["white"], [0.9, 0.1])), "reserves": {"white": "two", "black": 1}},
     422, "reserves_not_met"),
    ({"position": line_position(stack(0, ["white"], [0.9, 0.1]))}, 422, "reserves_not_met"),
])
def test_malformed_requests_get_a_clear_4xx(client, body, status, code):
    response = client.post("/api/fit-heights", json=body)
    assert response.status_code == status and response.json["code"] == code
    assert response.json["error"] and "Traceback" not in response.json["error"]

"""Stored analyses: permanent links, saved corrections, nothing lost when other requests fail."""

import io
import json

from webapp_examples import example_position


def test_stored_analysis_is_served_by_id(client, stored):
    record = client.get(f"/api/analyses/{stored}").json
    assert record["id"] == stored
    assert record["link"].endswith(f"/a/{stored}")
    assert record["corrections"] == []
    assert [d["text"] for d in record["analysis"]["forced_dances"]["white"]] == ["dance 0,0 W"]
    photo = client.get(record["photo"])
    assert photo.status_code == 200 and photo.mimetype == "image/jpeg"
    assert photo.data[:2] == b"\xff\xd8"


def test_corrections_are_saved_and_change_the_answer(client, stored):
    position = example_position()
    position["stacks"] = [s for s in position["stacks"] if (s["q"], s["r"]) != (0, 0)]
    corrections = [{"cell": [0, 0], "kind": "stack", "before": "stack of 2", "after": "no stack"}]
    response = client.put(f"/api/analyses/{stored}/position",
                          json={"position": position, "corrections": corrections})
    assert response.status_code == 200
    assert [d["text"] for d in response.json["analysis"]["forced_dances"]["white"]] == ["dance 2,-1 SW"]
    record = client.get(f"/api/analyses/{stored}").json
    assert record["corrections"] == corrections
    assert {(s["q"], s["r"]) for s in record["position"]["stacks"]} == {(1, 0), (-1, 0), (0, 1), (2, -1)}
    assert record["reading"]["stacks"][0]["q"] == -1   # the reading itself is kept as read


def test_failed_requests_never_touch_stored_analyses(client, stored):
    before = client.get(f"/api/analyses/{stored}").json
    failures = [
        client.put(f"/api/analyses/{stored}/position", json={"position": {"tiles": "x"}}),
        client.put(f"/api/analyses/{stored}/position", data="{", content_type="application/json"),
        client.put(f"/api/analyses/{stored}/position", json={"position": example_position(),
                                                              "corrections": "nope"}),
        client.put(f"/api/analyses/{stored}/position", json={"position": example_position(),
                                                              "corrections": [{}] * 5000}),
        client.post("/api/analyze", data={"photo": (io.BytesIO(b"junk"), "x.jpg")},
                    content_type="multipart/form-data"),
        client.post("/api/rules/analyze", json={"tiles": []}),
    ]
    assert all(400 <= r.status_code < 500 for r in failures), [r.status_code for r in failures]
    after = client.get(f"/api/analyses/{stored}").json
    assert after["position"] == before["position"] and after["corrections"] == before["corrections"]


def test_unknown_analysis(client):
    assert client.get("/api/analyses/nothing").status_code == 404
    response = client.put("/api/analyses/nothing/position", json={"position": example_position()})
    assert response.status_code == 404 and response.json["code"] == "not_found"


def test_storage_survives_a_new_app_on_the_same_database(app, stored):
    from webapp import create_app

    again = create_app({"TESTING": True, "DATABASE": app.config["DATABASE"]})
    assert again.test_client().get(f"/a/{stored}").status_code == 200


def test_a_database_from_before_other_photos_were_kept_still_serves_its_analyses(tmp_path):
    """A database made before the other photos of a table were kept (no other_photo table) gains it
    on start, and its analyses, one read with a second photo among them, are served as they were."""
    import sqlite3

    from webapp import create_app

    path = tmp_path / "old.sqlite"
    old_schema = ("CREATE TABLE analysis (id TEXT PRIMARY KEY, created TEXT NOT NULL, updated TEXT NOT NULL, "
                  "source TEXT NOT NULL, photo BLOB NOT NULL, reading TEXT NOT NULL, overlay TEXT NOT NULL, "
                  "position TEXT NOT NULL, corrections TEXT NOT NULL DEFAULT '[]')")
    position = json.dumps(example_position())
    with sqlite3.connect(path) as db:
        db.execute(old_schema)
        for record, source in (("first", "upload"), ("both", "second-photo:first")):
            db.execute("INSERT INTO analysis VALUES (?, '2026-12-01T10:00:00+00:00', '2026-12-01T10:00:00+00:00', "
                       "?, ?, ?, '{\"cells\": {}, \"tops\": {}}', ?, '[]')",
                       (record, source, b"\xff\xd8\xff", json.dumps({**example_position(), "warnings": []}), position))
    db.close()
    client = create_app({"TESTING": True, "DATABASE": str(path)}).test_client()
    assert client.get("/api/analyses/first").json["position"] == json.loads(position)
    page = client.get("/a/both").get_data(as_text=True)
    assert "Read from two photos" in page and 'href="/a/first"' in page
    assert "Second photo" in page and "Read both photos" in page    # its second photo was not kept
    assert "UTC · with a second photo" in client.get("/").get_data(as_text=True)

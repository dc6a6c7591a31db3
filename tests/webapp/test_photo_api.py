"""POST /api/analyze and the gallery with the rendered sample photos of sample_images/."""

import io
import json

import cv2
import numpy as np
import pytest

from webapp_examples import SAMPLE_DIR
from webapp import referee

SAMPLES = sorted(SAMPLE_DIR.glob("*.jpg"))
# at most about 12 photos, spread over the set (editions, phases and tilts alternate in it)
SPREAD = SAMPLES[::max(1, len(SAMPLES) // 12)]
needs_samples = pytest.mark.skipif(not SAMPLES, reason="sample_images/ holds no photo yet")


@needs_samples
@pytest.mark.parametrize("path", SPREAD, ids=[p.stem for p in SPREAD])
def test_every_sample_gets_an_answer_or_a_page_to_correct_it(client, path):
    response = client.post("/api/analyze", data={"photo": (path.open("rb"), path.name), "to_move": "white"},
                           content_type="multipart/form-data")
    body = response.json
    if response.status_code == 200:
        assert body["position"]["to_move"] == "white"
        assert body["analysis"] == referee.answer(body["position"])
        assert "legal_moves" in body["analysis"]
    else:
        # vision read something impossible, no World, or could not cope: a 422 with a message
        assert response.status_code == 422, body
        assert body["code"] in {"impossible_reading", "no_world", "unreadable_photo", "vision_failed"}
        assert body["error"]
    if "link" in body:
        page = client.get(body["link"])
        assert page.status_code == 200
        stored = client.get(f"/api/analyses/{body['id']}").json
        assert stored["position"] == body.get("position", stored["position"])
        assert stored["reading"]["image"]["width"] > 0


@needs_samples
def test_gallery_sample_opens_its_result_page(client):
    name = SAMPLES[0].stem
    assert f'action="/samples/{name}"' in client.get("/").get_data(as_text=True)
    response = client.post(f"/samples/{name}")
    if response.status_code == 303:
        assert client.get(response.location).status_code == 200
    else:
        assert response.status_code == 422   # no World in it: the start page says so


SECOND = "s018-finished-redblack-tilt0_15"    # sample_images/second-photos: its table from another side


def _analyse(client, name, to_move="black"):
    path = SAMPLE_DIR / f"{name}.jpg"
    return client.post("/api/analyze", data={"photo": (path.open("rb"), path.name), "to_move": to_move},
                       content_type="multipart/form-data").json


def _second(client, analysis_id, path):
    return client.post(f"/api/analyses/{analysis_id}/second-photo", data={"photo": (path.open("rb"), path.name)},
                       content_type="multipart/form-data")


def test_a_second_photo_makes_a_new_analysis_and_leaves_the_first_as_it_was(client):
    first = _analyse(client, SECOND)
    client.put(f"/api/analyses/{first['id']}/position",
               json={"position": first["position"], "corrections": [{"kind": "note"}]})
    response = _second(client, first["id"], SAMPLE_DIR / "second-photos" / f"{SECOND}.jpg")
    assert response.status_code == 200, response.json
    both = response.json
    assert both["id"] != first["id"] and both["position"]["to_move"] == "black"
    assert both["analysis"] == referee.answer(both["position"])
    assert both["position"]["tiles"] == first["position"]["tiles"]
    assert [s["height"] for s in both["position"]["stacks"]] != [s["height"] for s in first["position"]["stacks"]]
    earlier = client.get(f"/api/analyses/{first['id']}").json
    assert earlier["corrections"] == [{"kind": "note"}] and earlier["position"] == first["position"]
    page = client.get(both["link"]).get_data(as_text=True)
    assert 'id="two-photos"' in page and f'href="/a/{first["id"]}"' in page
    assert 'id="two-photos"' not in client.get(first["link"]).get_data(as_text=True)
    assert "UTC · with a second photo" in client.get("/").get_data(as_text=True)


def test_a_third_photo_is_read_with_the_first_two_up_to_the_most_an_analysis_reads(client, app):
    """Posted to an analysis read from two photos, a third photo makes one read from all three
    (sample s015: two photos read a stack a disc off, three read every height); the page links to
    the first photo alone and offers a fourth until the most photos one analysis reads."""
    name = "s015-midgame-blackwhite-tilt0_15"
    one = _analyse(client, name)
    two = _second(client, one["id"], SAMPLE_DIR / "second-photos" / f"{name}.jpg").json
    response = _second(client, two["id"], SAMPLE_DIR / "third-photos" / f"{name}.jpg")
    assert response.status_code == 200, response.json
    three = response.json
    truth = json.loads((SAMPLE_DIR / f"{name}.json").read_text())["position"]
    heights = lambda position: sorted(len(s["discs"]) for s in position["stacks"])
    assert heights(two["position"]) != heights(truth) == heights(three["position"])
    page = client.get(three["link"]).get_data(as_text=True)
    assert "Read from three photos" in page and f'href="/a/{one["id"]}"' in page
    assert "Fourth photo" in page and "Read all four photos" in page
    assert "UTC · with 2 more photos" in client.get("/").get_data(as_text=True)
    app.config["ANALYSIS_MAX_PHOTOS"] = 3
    again = _second(client, three["id"], SAMPLE_DIR / "third-photos" / f"{name}.jpg")
    assert again.status_code == 422 and again.json["code"] == "too_many_photos"
    assert 'id="second-photo-form"' not in client.get(three["link"]).get_data(as_text=True)


def test_a_second_photo_of_another_table_or_none_is_a_clear_4xx(client, tmp_path):
    first = _analyse(client, SECOND)
    other = _second(client, first["id"], SAMPLE_DIR / "s062-midgame-silverred-tilt15_35.jpg")
    assert other.status_code == 422 and other.json["code"] == "different_world"
    assert "does not show the World of the first" in other.json["error"]
    blank = tmp_path / "blank.png"
    cv2.imwrite(str(blank), np.full((600, 800, 3), (90, 140, 170), np.uint8))
    none = _second(client, first["id"], blank)
    assert none.status_code == 422 and none.json["code"] == "no_world"
    assert none.json["error"].startswith("No EXXIT World found in the second photo")
    garbage = tmp_path / "bad.jpg"
    garbage.write_bytes(b"not a photo")
    assert _second(client, first["id"], garbage).status_code == 400
    missing = client.post(f"/api/analyses/{first['id']}/second-photo", data={}, content_type="multipart/form-data")
    assert missing.status_code == 400 and missing.json["code"] == "missing_photo"
    assert _second(client, "nosuchid", blank).status_code == 404


def test_the_result_page_form_reads_both_photos_and_opens_the_new_result(client):
    first = _analyse(client, SECOND)
    path = SAMPLE_DIR / "second-photos" / f"{SECOND}.jpg"
    response = client.post(f"/a/{first['id']}/second-photo", data={"photo": (path.open("rb"), path.name)},
                           content_type="multipart/form-data")
    assert response.status_code == 303 and response.location != f"/a/{first['id']}"
    assert 'id="two-photos"' in client.get(response.location).get_data(as_text=True)
    empty = client.post(f"/a/{first['id']}/second-photo", data={}, content_type="multipart/form-data")
    assert empty.status_code == 400 and "Choose the second photo first." in empty.get_data(as_text=True)


WEBCAM = {"format": "exxit-camera/1", "image_size": [1600, 1200],
          "K": [[1300.0, 0.0, 799.5], [0.0, 1300.0, 599.5], [0.0, 0.0, 1.0]]}


@needs_samples
def test_photos_are_read_through_the_configured_camera(app, tmp_path):
    """With a camera file (`python -m webapp --camera`), every photo is read through its lens: one
    without distortion reads as without a camera file; a photo of another shape than the camera's
    gets a 422 that says so."""
    path = SAMPLE_DIR / "s012-midgame-silverred-tilt0_15.jpg"
    post = lambda client, data: client.post("/api/analyze", data={"photo": (data, path.name)},
                                            content_type="multipart/form-data")
    plain = post(app.test_client(), path.open("rb"))
    camera = tmp_path / "camera.json"
    camera.write_text(json.dumps({**WEBCAM, "distortion": [0.0] * 5}))
    app.config["VISION_CAMERA"] = str(camera)
    through = post(app.test_client(), path.open("rb"))
    assert plain.status_code == through.status_code == 200
    assert through.json["position"]["tiles"] == plain.json["position"]["tiles"]
    upright = cv2.imencode(".jpg", cv2.rotate(cv2.imread(str(path)), cv2.ROTATE_90_CLOCKWISE))[1].tobytes()
    refused = post(app.test_client(), io.BytesIO(upright))
    assert refused.status_code == 422 and "measured on 1600x1200 photos" in refused.json["error"]


def test_the_photo_overlay_locates_the_cells_around_a_tile_set_aside():
    """A pair of tiles vision set aside an empty cell from the World reaches three cells out; the
    page draws a cell from its neighbours' centres, so those are in the overlay too."""
    from webapp_examples import EXAMPLE_TILES

    class Reading:
        tile_colours, stack_discs = EXAMPLE_TILES, {}
        named_cells = {(4, -2), (5, -3)}                 # an ignored-tiles warning's

        @staticmethod
        def cell_to_pixel(cell):
            return 40.0 * cell[0] + 400, 30.0 * cell[1] + 300

        stack_top_pixel = cell_to_pixel

    cells = referee.photo_overlay(Reading(), 800, 600)["cells"]
    assert {"5,-3", "6,-4", "6,-3", "5,-4", "4,-3", "4,-2", "5,-2"} <= set(cells)


@needs_samples
def test_every_photo_read_hands_its_memory_back(client, monkeypatch):
    # a server whose threads take turns reading photos keeps twice the memory unless each read
    # hands back what it freed (BENCHMARKS.md, "Web app"): after an answer and after a photo
    # vision finds no World in alike
    handed_back = []
    monkeypatch.setattr(referee, "return_freed_memory", lambda: handed_back.append(True))
    assert _analyse(client, SAMPLES[0].stem)["position"]
    blank = cv2.imencode(".png", np.full((600, 800, 3), 128, np.uint8))[1].tobytes()
    response = client.post("/api/analyze", data={"photo": (io.BytesIO(blank), "grey.png")},
                           content_type="multipart/form-data")
    assert response.status_code == 422
    assert len(handed_back) == 2


def test_handing_memory_back_needs_no_glibc(monkeypatch):
    monkeypatch.setattr(referee, "_MALLOC_TRIM", None)  # a C library without malloc_trim
    referee.return_freed_memory()                       # does nothing, and raises nothing

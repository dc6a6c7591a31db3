"""POST /api/analyze and the gallery with the rendered sample photos of sample_images/."""

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

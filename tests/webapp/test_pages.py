"""The start page, the form fallback, the sample gallery and the result page."""

import io
import json
import re

from PIL import Image

from webapp_examples import EXAMPLE_TILES, drawn_photo, example_position


def test_start_page_offers_upload_camera_and_samples(client, tmp_path, app):
    image, _ = drawn_photo({(0, 0): "white", (1, 0): "black"})
    image.save(tmp_path / "opening_demo.jpg")
    app.config["SAMPLE_DIR"] = str(tmp_path)
    page = client.get("/").get_data(as_text=True)
    assert re.search(r'<input[^>]*type="file"[^>]*accept="image/\*"[^>]*capture="environment"', page)
    assert 'enctype="multipart/form-data"' in page
    assert 'id="camera-button"' in page
    assert 'action="/samples/opening_demo"' in page
    thumb = client.get("/samples/opening_demo/thumb.jpg")
    assert thumb.status_code == 200
    assert max(Image.open(io.BytesIO(thumb.data)).size) <= 360
    assert client.get("/samples/opening_demo.jpg").status_code == 200


def test_sample_names_cannot_escape_the_folder(client):
    assert client.get("/samples/..%2Fsetup.jpg").status_code == 404
    assert client.post("/samples/nope").status_code == 404


def test_form_upload_of_a_non_image_shows_the_message_on_the_page(client):
    response = client.post("/upload", data={"photo": (io.BytesIO(b"not an image"), "x.txt")},
                           content_type="multipart/form-data")
    assert response.status_code == 400
    page = response.get_data(as_text=True)
    assert "This file is not an image" in page and "Traceback" not in page
    assert 'id="photo-input"' in page          # the user can try again at once


def test_a_sample_vision_cannot_read_is_named_in_the_message(client, tmp_path, app):
    Image.new("RGB", (800, 600), (120, 90, 60)).save(tmp_path / "bare_table.jpg")
    app.config["SAMPLE_DIR"] = str(tmp_path)
    response = client.post("/samples/bare_table", data={"to_move": "unknown"})
    assert response.status_code == 422
    page = response.get_data(as_text=True)
    assert "Sample photo bare_table: No EXXIT World found in this photo" in page
    assert 'id="photo-input"' in page


def test_form_upload_without_a_file(client):
    response = client.post("/upload", data={}, content_type="multipart/form-data")
    assert response.status_code == 400 and "Choose a photo first" in response.get_data(as_text=True)


def test_form_upload_too_large_is_a_friendly_page(app, client):
    app.config["MAX_CONTENT_LENGTH"] = 100_000
    response = client.post("/upload", data={"photo": (io.BytesIO(b"\xff" * 200_000), "big.jpg")},
                           content_type="multipart/form-data")
    assert response.status_code == 413
    assert "larger than" in response.get_data(as_text=True)


def test_result_page_embeds_the_analysis(client, stored):
    page = client.get(f"/a/{stored}").get_data(as_text=True)
    data = json.loads(re.search(r'<script type="application/json" id="record">(.*?)</script>',
                                page, re.S).group(1))
    assert data["id"] == stored
    assert data["analysis"]["forced_dances"]["white"][0]["text"] == "dance 0,0 W"
    assert data["overlay"]["cells"]["0,0"]
    assert f'data-photo="/a/{stored}/photo.jpg"' in page
    assert f"/a/{stored}" in page                        # the permanent link is shown
    assert "<b>dance 0,0 W</b>" in page                  # the answer, even without JavaScript


def test_unknown_result_page_is_a_404_page(client):
    response = client.get("/a/doesnotexist")
    assert response.status_code == 404
    assert "No analysis with this link" in response.get_data(as_text=True)


def test_photo_of_unknown_analysis(client):
    assert client.get("/a/doesnotexist/photo.jpg").status_code == 404


def test_start_page_lists_recent_analyses_with_their_answer(client, stored):
    page = client.get("/").get_data(as_text=True)
    assert f'href="/a/{stored}"' in page
    assert "dance 0,0 W, dance 0,1 NW; White 9 · Black 4" in page


def test_gallery_shows_samples_with_a_forced_dance_first(client, tmp_path, app):
    image, _ = drawn_photo(EXAMPLE_TILES)
    for name, position in [("a_quiet", {"tiles": [{"q": 0, "r": 0, "colour": "white"}]}),
                           ("b_dance", example_position())]:
        image.save(tmp_path / f"{name}.jpg")
        (tmp_path / f"{name}.json").write_text(json.dumps(
            {"position": position, "meta": {"edition": "silver-red", "phase": "midgame", "tilt_deg": 31.6}}))
    app.config["SAMPLE_DIR"] = str(tmp_path)
    page = client.get("/").get_data(as_text=True)
    assert page.index('action="/samples/b_dance"') < page.index('action="/samples/a_quiet"')
    assert "silver-red · midgame · camera tilt 32° · true position: <b>a dance is forced</b>" in page

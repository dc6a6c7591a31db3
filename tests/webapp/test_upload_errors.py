"""POST /api/analyze with every kind of bad upload: a clear message, a 4xx, never a traceback."""

import io

import pytest
from PIL import Image

from webapp_examples import jpeg_bytes


def post_photo(client, data, filename="photo.jpg", **form):
    return client.post("/api/analyze", data=dict(form, photo=(io.BytesIO(data), filename)),
                       content_type="multipart/form-data")


def assert_error(response, status, code):
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.is_json
    assert response.json["code"] == code
    assert response.json["error"] and "Traceback" not in response.json["error"]


def a_jpeg(width=640, height=480):
    return jpeg_bytes(Image.new("RGB", (width, height), (90, 120, 70)), quality=90)


def test_missing_photo_field(client):
    assert_error(client.post("/api/analyze", data={"to_move": "white"}), 400, "missing_photo")


def test_empty_file(client):
    assert_error(post_photo(client, b""), 400, "empty_photo")


def test_text_file(client):
    assert_error(post_photo(client, b"hello, this is not a photo\n" * 50, "notes.txt"), 400,
                 "not_an_image")


def test_truncated_jpeg(client):
    data = a_jpeg()
    assert_error(post_photo(client, data[: len(data) // 2]), 400, "corrupt_image")


def test_corrupt_jpeg_header(client):
    data = bytearray(a_jpeg())
    data[20:400] = b"\x00" * 380
    response = post_photo(client, bytes(data))
    assert response.status_code == 400 and response.json["code"] in {"corrupt_image", "not_an_image"}


def test_unsupported_format(client):
    out = io.BytesIO()
    Image.new("P", (64, 64)).save(out, "GIF")
    assert_error(post_photo(client, out.getvalue(), "a.gif"), 400, "unsupported_image")


@pytest.mark.parametrize("width,height", [(16, 16), (480, 48)])
def test_tiny_image(client, width, height):
    response = post_photo(client, a_jpeg(width, height))
    assert_error(response, 422, "image_too_small")
    assert f"{width}x{height}" in response.json["error"]


@pytest.mark.filterwarnings("ignore::PIL.Image.DecompressionBombWarning")
def test_decompression_bomb_is_refused_before_decoding(client):
    out = io.BytesIO()
    Image.new("1", (12000, 12000)).save(out, "PNG")   # 144 megapixels in about 20 kB
    assert len(out.getvalue()) < 100_000
    assert_error(post_photo(client, out.getvalue(), "bomb.png"), 413, "too_many_pixels")


def test_pixel_limit_is_configurable(app, client):
    app.config["MAX_IMAGE_PIXELS"] = 100_000
    response = post_photo(client, a_jpeg(640, 480))
    assert_error(response, 413, "too_many_pixels")
    assert "megapixels" in response.json["error"]


def test_upload_over_the_size_limit(app, client):
    app.config["MAX_CONTENT_LENGTH"] = 200_000
    response = post_photo(client, b"\xff" * 300_000)
    assert_error(response, 413, "too_large")
    assert "MB" in response.json["error"]


def test_default_size_limit_is_25_mb(app):
    assert app.config["MAX_CONTENT_LENGTH"] == 25 * 1024 * 1024


@pytest.mark.parametrize("side", ["green", "both"])
def test_bad_side_to_move(client, side):
    assert_error(post_photo(client, a_jpeg(), to_move=side), 400, "bad_to_move")


@pytest.mark.parametrize("image", [
    Image.new("RGB", (1200, 900), (90, 120, 70)),
    Image.effect_noise((1200, 900), 60).convert("RGB"),
], ids=["plain", "noise"])
def test_photo_without_a_world(client, image):
    """A photo that decodes fine but holds no EXXIT World: 422 with vision's message."""
    response = post_photo(client, jpeg_bytes(image))
    assert_error(response, 422, "no_world")
    message = response.json["error"]
    assert message.startswith("No EXXIT World found in this photo (")
    assert "whole World in view" in message


def test_an_iphone_heic_photo_is_refused_with_what_to_do(client):
    heic = b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic" + bytes(4096)
    response = post_photo(client, heic, "IMG_0001.HEIC")
    assert_error(response, 400, "unsupported_image")
    assert "HEIC" in response.json["error"] and "JPEG" in response.json["error"]

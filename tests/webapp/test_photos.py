"""Decoding uploads: phone photos are turned upright and big ones shrunk before vision reads them."""

import io

import pytest
from PIL import Image

from webapp.errors import InputError
from webapp.photos import decode_photo


def jpeg_with_orientation(width, height, orientation):
    image = Image.new("RGB", (width, height), (200, 30, 30))
    image.paste((20, 20, 200), (0, 0, width // 4, height // 4))   # a blue top-left corner
    exif = Image.Exif()
    exif[0x0112] = orientation
    out = io.BytesIO()
    image.save(out, "JPEG", exif=exif.tobytes())
    return out.getvalue()


def test_exif_rotation_is_applied():
    photo = decode_photo(jpeg_with_orientation(400, 300, 6), 40_000_000, 2400)   # 90° clockwise
    assert (photo.width, photo.height) == (300, 400)
    b, g, r = photo.bgr[10, photo.width - 10]          # the blue corner is now top-right
    assert b > 150 and r < 80
    stored = Image.open(io.BytesIO(photo.jpeg))
    assert stored.size == (300, 400) and stored.getexif().get(0x0112) in (None, 1)


def test_big_photos_are_shrunk_to_the_working_size():
    photo = decode_photo(jpeg_with_orientation(4000, 3000, 1), 40_000_000, 1600)
    assert (photo.width, photo.height) == (1600, 1200)
    assert Image.open(io.BytesIO(photo.jpeg)).size == (1600, 1200)


def test_png_is_accepted():
    out = io.BytesIO()
    Image.new("RGBA", (200, 100), (0, 0, 0, 0)).save(out, "PNG")
    assert decode_photo(out.getvalue(), 40_000_000, 2400).bgr.shape == (100, 200, 3)


def test_pixel_limit_counts_pixels_not_bytes():
    with pytest.raises(InputError) as error:
        decode_photo(jpeg_with_orientation(3000, 2000, 1), 5_000_000, 2400)
    assert error.value.status == 413 and error.value.code == "too_many_pixels"

"""Decoding uploads: phone photos are turned upright and big ones shrunk before vision reads them;
the others are kept as sent, without their metadata."""

import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import vision
from webapp.errors import InputError
from webapp.photos import decode_photo, strip_jpeg_metadata

SAMPLE = Path(__file__).parents[2] / "sample_images" / "s002-opening-redblack-tilt15_35.jpg"
GPS_IFD = 0x8825


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


def phone_jpeg(progressive=False, trailer=b""):
    """A sample photo saved as a phone would: EXIF with a GPS position, a comment, an ICC profile,
    and (for a motion photo) data after the image's end."""
    image = Image.open(SAMPLE)
    exif = Image.Exif()
    exif[0x010F] = "PhoneMaker"
    exif.get_ifd(GPS_IFD)[2] = (48.0, 51.0, 24.0)     # latitude
    out = io.BytesIO()
    image.save(out, "JPEG", quality=93, exif=exif.tobytes(), comment=b"at home", progressive=progressive,
               icc_profile=b"\0" * 128)
    return out.getvalue() + trailer


@pytest.mark.parametrize("progressive", [False, True])
def test_a_jpeg_that_needs_no_change_is_read_and_stored_as_sent_without_its_metadata(progressive):
    sent = phone_jpeg(progressive, trailer=b"ftypmp42 a motion photo's video")
    photo = decode_photo(sent, 40_000_000, 2400)
    as_sent, _ = vision.decode_image(sent)
    assert np.array_equal(photo.bgr, as_sent)               # the camera's pixels, not a re-encoding
    assert np.array_equal(vision.decode_image(photo.jpeg)[0], as_sent)
    stored = Image.open(io.BytesIO(photo.jpeg))
    assert not stored.getexif() and "comment" not in stored.info and b"PhoneMaker" not in photo.jpeg
    assert stored.info.get("icc_profile") == b"\0" * 128     # colours shown as the camera meant
    assert b"motion photo" not in photo.jpeg
    assert decode_photo(photo.jpeg, 40_000_000, 2400).jpeg == photo.jpeg   # read again, it is the same photo


def test_metadata_is_cut_without_touching_the_scans():
    sent = phone_jpeg()
    stripped = strip_jpeg_metadata(sent)
    scans_from = sent.index(b"\xff\xda")
    assert stripped.endswith(sent[scans_from:])
    assert len(stripped) < len(sent) and strip_jpeg_metadata(stripped) == stripped


@pytest.mark.parametrize("broken", [b"", b"not a jpeg", b"\xff\xd8\xff\xe1\x00", b"\xff\xd8\xff\xda\x00\x08abcdef"])
def test_what_is_not_a_whole_jpeg_has_no_stripped_form(broken):
    assert strip_jpeg_metadata(broken) is None
    assert strip_jpeg_metadata(phone_jpeg()[:-5000]) is None

import io
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

from vision.errors import UnreadableImageError
from vision.loading import BLURRED_EDGE_PX, MAX_PIXELS, WORK_LONG_SIDE, decode_image, load_image, measure_blur

SAMPLE_PHOTO = Path(__file__).resolve().parents[2] / "sample_images" / "s002-opening-redblack-tilt15_35.jpg"


def _encode(img_rgb, fmt, **kw):
    buf = io.BytesIO()
    Image.fromarray(img_rgb).save(buf, fmt, **kw)
    return buf.getvalue()


@pytest.fixture
def rgb():
    img = np.zeros((300, 400, 3), np.uint8)
    img[:, :200] = (200, 30, 30)          # red left half
    return img


@pytest.mark.parametrize("fmt", ["JPEG", "PNG", "WEBP"])
def test_formats_load_as_bgr(rgb, fmt):
    loaded = load_image(_encode(rgb, fmt, quality=95) if fmt != "PNG" else _encode(rgb, fmt))
    assert loaded.full.shape == (300, 400, 3)
    b, g, r = loaded.full[150, 50]
    assert r > 150 and b < 80            # red stays red: channels in BGR order


def test_a_16_bit_grey_photo_keeps_its_greys(rgb):
    grey = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    ok, png16 = cv2.imencode(".png", grey.astype(np.uint16) * 257)
    assert ok and Image.open(io.BytesIO(png16.tobytes())).mode.startswith("I")
    loaded = load_image(png16.tobytes())
    assert np.abs(loaded.full[..., 1].astype(int) - grey).max() <= 1     # not clipped to white
    assert loaded.full[150, 50, 1] < 120 and loaded.full[150, 300, 1] == 0


def test_exif_orientation_applied(rgb):
    exif = Image.Exif()
    exif[0x0112] = 6                     # rotate 90° clockwise on display
    data = _encode(rgb, "JPEG", exif=exif.tobytes())
    loaded = load_image(data)
    assert loaded.full.shape[:2] == (400, 300)
    b, g, r = loaded.full[50, 150]       # the red half is now on top
    assert r > 150


def test_working_resolution_keeps_full(tmp_path):
    big = np.full((3000, 4000, 3), 128, np.uint8)
    path = tmp_path / "big.png"
    cv2.imwrite(str(path), big)
    loaded = load_image(path)
    assert loaded.full.shape[:2] == (3000, 4000)
    assert max(loaded.work.shape[:2]) == WORK_LONG_SIDE
    assert loaded.scale == pytest.approx(WORK_LONG_SIDE / 4000)


def test_a_small_photo_is_enlarged_to_the_working_resolution(tmp_path):
    small = np.full((480, 640, 3), 128, np.uint8)
    path = tmp_path / "frame.png"
    cv2.imwrite(str(path), small)
    loaded = load_image(path)
    assert loaded.full.shape[:2] == (480, 640) and loaded.size == (640, 480)
    assert loaded.work.shape[:2] == (750, WORK_LONG_SIDE)
    assert loaded.scale == pytest.approx(WORK_LONG_SIDE / 640)


@pytest.mark.parametrize("data,needle", [
    (b"", "empty"),
    (b"not an image at all", "not an image"),
    (b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic" + bytes(64), "HEIC.*save it as JPEG"),   # an iPhone's photo
])
def test_garbage_is_refused(data, needle):
    with pytest.raises(UnreadableImageError, match=needle):
        load_image(data)


def _gif():
    buf = io.BytesIO()
    Image.new("P", (64, 64)).save(buf, "GIF")
    return buf.getvalue()


@pytest.mark.parametrize("data,reason", [
    (b"", "empty"),
    (b"not an image at all", "not_an_image"),
    (b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic" + bytes(64), "unsupported"),
    (_gif(), "unsupported"),
    (_encode(np.zeros((40, 400, 3), np.uint8), "PNG"), "too_small"),
    (_encode(np.zeros((300, 400, 3), np.uint8), "JPEG")[:2000], "corrupt"),
], ids=["empty", "text", "heic", "gif", "thin", "truncated"])
def test_each_refusal_names_its_reason(data, reason):
    """Callers answer each case their own way (the web app: its HTTP status), by the reason."""
    with pytest.raises(UnreadableImageError) as refused:
        decode_image(data)
    assert refused.value.reason == reason


def test_the_pixel_limit_is_the_callers_and_checked_before_decoding(rgb):
    data = _encode(rgb, "PNG")
    with pytest.raises(UnreadableImageError, match="400x300 pixels.*limit is 0.1 megapixels") as refused:
        decode_image(data, max_pixels=100_000)
    assert refused.value.reason == "too_many_pixels"
    bgr, size = decode_image(data, max_pixels=120_000)
    assert bgr.shape == (300, 400, 3) and size == (400, 300)


def test_a_jpeg_is_decoded_smaller_when_asked_but_never_below_the_size_asked():
    data = _encode(np.full((3000, 4000, 3), 90, np.uint8), "JPEG")
    bgr, size = decode_image(data, reduce_to=900)
    assert size == (4000, 3000) and bgr.shape == (1500, 2000, 3)      # libjpeg's 1/2 scale


def test_truncated_jpeg_is_refused(rgb):
    data = _encode(rgb, "JPEG")
    with pytest.raises(UnreadableImageError, match="truncated|broken"):
        load_image(data[: len(data) // 2])


def test_decompression_bomb_is_refused():
    side = int((MAX_PIXELS * 1.1) ** 0.5)
    img = Image.new("1", (side, side))
    buf = io.BytesIO()
    img.save(buf, "PNG")                 # a few kB that would inflate to > MAX_PIXELS
    assert len(buf.getvalue()) < 2_000_000
    with pytest.raises(UnreadableImageError, match="too large"):
        load_image(buf.getvalue())


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(UnreadableImageError, match="no such file"):
        load_image(tmp_path / "nope.jpg")
    with pytest.raises(UnreadableImageError, match="directory"):
        load_image(tmp_path)


def test_tiny_image_is_refused():
    with pytest.raises(UnreadableImageError, match="too small"):
        load_image(np.zeros((10, 10, 3), np.uint8))


def test_the_grey_working_image_is_made_once(rgb):
    image = load_image(cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR))
    assert np.array_equal(image.gray, cv2.cvtColor(image.work, cv2.COLOR_BGR2GRAY))
    assert image.gray is image.gray


def test_the_lab_working_image_is_made_once_for_every_colour_model(rgb):
    image = load_image(cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR))
    assert image.lab.shape == image.work.shape and image.lab.dtype == np.float32
    assert 0 <= image.lab[..., 0].min() and image.lab[..., 0].max() <= 100
    assert image.lab is image.lab


def _hexagons(blur: float) -> np.ndarray:
    """Light hexagons on a dark table, blurred by `blur` pixels (0: as drawn)."""
    img = np.full((400, 600), 40, np.uint8)
    for cx in range(80, 600, 140):
        for cy in (100, 300):
            angles = np.deg2rad(np.arange(6) * 60 + 30)
            pts = np.stack([cx + 60 * np.cos(angles), cy + 60 * np.sin(angles)], 1).round().astype(np.int32)
            cv2.fillPoly(img, [pts], 200)
    return img if blur == 0 else cv2.GaussianBlur(img, (0, 0), blur)


def _blur(gray) -> float:
    return measure_blur(gray).sigma


def test_the_blur_measured_is_how_far_the_edges_are_spread():
    as_drawn, blurred2, blurred3 = (measure_blur(_hexagons(b)) for b in (0, 2.0, 3.0))
    assert as_drawn.sigma < 1.0
    assert blurred2.sigma == pytest.approx(2.0, abs=0.35) and blurred2.shake is None
    assert blurred3.sigma == pytest.approx(3.0, abs=0.45) and blurred3.shake is None
    assert _blur(np.full((100, 100), 90, np.uint8)) == 0.0       # no edges, nothing to measure


def _discs() -> np.ndarray:
    """Light discs on a dark table: edges facing every way."""
    img = np.full((400, 600), 40, np.uint8)
    for cx in range(70, 600, 115):
        for cy in (90, 300):
            cv2.circle(img, (cx, cy), 45, 200, -1, cv2.LINE_AA)
    return img


@pytest.mark.parametrize("kernel, direction", [((1, 9), 0.0), ((9, 1), np.pi / 2)])
def test_a_shaken_camera_is_seen_with_the_direction_it_moved_though_the_edges_along_it_stay_sharp(kernel, direction):
    shaken = measure_blur(cv2.filter2D(_discs(), -1, np.full(kernel, 1 / 9, np.float32)))   # 9 px
    assert shaken.sigma > BLURRED_EDGE_PX
    off = abs((shaken.shake - direction + np.pi / 2) % np.pi - np.pi / 2)      # a direction and its opposite
    assert off < np.radians(20)
    as_drawn = measure_blur(_discs())
    assert as_drawn.sigma < BLURRED_EDGE_PX and as_drawn.shake is None


def test_a_blurred_photo_is_sharpened_and_a_sharp_one_left_as_it_is():
    photo = cv2.imread(str(SAMPLE_PHOTO))
    assert not load_image(photo).sharpened
    blurred = cv2.GaussianBlur(photo, (0, 0), 2.0)            # out of focus, at 1600x1200
    loaded = load_image(blurred)
    assert loaded.sharpened and loaded.blur.shake is None
    detail = loaded.with_work_side(1400)                      # a finer look is sharpened as well
    assert detail.sharpened
    for image in (loaded, detail):
        as_blurred = cv2.resize(cv2.cvtColor(blurred, cv2.COLOR_BGR2GRAY), image.work.shape[1::-1],
                                interpolation=cv2.INTER_AREA)
        assert _blur(image.gray) < _blur(as_blurred) - 0.1


def test_a_shaken_photo_is_sharpened_along_the_shake():
    photo = cv2.imread(str(SAMPLE_PHOTO))
    shaken = cv2.filter2D(photo, -1, np.full((1, 13), 1 / 13, np.float32))    # 13 px sideways, at 1600x1200
    loaded = load_image(shaken)
    assert loaded.sharpened and abs((loaded.blur.shake + np.pi / 2) % np.pi - np.pi / 2) < np.radians(20)
    as_shaken = cv2.resize(cv2.cvtColor(shaken, cv2.COLOR_BGR2GRAY), loaded.work.shape[1::-1], interpolation=cv2.INTER_AREA)
    assert _blur(loaded.gray) < _blur(as_shaken) - 0.1

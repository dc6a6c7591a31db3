"""Checking and decoding an uploaded photo before vision sees it.

vision.decode_image reads only the header first, so the pixel-count limit rejects decompression
bombs before any pixel is decoded; a truncated or corrupt file fails while decoding, never later
inside vision.

A JPEG that needs neither turning nor shrinking is stored as it was sent, with its metadata (a
phone's GPS position among it) cut out and not re-encoded, so the web app reads the pixels the
camera wrote, as `python -m vision analyze` does. Other photos are stored re-encoded.
"""

from dataclasses import dataclass

import cv2
import numpy as np

import vision

from .errors import InputError, sentence

JPEG_QUALITY = 90
UPLOAD_ERRORS = {   # vision's reason an image cannot be read -> (HTTP status, error code)
    "empty": (400, "empty_photo"),
    "not_an_image": (400, "not_an_image"),
    "unsupported": (400, "unsupported_image"),
    "corrupt": (400, "corrupt_image"),
    "too_many_pixels": (413, "too_many_pixels"),
    "too_large": (413, "too_large"),
    "too_small": (422, "image_too_small"),
}


@dataclass(frozen=True)
class Photo:
    """A decoded photo: ``jpeg`` to store and show, ``bgr`` its pixels for vision."""

    bgr: np.ndarray
    jpeg: bytes

    @property
    def width(self):
        return self.bgr.shape[1]

    @property
    def height(self):
        return self.bgr.shape[0]


def decode_photo(data, max_pixels, max_side):
    """Validate and decode image bytes; raise InputError with a user-facing message.

    The photo is turned upright by its EXIF orientation and shrunk to ``max_side`` pixels.
    """
    try:
        bgr, _ = vision.decode_image(data, reduce_to=max_side, max_pixels=max_pixels)
    except vision.UnreadableImageError as exc:
        status, code = UPLOAD_ERRORS.get(exc.reason, (400, "unreadable_image"))
        raise InputError(sentence(str(exc)), code, status)
    as_sent = _jpeg_as_sent(data, bgr, max_side)
    if as_sent is not None:
        return as_sent
    height, width = bgr.shape[:2]
    if max(width, height) > max_side:
        scale = max_side / max(width, height)
        bgr = cv2.resize(bgr, (round(width * scale), round(height * scale)), interpolation=cv2.INTER_AREA)
    _, jpeg = cv2.imencode(".jpg", bgr, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
    # vision reads the very pixels that are stored, so a stored photo read again reads the same
    return Photo(bgr=cv2.imdecode(jpeg, cv2.IMREAD_COLOR), jpeg=jpeg.tobytes())


def _jpeg_as_sent(data, bgr, max_side):
    """The photo as sent, metadata cut out, if it is a JPEG that decodes to ``bgr`` (no turning,
    no shrinking) without its metadata; else None."""
    if max(bgr.shape[:2]) > max_side:
        return None
    stripped = strip_jpeg_metadata(data)
    if stripped is None:
        return None
    try:
        pixels, _ = vision.decode_image(stripped)
    except vision.UnreadableImageError:
        return None
    if pixels.shape != bgr.shape or not np.array_equal(pixels, bgr):
        return None
    return Photo(bgr=pixels, jpeg=stripped)


KEPT_APP_SEGMENTS = {0xE0: b"JFIF\0", 0xE2: b"ICC_PROFILE\0", 0xEE: b"Adobe"}   # APPn marker -> its identifier
SOS, EOI = 0xDA, 0xD9
RESTARTS = range(0xD0, 0xD8)


def strip_jpeg_metadata(data):
    """The JPEG ``data`` without its metadata: EXIF (with its GPS position and orientation), XMP,
    IPTC, comments, maker segments, thumbnails and anything after the image's end (a motion
    photo's video). What the pixels need (tables, frame, scans, the JFIF and Adobe colour headers,
    the ICC colour profile) is kept byte for byte. None if ``data`` is not a well-formed JPEG."""
    if data[:2] != b"\xff\xd8":
        return None
    kept = [data[:2]]
    i = 2
    while i + 1 < len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == 0xFF:                  # fill byte before a marker
            i += 1
            continue
        if marker == EOI:
            kept.append(data[i:i + 2])
            return b"".join(kept)
        if marker in RESTARTS or marker == 0x01:
            return None                     # no segment starts so outside a scan
        if i + 4 > len(data):
            return None
        end = i + 2 + int.from_bytes(data[i + 2:i + 4], "big")
        if end - i < 4 or end > len(data):
            return None
        if marker == SOS:
            end = _scan_end(data, end)
            if end is None:
                return None
        if not _is_metadata(marker, data[i + 4:end]):
            kept.append(data[i:end])
        i = end
    return None


def _is_metadata(marker, payload):
    if marker == 0xFE:                      # COM
        return True
    if 0xE0 <= marker <= 0xEF:
        identifier = KEPT_APP_SEGMENTS.get(marker)
        return identifier is None or not payload.startswith(identifier)
    return False


def _scan_end(data, start):
    """Where the entropy-coded data from ``start`` ends: the next marker that is not a stuffed
    0xFF or a restart; None if the data ends first."""
    i = start
    while True:
        i = data.find(b"\xff", i)
        if i < 0 or i + 1 >= len(data):
            return None
        following = data[i + 1]
        if following == 0x00 or following in RESTARTS:
            i += 2
        elif following == 0xFF:
            i += 1
        else:
            return i

"""Checking and decoding an uploaded photo before vision sees it.

vision.decode_image reads only the header first, so the pixel-count limit rejects decompression
bombs before any pixel is decoded; a truncated or corrupt file fails while decoding, never later
inside vision.
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
    height, width = bgr.shape[:2]
    if max(width, height) > max_side:
        scale = max_side / max(width, height)
        bgr = cv2.resize(bgr, (round(width * scale), round(height * scale)), interpolation=cv2.INTER_AREA)
    _, jpeg = cv2.imencode(".jpg", bgr, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
    # vision reads the very pixels that are stored, so a stored photo read again reads the same
    return Photo(bgr=cv2.imdecode(jpeg, cv2.IMREAD_COLOR), jpeg=jpeg.tobytes())

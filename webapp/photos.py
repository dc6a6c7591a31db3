"""Checking and decoding an uploaded photo before vision sees it.

Pillow reads only the header first, so the pixel-count limit rejects decompression bombs before any
pixel is decoded; a truncated or corrupt file fails while decoding, never later inside vision.
"""

import io
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

import vision

from .errors import InputError


@dataclass(frozen=True)
class Photo:
    """A decoded photo: ``bgr`` for vision, ``jpeg`` to store and show (same pixels, same size)."""

    bgr: np.ndarray
    jpeg: bytes

    @property
    def width(self):
        return self.bgr.shape[1]

    @property
    def height(self):
        return self.bgr.shape[0]


def _too_many_pixels(pixels, max_pixels):
    return InputError(
        f"The image has {pixels / 1e6:.0f} megapixels; the limit is {max_pixels / 1e6:.0f}. "
        "Take a smaller photo.", "too_many_pixels", 413)


def decode_photo(data, max_pixels, max_side):
    """Validate and decode image bytes; raise InputError with a user-facing message.

    The photo is turned upright by its EXIF orientation and shrunk to ``max_side`` pixels.
    """
    if not data:
        raise InputError("The upload is empty: choose a photo.", "empty_photo", 400)
    try:
        image = Image.open(io.BytesIO(data))
    except UnidentifiedImageError:
        if vision.is_heif_photo(data):
            raise InputError("This is an HEIC photo (what iPhones take by default), which cannot be read here: "
                             "send it as JPEG, or set the camera to Most Compatible (Settings > Camera > Formats).",
                             "unsupported_image", 400)
        raise InputError("This file is not an image: send a JPEG or PNG photo.", "not_an_image", 400)
    except Image.DecompressionBombError:
        raise _too_many_pixels(max_pixels + 1, max_pixels)
    if image.format not in vision.IMAGE_FORMATS:
        raise InputError(f"{image.format} images are not supported: send a JPEG or PNG photo.",
                         "unsupported_image", 400)
    width, height = image.size
    if width * height > max_pixels:
        raise _too_many_pixels(width * height, max_pixels)
    if width < 32 or height < 32:
        raise InputError(f"The image is only {width}×{height} pixels: too small to read a game.",
                         "image_too_small", 422)
    try:
        if image.format == "JPEG":
            image.draft("RGB", (max_side, max_side))
        image.load()
        image = ImageOps.exif_transpose(image).convert("RGB")
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError):
        raise InputError("The image is corrupt or truncated: send the photo again.",
                         "corrupt_image", 400)
    if max(image.size) > max_side:
        image.thumbnail((max_side, max_side), Image.Resampling.LANCZOS)
    out = io.BytesIO()
    image.save(out, "JPEG", quality=90)
    rgb = np.asarray(image)
    return Photo(bgr=np.ascontiguousarray(rgb[:, :, ::-1]), jpeg=out.getvalue())

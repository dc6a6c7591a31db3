"""Stage 0: read a photo (path, bytes or BGR array) into a full-resolution and a working image."""
from __future__ import annotations

import functools
import io
import warnings
from dataclasses import dataclass, replace
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from .errors import UnreadableImageError
from .lens import Lens

MAX_PIXELS = 50_000_000          # beyond this we refuse (decompression bombs, absurd scans)
MAX_BYTES = 60 * 1024 * 1024
MIN_SIDE = 64
WORK_LONG_SIDE = 1000            # the working resolution for the global stages
DETAIL_LONG_SIDE = 1400          # ... when the World fills only a small part of the photo
BLURRED_EDGE_PX = 1.25           # a working image whose edges are blurred more than this (measure_blur) is sharpened
SHAKEN_EDGES = 1.4               # ... along a shake when its edges of one direction are this much more blurred
SHARPEN_SIGMA_PX = 1.0           # the unsharp mask's blur, in working pixels (1.5 times that along a shake)
SHAKE_SIGMA = 1.5
SHARPEN_AMOUNT = 1.0             # ... and how much of the difference it adds
EDGE_BLUR_SAMPLES = 2000         # edge pixels measure_blur looks at
REBLUR_PX = 1.0                  # ... and the known blur it adds to them
IMAGE_FORMATS = frozenset({"JPEG", "PNG", "WEBP", "MPO", "BMP", "TIFF"})   # Pillow's names of the formats read
HEIF_BRANDS = {b"heic", b"heix", b"hevc", b"hevx", b"heim", b"heis", b"mif1", b"msf1"}   # an HEIC photo's 'ftyp'


@dataclass
class LoadedImage:
    work: np.ndarray             # BGR uint8, long side WORK_LONG_SIDE (or more: with_work_side)
    scale: float                 # work = full * scale
    size: tuple                  # (width, height) of the full image, EXIF orientation applied
    lens: Lens | None = None     # the lens the photo was taken through, for its size: both images undistorted
    blur: "Blur | None" = None   # the photo's blur when the working images are sharpened against it
    _full: np.ndarray | None = None
    _data: bytes | None = None

    def with_work_side(self, long_side: int) -> "LoadedImage":
        """The same photo with a larger working image (for a World that fills little of it)."""
        w, h = self.size
        scale = min(1.0, long_side / max(w, h))
        if scale <= self.scale:
            return self
        full = self.full
        work = full if scale == 1.0 else cv2.resize(full, (round(w * scale), round(h * scale)),
                                                    interpolation=cv2.INTER_AREA)
        if self.sharpened:      # the blur is the photo's: wider in the larger image's pixels
            work = sharpen(work, self.blur, work.shape[1] / self.work.shape[1])
        return LoadedImage(work=work, scale=work.shape[1] / w, size=self.size, lens=self.lens,
                           blur=self.blur, _full=full, _data=self._data)

    @property
    def sharpened(self) -> bool:
        """Whether the photo was measured as blurred, and its working images are sharpened."""
        return self.blur is not None

    @functools.cached_property
    def gray(self) -> np.ndarray:
        """The working image in grey (made once, however many colour models try it)."""
        return cv2.cvtColor(self.work, cv2.COLOR_BGR2GRAY)

    @functools.cached_property
    def lab(self) -> np.ndarray:
        """The working image in Lab (float32, L 0..100), lightly smoothed: what the colour models
        learn from (made once, however many of them try it)."""
        smooth = cv2.GaussianBlur(self.work, (3, 3), 0)
        return cv2.cvtColor(smooth.astype(np.float32) / 255.0, cv2.COLOR_BGR2Lab)

    @functools.cached_property
    def lightness_gradient(self) -> np.ndarray:
        """Gradient magnitude of the working image's lightness (made once, however many colour
        models use it)."""
        return lightness_gradient(self.lab)

    @functools.cached_property
    def colour_gradients(self) -> tuple:
        """The working image's colour gradients (colour_gradients), made once."""
        return colour_gradients(self.lab)

    @property
    def full(self) -> np.ndarray:
        """The full-resolution BGR image (decoded on first use: the stages work on `work`)."""
        if self._full is None:
            full, _ = decode_image(self._data)
            self._full = full if self.lens is None else self.lens.undistort(full)
        return self._full


def lightness_gradient(lab: np.ndarray) -> np.ndarray:
    """Gradient magnitude of a Lab image's lightness, slightly smoothed."""
    smooth = cv2.GaussianBlur(lab[..., 0], (0, 0), 1.2)
    return np.hypot(cv2.Sobel(smooth, cv2.CV_32F, 1, 0, ksize=3), cv2.Sobel(smooth, cv2.CV_32F, 0, 1, ksize=3))


def colour_gradients(lab: np.ndarray) -> tuple:
    """(gx, gy, magnitude) of a Lab image's colour gradients, lightly smoothed: gx and gy (h, w, 3)
    per channel (a and b weighed 1.2 against L), the magnitude (h, w) over all three."""
    lab = cv2.GaussianBlur(lab, (3, 3), 0) * np.array([1.0, 1.2, 1.2], np.float32)
    gx = cv2.Sobel(lab, cv2.CV_32F, 1, 0, ksize=3) / 8
    gy = cv2.Sobel(lab, cv2.CV_32F, 0, 1, ksize=3) / 8
    sq = gx * gx + gy * gy
    return gx, gy, np.sqrt(sq[..., 0] + sq[..., 1] + sq[..., 2])


def load_image(source, lens: Lens | None = None) -> LoadedImage:
    """Read `source` (a path, bytes or a BGR/gray ndarray); raise UnreadableImageError if we can't.
    With the `lens` the photo was taken through (vision.lens), the images are undistorted: what a
    pinhole camera would have taken (LensError if the photo's shape is not the lens's).

    JPEGs are decoded straight at about the working resolution (libjpeg's DCT scaling), which
    is what makes large photos cheap; the full image is decoded only if someone asks for it."""
    data = None
    if isinstance(source, np.ndarray):
        full = _from_array(source)
        size = (full.shape[1], full.shape[0])
        reduced = full
    else:
        data = read_photo_bytes(source)
        full = None
        reduced, size = decode_image(data, reduce_to=WORK_LONG_SIDE)
    w, h = size
    scale = WORK_LONG_SIDE / max(h, w)
    rh, rw = reduced.shape[:2]
    if scale == 1.0 and (rw, rh) == (w, h):
        work = reduced
    else:   # a smaller photo (a 640x480 video frame) enlarged: the stages' sizes are the working image's
        work = cv2.resize(reduced, (round(w * scale), round(h * scale)),
                          interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_CUBIC)
    if scale >= 1.0 and full is None and (rw, rh) == (w, h):
        full = reduced
    if lens is not None:
        lens = lens.scaled_to((w, h))
        undistorted = lens.undistort(work)
        if full is not None:
            full = undistorted if full is work else lens.undistort(full)
        work = undistorted
    # a blurred photo's stacks lose their discs' edges: sharpened, fresh 107 and 108 blurred 2 px (at
    # 1600x1200) read 672 heights right, not 664, and 105 photos' forced dances of 144, not 99; shaken
    # 9 px and sharpened along the shake, 136 Worlds exact, not 134, and 678 heights, not 659; a sharp
    # photo is left as it is, since sharpening costs it reads (BENCHMARKS.md, sessions 74 and 75)
    loaded = LoadedImage(work=work, scale=work.shape[1] / w, size=(w, h), lens=lens, _full=full, _data=data)
    blur = measure_blur(loaded.gray)
    if blur.sigma <= BLURRED_EDGE_PX:
        return loaded
    return replace(loaded, work=sharpen(work, blur), blur=blur)


@dataclass(frozen=True)
class Blur:
    sigma: float                 # the Gaussian sigma its more blurred edges show, in the image's pixels
    shake: float | None = None   # the direction (radians, image axes) a camera shake smeared it along


def measure_blur(gray: np.ndarray) -> Blur:
    """How blurred a grey image is, and along which direction if a camera's shake blurred it.

    A step edge blurred by sigma s keeps a peak gradient proportional to 1 / s; blurred once more
    by a known sigma r (REBLUR_PX), 1 / sqrt(s^2 + r^2). The ratio R of the two gives s = r / sqrt(R^2 -
    1) (Zhuo and Sim's re-blur estimate), here at each Canny edge pixel. The image's `sigma` is
    that of its most blurred quarter of edges: a shake leaves the edges along it sharp. Rendered
    photos read 0.4-1.2, the same blurred 2 px or shaken 9 px (at 1600x1200) 1.2-2.1: any digital
    image's edges show some blur. When the edges facing one way (six bins of gradient direction)
    are SHAKEN_EDGES times as blurred as those facing another, the blur is a shake, along the
    gradient directions most blurred (renders: 1.1-1.7, blurred 2 px 1.0-1.4, shaken 9 px 1.7-2.6).

    >>> step = np.zeros((64, 64), np.uint8); step[:, 32:] = 200
    >>> measure_blur(cv2.GaussianBlur(step, (0, 0), 2.0)).sigma > measure_blur(step).sigma
    True
    """
    edges = cv2.findNonZero(cv2.Canny(gray, 60, 150))
    if edges is None:
        return Blur(0.0)
    edges = edges[::-(-len(edges) // EDGE_BLUR_SAMPLES), 0]        # quantiles need no more
    xs, ys = edges[:, 0], edges[:, 1]
    # the two gradients only where they are wanted: each edge pixel's neighbourhood times the kernels
    kernels = _gradient_kernels(REBLUR_PX)
    r = kernels.shape[-1] // 2
    padded = cv2.copyMakeBorder(gray, r, r, r, r, cv2.BORDER_REFLECT_101)
    offsets = np.arange(-r, r + 1)
    patches = padded[(ys + r)[:, None, None] + offsets[None, :, None], (xs + r)[:, None, None] + offsets[None, None, :]]
    gx, gy, reblurred_x, reblurred_y = (patches.reshape(len(ys), -1).astype(np.float32) @ kernels.reshape(4, -1).T).T
    ratios = np.hypot(gx, gy) / np.maximum(np.hypot(reblurred_x, reblurred_y), 1e-6)
    sigmas = REBLUR_PX / np.sqrt(np.maximum(ratios * ratios - 1.0, 1e-6))
    sigma = float(REBLUR_PX / np.sqrt(max(np.quantile(ratios, 0.25) ** 2 - 1.0, 1e-6)))
    facing = (np.mod(np.arctan2(gy, gx), np.pi) / (np.pi / 6)).astype(int) % 6
    bins = [b for b in range(6) if (facing == b).sum() > 30]
    if len(bins) < 4:
        return Blur(sigma)
    blurs = np.array([np.quantile(sigmas[facing == b], 0.75) for b in bins])
    if blurs.max() < SHAKEN_EDGES * blurs.min():
        return Blur(sigma)
    # the mean direction of the bins, weighed by how much more blurred than the sharpest they are
    # (on doubled angles: a direction and its opposite are the same)
    angles = 2 * (np.array(bins) + 0.5) * np.pi / 6
    excess = blurs - blurs.min()
    return Blur(sigma, float(0.5 * np.arctan2((excess * np.sin(angles)).sum(), (excess * np.cos(angles)).sum())))


@functools.cache
def _gradient_kernels(reblur: float) -> np.ndarray:
    """(4, k, k) correlation kernels: the Sobel x and y gradients, and the same after a Gaussian blur of `reblur`."""
    r = int(np.ceil(3 * reblur)) + 1
    impulse = np.zeros((2 * r + 1, 2 * r + 1), np.float32)
    impulse[r, r] = 1.0
    blurred = cv2.GaussianBlur(impulse, (2 * r - 1, 2 * r - 1), reblur, borderType=cv2.BORDER_CONSTANT)
    responses = [cv2.Sobel(im, cv2.CV_32F, dx, 1 - dx, ksize=3, borderType=cv2.BORDER_CONSTANT)
                 for im in (impulse, blurred) for dx in (1, 0)]
    return np.stack([k[::-1, ::-1] for k in responses])


def sharpen(image: np.ndarray, blur: Blur, scale: float = 1.0) -> np.ndarray:
    """`image` unsharp-masked against `blur` (measured in pixels `scale` times smaller): its difference
    from itself blurred by SHARPEN_SIGMA_PX added SHARPEN_AMOUNT times, or, for a shake, its
    difference from itself blurred by SHAKE_SIGMA times that along the shake only."""
    sigma = SHARPEN_SIGMA_PX * scale
    if blur.shake is None:
        smoothed = cv2.GaussianBlur(image, (0, 0), sigma)
    else:
        sigma *= SHAKE_SIGMA
        n = int(np.ceil(3 * sigma))
        y, x = np.mgrid[-n:n + 1, -n:n + 1].astype(np.float32)
        along = x * np.cos(blur.shake) + y * np.sin(blur.shake)
        across = -x * np.sin(blur.shake) + y * np.cos(blur.shake)
        kernel = np.exp(-along * along / (2 * sigma * sigma)) * np.maximum(0.0, 1.0 - np.abs(across))
        smoothed = cv2.filter2D(image, -1, kernel / kernel.sum())
    return cv2.addWeighted(image, 1 + SHARPEN_AMOUNT, smoothed, -SHARPEN_AMOUNT, 0)


def read_photo_bytes(source) -> bytes:
    """The encoded bytes of a photo given as bytes, a path or a file object; UnreadableImageError
    (one line) for a missing file, a folder, or more than MAX_BYTES."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
    elif isinstance(source, (str, Path)):
        path = Path(source)
        try:
            if path.stat().st_size > MAX_BYTES:
                raise UnreadableImageError(f"image file too large ({path.stat().st_size} bytes)", "too_large")
            data = path.read_bytes()
        except IsADirectoryError:
            raise UnreadableImageError(f"not an image file: {path} is a directory") from None
        except FileNotFoundError:
            raise UnreadableImageError(f"no such file: {path}") from None
        except OSError as exc:
            raise UnreadableImageError(f"cannot read {path}: {exc.strerror or exc}") from None
    elif hasattr(source, "read"):
        data = source.read(MAX_BYTES + 1)
    else:
        raise UnreadableImageError(f"cannot read an image from a {type(source).__name__}")
    if len(data) > MAX_BYTES:
        raise UnreadableImageError(f"image too large (over {MAX_BYTES // 2**20} MiB)", "too_large")
    return data


def _megapixels(pixels: int) -> str:
    return f"{pixels / 1e6:.{1 if pixels < 10e6 else 0}f} megapixels"


def decode_image(data: bytes, reduce_to: int | None = None, max_pixels: int = MAX_PIXELS) -> tuple:
    """(the upright BGR image, its full (width, height)) of an encoded photo, EXIF orientation
    applied. With `reduce_to`, a JPEG is decoded at a reduced size whose long side is still at
    least that (libjpeg's DCT scaling). The header is checked before any pixel is decoded: more
    than `max_pixels` (decompression bombs), a side under MIN_SIDE or a format we do not read
    raise UnreadableImageError, as does a broken or truncated file while decoding."""
    if not data:
        raise UnreadableImageError("the image is empty (0 bytes)", "empty")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)   # max_pixels is our limit
            img = Image.open(io.BytesIO(data))
            w, h = img.size
            if w * h > max_pixels:
                raise UnreadableImageError(f"image too large ({w}x{h} pixels, {_megapixels(w * h)}; the limit is "
                                           f"{_megapixels(max_pixels)}): take a smaller photo", "too_many_pixels")
            if img.format not in IMAGE_FORMATS:
                raise UnreadableImageError(f"unsupported image format {img.format}; use JPEG, PNG or WebP",
                                           "unsupported")
            if min(w, h) < MIN_SIDE:
                raise UnreadableImageError(f"image too small ({w}x{h}); need at least {MIN_SIDE} pixels a side",
                                           "too_small")
            full_size = _oriented_size(img)
            if reduce_to and img.format in ("JPEG", "MPO"):
                img.draft("RGB", (reduce_to, reduce_to))
            img.load()
            img = _eight_bit(ImageOps.exif_transpose(img)).convert("RGB")
    except UnreadableImageError:
        raise
    except Image.DecompressionBombError:
        raise UnreadableImageError(f"image too large (decompression bomb refused; the limit is "
                                   f"{_megapixels(max_pixels)})", "too_many_pixels") from None
    except UnidentifiedImageError:
        if is_heif_photo(data):
            raise UnreadableImageError("an HEIC/HEIF photo (what iPhones take by default) cannot be read: save it "
                                       "as JPEG, or set the camera to Most Compatible (Settings > Camera > "
                                       "Formats)", "unsupported") from None
        raise UnreadableImageError("this file is not an image we can read: use a JPEG, PNG or WebP photo",
                                   "not_an_image") from None
    except (OSError, SyntaxError, ValueError, EOFError) as exc:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UnreadableImageError(f"broken or truncated image ({msg})", "corrupt") from None
    return cv2.cvtColor(np.asarray(img), cv2.COLOR_RGB2BGR), full_size


def _eight_bit(img):
    """A 16-bit greyscale image (PNG, TIFF) brought to 8 bits: Pillow's convert would clip every
    value over 255 to white, not scale it."""
    if img.mode != "I" and not img.mode.startswith("I;16"):
        return img
    return Image.fromarray((np.asarray(img, np.float32) / 257.0).clip(0, 255).round().astype(np.uint8))


def is_heif_photo(data: bytes) -> bool:
    """Whether `data` is an HEIC/HEIF photo: an ISO media file whose 'ftyp' box names an HEIF brand."""
    return data[4:8] == b"ftyp" and data[8:12] in HEIF_BRANDS


def _oriented_size(img) -> tuple:
    w, h = img.size
    orientation = img.getexif().get(0x0112, 1) if hasattr(img, "getexif") else 1
    return (h, w) if orientation in (5, 6, 7, 8) else (w, h)


def _from_array(arr: np.ndarray) -> np.ndarray:
    if arr.size == 0:
        raise UnreadableImageError("the image is empty", "empty")
    if arr.ndim == 2:
        arr = cv2.cvtColor(arr, cv2.COLOR_GRAY2BGR)
    elif arr.ndim == 3 and arr.shape[2] == 4:
        arr = cv2.cvtColor(arr, cv2.COLOR_BGRA2BGR)
    elif not (arr.ndim == 3 and arr.shape[2] == 3):
        raise UnreadableImageError(f"an image array must be HxW, HxWx3 or HxWx4, not {arr.shape}")
    if min(arr.shape[:2]) < MIN_SIDE:
        raise UnreadableImageError(f"image too small ({arr.shape[1]}x{arr.shape[0]}); need at least {MIN_SIDE} "
                                   "pixels a side", "too_small")
    if arr.shape[0] * arr.shape[1] > MAX_PIXELS:
        raise UnreadableImageError(f"image too large ({arr.shape[1]}x{arr.shape[0]} pixels; the limit is "
                                   f"{_megapixels(MAX_PIXELS)})", "too_many_pixels")
    if arr.dtype != np.uint8:
        if np.issubdtype(arr.dtype, np.floating) and arr.max(initial=0) <= 1.0:
            arr = arr * 255.0
        arr = np.clip(arr, 0, 255).astype(np.uint8)
    return np.ascontiguousarray(arr)

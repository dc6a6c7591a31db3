"""The errors vision raises; each carries a one-line message meant for the user."""


class VisionError(ValueError):
    """Base of every error `analyze_photo` raises on bad input or an unreadable scene."""


class UnreadableImageError(VisionError):
    """The input is not an image we can read. ``reason`` says why, for callers that answer each
    case differently (the web app's HTTP statuses): "empty", "not_an_image", "unsupported" (a
    format we do not read, HEIC included), "too_many_pixels", "too_large" (bytes), "too_small",
    "corrupt" (broken or truncated), "unreadable" (anything else: a missing file, a bad array)."""

    def __init__(self, message, reason="unreadable"):
        super().__init__(message)
        self.reason = reason


class NoWorldFoundError(VisionError):
    """The image was read, but no EXXIT World (a hex-tiled patch) was found in it."""


class NoTileReadError(NoWorldFoundError):
    """A hex lattice was fitted, but the tiles do not read on it: none does, or the whole table does."""


class LatticeFellShortError(NoWorldFoundError):
    """A hex lattice was fitted to the straight edges, but it, or the camera fitted to it, explains too
    few of them. ``on_checks``: whether the table's edges around it show a checked cloth's square grid,
    whose edges a look with the squares aside sets apart (vision.geometry.find_world; a look with the
    squares aside is taken to show them)."""

    def __init__(self, message, on_checks=False):
        super().__init__(message)
        self.on_checks = on_checks


class ProfileError(VisionError):
    """A set profile is missing, not JSON, or not a valid exxit-set/1 document."""


class LensError(VisionError):
    """A camera file is missing, not JSON, not a valid exxit-camera/1 document, or measured on photos
    of another shape than the one read."""

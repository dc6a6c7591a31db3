"""The errors vision raises; each carries a one-line message meant for the user."""


class VisionError(ValueError):
    """Base of every error `analyze_photo` raises on bad input or an unreadable scene."""


class UnreadableImageError(VisionError):
    """The input is not an image we can read (empty, truncated, unknown format, too large)."""


class NoWorldFoundError(VisionError):
    """The image was read, but no EXXIT World (a hex-tiled patch) was found in it."""


class ProfileError(VisionError):
    """A set profile is missing, not JSON, or not a valid exxit-set/1 document."""

"""Photo -> EXXIT position.

>>> import vision
>>> vision.load_profile("black-white").disc_thickness_mm
4.5

Stages (each a module with a typed result and its own debug drawing): loading (undistorted
through the camera's measured lens, vision.lens, when there is one), colours,
geometry (lattice and camera), tiles, stacks, sanity; `analyze_photo` runs them in order, and
`combine_readings` reads the stacks again with a second photo of the same table.
"""
from .errors import LensError, NoWorldFoundError, ProfileError, UnreadableImageError, VisionError
from .fitting import FitError, fit_heights
from .lens import Lens, load_lens
from .loading import decode_image
from .pipeline import analyze_photo
from .profile import SetProfile, load_profile
from .reading import InconsistentReadingError, PhotoReading
from .second_photo import DifferentWorldError, add_second_photo, combine_readings, photo_name
from .stacks import CONFIDENT as STACK_CONFIDENT

__all__ = ["analyze_photo", "load_profile", "SetProfile", "PhotoReading", "VisionError",
           "UnreadableImageError", "NoWorldFoundError", "ProfileError", "InconsistentReadingError",
           "decode_image", "fit_heights", "FitError", "STACK_CONFIDENT", "combine_readings",
           "add_second_photo", "photo_name", "DifferentWorldError", "Lens", "load_lens", "LensError"]

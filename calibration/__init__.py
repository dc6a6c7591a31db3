"""Measure a physical EXXIT set from photos and write its set profile (`exxit-set/1`).

`measure_set(photo)` learns the two colours (and which one plays White: the pair of touching tiles
of the opening diamond) and the tile thickness relative to the tile width; with a photo of
one stack of known height it also measures the disc thickness. It uses vision's
detectors; vision never imports calibration.
"""
from .profile import CalibrationError, measure_set

__all__ = ["measure_set", "CalibrationError"]

"""Assembly: a PhotoReading is the position read from a photo, with its image geometry."""
from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

import rules

from .colours import ColourModel
from .errors import VisionError
from .geometry import WorldGeometry
from .lens import Lens
from .profile import SetProfile
from .stacks import StackReading
from .tiles import TileReading

TOTAL_TILES = 39
WARNING_FONT = (cv2.FONT_HERSHEY_SIMPLEX, 0.6)      # of the warnings the debug overlay writes


class InconsistentReadingError(VisionError):
    """The reading violates what a real game allows, so no rules.Position can hold it."""


@dataclass
class PhotoReading:
    tiles: TileReading
    stacks: StackReading
    geometry: WorldGeometry
    colours: ColourModel
    profile: SetProfile
    image_size: tuple             # (width, height) of the original (EXIF-rotated) image
    origin: tuple                 # lattice cell reported as (0, 0)
    warnings: list = field(default_factory=list)
    timing: dict = field(default_factory=dict)
    lens: Lens | None = None      # the lens the photo was undistorted for; the geometry is the undistorted image's

    # --- coordinates -------------------------------------------------------------------------
    def _lattice(self, cell):
        return (cell[0] + self.origin[0], cell[1] + self.origin[1])

    def _public(self, cell):
        return (int(cell[0] - self.origin[0]), int(cell[1] - self.origin[1]))

    def cell_to_pixel(self, cell) -> tuple[float, float]:
        """Pixel centre of a cell's tile top in the original image."""
        return self._in_photo(self.geometry.project([self._lattice(cell)], 0.0)[0])

    def stack_top_pixel(self, cell) -> tuple[float, float]:
        """Pixel centre of a stack's top disc in the original image."""
        st = self.stacks.stacks.get(self._lattice(cell))
        if st is None:
            raise KeyError(f"no stack at {cell}")
        return self._in_photo(st.top_pixel)

    def _in_photo(self, point) -> tuple[float, float]:
        x, y = point if self.lens is None else self.lens.to_photo([point])[0]
        return float(x), float(y)

    # --- the position ----------------------------------------------------------------------
    @property
    def tile_colours(self) -> dict:
        return {self._public(c): col for c, col in self.tiles.tiles.items()}

    @property
    def stack_discs(self) -> dict:
        return {self._public(c): tuple(s.discs) for c, s in self.stacks.stacks.items()}

    @property
    def named_cells(self) -> set:
        """Every cell a warning names (a tile set aside beside the World, say), as (q, r)."""
        return {tuple(c) for w in self.warnings for c in w["cells"]}

    @property
    def position(self):
        """The reading as a rules.Position; raises InconsistentReadingError if it cannot occur."""
        try:
            return rules.position_from_json(self.position_json())
        except rules.PositionError as exc:
            raise InconsistentReadingError(f"the photo reads as an impossible position: {exc}") from None

    def position_json(self) -> dict:
        tiles = [{"q": q, "r": r, "colour": rd.colour, "confidence": rd.confidence}
                 for (q, r), rd in sorted((self._public(c), rd) for c, rd in self.tiles.cells.items()
                                          if rd.colour)]
        stacks = []
        for cell, st in sorted((self._public(c), s) for c, s in self.stacks.stacks.items()):
            stacks.append({"q": cell[0], "r": cell[1], "discs": list(st.discs), "height": st.height,
                           "top": st.top, "confidence": st.confidence,
                           "height_confidence": st.height_confidence, "top_confidence": st.top_confidence,
                           "height_chances": [round(c, 3) for c in st.height_chances]})
        known = {c: sum(d.count(c) for d in self.stack_discs.values()) for c in rules.COLOURS}
        obj = {"format": "exxit-position/1", "tiles": tiles, "stacks": stacks,
               "reserves": {c: max(0, 8 - n) for c, n in known.items()},
               "tiles_left": max(0, TOTAL_TILES - len(tiles)), "total_tiles": TOTAL_TILES}
        return obj

    @property
    def confidence(self) -> float:
        vals = [rd.confidence for rd in self.tiles.cells.values()]
        vals += [s.confidence for s in self.stacks.stacks.values()]
        return float(min([self.geometry.confidence] + vals)) if vals else 0.0

    def to_json(self) -> dict:
        """Exactly what `python -m vision analyze` prints (FORMATS.md, exxit-position/1 + image)."""
        obj = self.position_json()
        obj["confidence"] = round(self.confidence, 3)
        cells = sorted({self._public(c) for c in self.tiles.tiles} | set(self.stack_discs) | self.named_cells)
        w, h = self.image_size
        obj["image"] = {
            "width": w, "height": h,
            "cells": [{"q": q, "r": r, "x": round(x, 1), "y": round(y, 1)}
                      for (q, r) in cells for x, y in [self.cell_to_pixel((q, r))]],
            "stack_tops": [{"q": q, "r": r, "x": round(x, 1), "y": round(y, 1)}
                           for (q, r) in sorted(self.stack_discs)
                           for x, y in [self.stack_top_pixel((q, r))]],
            "camera_tilt_deg": round(self.geometry.camera.tilt_deg, 1),
            "lattice_confidence": round(self.geometry.confidence, 3),
            "profile": self.profile.name,
        }
        obj["warnings"] = self.warnings
        obj["timing"] = {k: round(v, 4) for k, v in self.timing.items()}
        return obj

    # --- drawing ---------------------------------------------------------------------------
    def draw_overlay(self, image: np.ndarray) -> np.ndarray:
        """The debug overlay on `image` (the photo as read, BGR: undistorted when read through a lens):
        lattice, cells, stacks, doubts."""
        out = image.copy()
        geo = self.geometry
        f = out.shape[1] / self.image_size[0]
        out = self.tiles.draw(out, geo)
        out = self.stacks.draw(out, geo, self.profile)
        for cell in self.tiles.tiles:
            x, y = np.array(geo.project([cell], 0.0)[0]) * f
            q, r = self._public(cell)
            cv2.putText(out, f"{q},{r}", (int(x) - 14, int(y) + 22), cv2.FONT_HERSHEY_SIMPLEX, 0.4,
                        (0, 255, 255), 1, cv2.LINE_AA)
        bad = [w for w in self.warnings if not w["code"].startswith("uncertain")]
        lines = [line for wrn in bad[:4] for line in overlay_lines(wrn["message"], out.shape[1] - 20)]
        for i, line in enumerate(lines):
            cv2.putText(out, line, (10, 24 + 22 * i), *WARNING_FONT, (0, 0, 255), 2)
        return out


def overlay_lines(message: str, width: int) -> list:
    """A warning as lines the overlay can draw: OpenCV's fonts have no "°" (it came out as "??"),
    and a line wider than the photo is cut off at its edge."""
    words = message.replace("°", " deg").encode("ascii", "replace").decode().split()
    lines = []
    for word in words:
        wider = f"{lines[-1]} {word}" if lines else word
        if lines and cv2.getTextSize(wider, *WARNING_FONT, 2)[0][0] <= width:
            lines[-1] = wider
        else:
            lines.append(word)
    return lines

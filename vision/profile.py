"""Set profiles (`exxit-set/1`): the physical sizes and colour hints of one EXXIT set.

>>> p = load_profile("silver-red")
>>> p.name, p.white_is_lighter()
('silver-red', True)
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import rules

from .errors import ProfileError

PROFILE_DIR = Path(__file__).with_name("profiles")
DEFAULT_PROFILE = "jactalea-red-black"
SIZE_FIELDS = ("tile_width_mm", "tile_thickness_mm", "disc_diameter_mm", "disc_thickness_mm")


@dataclass(frozen=True)
class ColourHint:
    name: str
    tile_rgb: tuple[int, int, int] | None = None
    disc_rgb: tuple[int, int, int] | None = None


@dataclass(frozen=True)
class SetProfile:
    name: str
    tile_width_mm: float
    tile_thickness_mm: float
    disc_diameter_mm: float
    disc_thickness_mm: float
    colours: dict[str, ColourHint] = field(default_factory=dict)
    description: str = ""
    tile_gap_mm: float = 1.2          # typical gap between laid tiles (our extension, optional)

    @property
    def pitch_mm(self) -> float:
        """Centre-to-centre distance of neighbouring tiles on the table."""
        return self.tile_width_mm + self.tile_gap_mm

    def white_is_lighter(self) -> bool:
        """Whether the role "white" is played by the lighter physical colour (the default)."""
        white, black = self.colours.get("white"), self.colours.get("black")
        if not (white and black and white.tile_rgb and black.tile_rgb):
            return True
        return _luma(white.tile_rgb) >= _luma(black.tile_rgb)

    def to_json(self) -> dict:
        obj = {"format": "exxit-set/1", "name": self.name}
        if self.description:
            obj["description"] = self.description
        for key in SIZE_FIELDS:
            obj[key] = round(float(getattr(self, key)), 2)
        obj["tile_gap_mm"] = round(float(self.tile_gap_mm), 2)
        if self.colours:
            obj["colours"] = {
                role: {k: (list(v) if isinstance(v, tuple) else v)
                       for k, v in vars(hint).items() if v is not None}
                for role, hint in self.colours.items()
            }
        return obj


def _luma(rgb) -> float:
    r, g, b = rgb
    return 0.299 * r + 0.587 * g + 0.114 * b


def profile_from_json(obj) -> SetProfile:
    """Validate an `exxit-set/1` document and build its SetProfile."""
    if not isinstance(obj, dict) or obj.get("format") != "exxit-set/1":
        raise ProfileError("set profile: expected a JSON object with \"format\": \"exxit-set/1\"")
    sizes = {}
    for key in SIZE_FIELDS:
        value = obj.get(key)
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0.5 <= value <= 500:
            raise ProfileError(f"set profile: {key} must be a size in millimetres (0.5..500)")
        sizes[key] = float(value)
    if sizes["disc_diameter_mm"] >= sizes["tile_width_mm"] * 1.2:
        raise ProfileError("set profile: disc_diameter_mm must be smaller than tile_width_mm")
    gap = obj.get("tile_gap_mm", 1.2)
    if not isinstance(gap, (int, float)) or isinstance(gap, bool) or not 0 <= gap <= 0.5 * sizes["tile_width_mm"]:
        raise ProfileError("set profile: tile_gap_mm must be a size in millimetres (0..half a tile)")
    colours = {}
    raw = obj.get("colours", {}) or {}
    if not isinstance(raw, dict):
        raise ProfileError("set profile: colours must be an object keyed by role")
    for role, hint in raw.items():
        if role not in rules.COLOURS or not isinstance(hint, dict):
            raise ProfileError(f"set profile: unknown colour role {role!r} (use white/black)")
        colours[role] = ColourHint(
            name=str(hint.get("name", role)),
            tile_rgb=_rgb(hint.get("tile_rgb"), role),
            disc_rgb=_rgb(hint.get("disc_rgb"), role),
        )
    return SetProfile(name=str(obj.get("name", "custom")), colours=colours,
                      description=str(obj.get("description", "")), tile_gap_mm=float(gap), **sizes)


def _rgb(value, role):
    if value is None:
        return None
    if (not isinstance(value, (list, tuple)) or len(value) != 3
            or not all(isinstance(c, int) and 0 <= c <= 255 for c in value)):
        raise ProfileError(f"set profile: {role} colour must be [r, g, b] with 0..255 integers")
    return tuple(value)


def load_profile(path_or_name=None) -> SetProfile:
    """Load a profile by shipped edition name ("silver-red", ...) or by path; None = default."""
    if isinstance(path_or_name, SetProfile):
        return path_or_name
    name = path_or_name or DEFAULT_PROFILE
    path = Path(name)
    shipped = PROFILE_DIR / f"{name}.json"
    if not path.is_file() and shipped.is_file():
        path = shipped
    known = ", ".join(sorted(p.stem for p in PROFILE_DIR.glob("*.json")))
    return profile_from_json(read_json_file(path, ProfileError, "set profile", name, f" (editions: {known})"))


def read_json_file(path, error: type, what: str, label=None, hint: str = ""):
    """The JSON document in the file `path`, or `error` (a VisionError) with a one-line message
    naming `what` ("set profile", "camera file") and `label` (default: the path) when the file
    cannot be read (`hint` appended) or is not JSON."""
    label = path if label is None else label
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, ValueError):
        raise error(f"{what} not found: {label}{hint}") from None
    try:
        return json.loads(text)
    except ValueError:
        raise error(f"{what} {label}: not valid JSON") from None

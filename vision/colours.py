"""Stage 1: the colour model of one photo: table, the two tile colours, the two disc colours.

Nothing is a fixed threshold: the table colour comes from the photo's border, the tile colours
from clustering the main non-table region, and every pixel is classified relative to those.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from .errors import NoWorldFoundError
from .loading import LoadedImage, colour_gradients, lightness_gradient
from .profile import SetProfile

TABLE, WHITE, BLACK = 0, 1, 2
LAB_WEIGHTS = np.array([0.6, 1.0, 1.0])   # Lab differences count lightness at 0.6: shade and glare move it most
SHADE_MIN = 0.3                  # the most shaded_distance dims a colour: to this of its Lab coordinates
ONE_TILE_COLOUR = 12.0           # Lab distance under which the two tile colours learnt are one colour (dev
                                 # renders: 2-9 where the tiles read showed one colour, 22 and up elsewhere)


def lab_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Distance between two Lab colours, lightness counted at LAB_WEIGHTS."""
    return float(np.linalg.norm((a - b) * LAB_WEIGHTS))


def shaded_distance(a: np.ndarray, b: np.ndarray) -> float:
    """lab_distance of Lab colour `a` from `b` dimmed to `a`'s lightness (to SHADE_MIN of it at most;
    never lightened): a surface in shade keeps its hue, its lightness and chroma lower alike."""
    shade = np.clip(a[0] / max(b[0], 1e-6), SHADE_MIN, 1.0)
    return lab_distance(a, shade * np.asarray(b, float))


@dataclass
class ColourClass:
    mean: np.ndarray             # Lab mean (L 0..100, a, b)
    sigma: np.ndarray            # per-channel spread

    def distance2(self, lab: np.ndarray) -> np.ndarray:
        """Squared distance (float32) of Lab colours `lab` (..., 3) in units of this class's spreads."""
        lab = np.asarray(lab, np.float32)
        mean, inverse = self.mean.astype(np.float32), (1.0 / self.sigma).astype(np.float32)
        total = None
        for k in range(3):           # a channel at a time: three times faster than on the interleaved pixels
            d = lab[..., k] - mean[k]
            d *= inverse[k]
            d *= d
            total = d if total is None else total + d
        return total


@dataclass
class ColourModel:
    tables: list                  # ColourClass of each table colour (a cloth may have two or three)
    tiles: dict                   # role -> ColourClass
    discs: dict                   # role -> ColourClass (learnt from disc tops later; tiles at first)
    world_mask: np.ndarray        # uint8 work-resolution mask of the main non-table region
    lab: np.ndarray = field(repr=False)   # float32 Lab work image
    confidence: float = 1.0
    _labels: tuple | None = field(default=None, repr=False)
    image: LoadedImage | None = field(default=None, repr=False)   # whose working image `lab` is
    _gradients: dict = field(default_factory=dict, repr=False)
    regions: list = field(default_factory=list, repr=False)   # candidate World regions, best first

    white_is_lighter: bool = True
    hints: dict = field(default_factory=dict)     # role -> Lab of the profile's tile colour hint

    def roles_of(self, a: np.ndarray, b: np.ndarray) -> tuple:
        """(white, black): which of two Lab colours plays which role (see assign_roles)."""
        return assign_roles(a, b, self.hints, self.white_is_lighter)

    def tells_apart(self, a: np.ndarray, b: np.ndarray) -> bool:
        """Whether two Lab colours are surely of the two roles, by the profile's colour hints
        (hints_tell_apart)."""
        return hints_tell_apart(a, b, self.hints)

    def tile_colour_off_its_hint(self) -> bool:
        """Whether a tile colour learnt is strongly coloured (chroma over COLOURED_CHROMA) where the
        profile's hint for it is neutral (under NEUTRAL_CHROMA: black rubber, silver): the table's
        colour taken for a tile's (fresh 140 s034: green felt lit by an overhead light learnt as the
        black tiles' colour)."""
        return any(_chroma(hint) < NEUTRAL_CHROMA and _chroma(self.tiles[role].mean) > COLOURED_CHROMA
                   for role, hint in self.hints.items())

    def reset_cache(self):
        self._labels = None

    def tile_colour_from_table(self) -> bool:
        """When the two tile colours are one colour (the tiles read so far are all of one colour,
        the other's matching a table colour: light tiles on a cloth's light checks), make the table
        colour most unlike them the other tile colour, no longer a table colour. False, and nothing
        changed, when the tile colours differ or the table has one colour only."""
        a, b = self.tiles["white"], self.tiles["black"]
        if np.linalg.norm(a.mean - b.mean) >= ONE_TILE_COLOUR or len(self.tables) < 2:
            return False
        found = ColourClass((a.mean + b.mean) / 2, np.maximum(a.sigma, b.sigma))
        other = max(self.tables, key=lambda t: np.linalg.norm(t.mean - found.mean))
        self.tables = [t for t in self.tables if t is not other]
        white, _ = self.roles_of(other.mean, found.mean)
        self.tiles = {"white": other, "black": found} if white is other.mean else {"white": found, "black": other}
        self.discs = dict(self.tiles)
        self.reset_cache()
        return True

    def lightness_gradient(self) -> np.ndarray:
        """Gradient magnitude of the lightness (slightly smoothed), computed once: the working
        image's, when find_colours made this model."""
        return self._gradient("lightness_gradient", lightness_gradient)

    def colour_gradients(self) -> tuple:
        """(gx, gy, magnitude) of the colour gradients (vision.loading.colour_gradients), computed
        once: the working image's, when find_colours made this model."""
        return self._gradient("colour_gradients", colour_gradients)

    def _gradient(self, name: str, make):
        """The working image's gradient `name`: its image's (that LoadedImage property) when this
        model has its image, else `make(lab)`, made once."""
        if self.image is not None:
            return getattr(self.image, name)
        if name not in self._gradients:
            self._gradients[name] = make(self.lab)
        return self._gradients[name]

    def pixel_classes(self):
        """(labels, margin) of the whole working image, computed once."""
        if self._labels is None:
            self._labels = self.classify(self.lab)
        return self._labels

    def classes(self):
        return [self.tables[0], self.tiles["white"], self.tiles["black"]]

    def classify(self, lab: np.ndarray):
        """(labels, margin): TABLE/WHITE/BLACK per pixel and the log-odds margin to the runner-up."""
        def cost(c):
            return c.distance2(lab) + float(2 * np.log(c.sigma).sum())
        table = cost(self.tables[0])
        for extra in self.tables[1:]:
            table = np.minimum(table, cost(extra))
        d = np.stack([table, cost(self.tiles["white"]), cost(self.tiles["black"])], axis=-1)
        order = np.argsort(d, axis=-1)
        best = np.take_along_axis(d, order[..., :1], -1)[..., 0]
        second = np.take_along_axis(d, order[..., 1:2], -1)[..., 0]
        return order[..., 0].astype(np.int8), 0.5 * (second - best)

    def draw(self, image: np.ndarray) -> np.ndarray:
        """Debug drawing: each pixel painted with its class's mean colour, World mask outlined."""
        labels, margin = self.pixel_classes()
        palette = np.array([self._bgr(c) for c in self.classes()], np.uint8)
        out = palette[labels]
        out[margin < 1.0] = (255, 0, 255)
        cnts, _ = cv2.findContours(self.world_mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        cv2.drawContours(out, cnts, -1, (0, 255, 255), 2)
        if out.shape[:2] != image.shape[:2]:
            out = cv2.resize(out, (image.shape[1], image.shape[0]), interpolation=cv2.INTER_NEAREST)
        return out

    @staticmethod
    def _bgr(c: ColourClass):
        lab = c.mean.astype(np.float32).reshape(1, 1, 3)
        return np.clip(cv2.cvtColor(lab, cv2.COLOR_Lab2BGR)[0, 0] * 255, 0, 255).astype(np.uint8)


def _robust_class(pixels: np.ndarray, floor=(3.0, 2.0, 2.0)) -> ColourClass:
    med = np.median(pixels, axis=0)
    mad = np.median(np.abs(pixels - med), axis=0) * 1.4826
    return ColourClass(mean=med, sigma=np.maximum(mad, floor))


TABLE_SOURCES = ("border", "lower border", "main colour", "surroundings", "reaching in aside")
SURROUNDINGS = 0.15              # of the photo's short side: the span over which the table's own colour is
                                 # taken as even ("surroundings"); a World's tiles cover less of it
ROOM_WIDTH = 0.9                 # of the photo's width: a region across more of it, its centre in the top
                                 # third, is the room beyond the table's far edge: the World's region is
                                 # looked for among the others first
SMOOTH_GRADIENT = 3.0            # colour gradient (Lab units per working pixel) under which a pixel lies inside a
                                 # smooth surface: a tile's or a disc's outline is steeper
EDGE_BAND = 3                    # working pixels: the photo's edge, which an arm or the room reaches
NEUTRAL_CHROMA = 10.0            # a profile's colour hint under this chroma is neutral (black, white, silver)
COLOURED_CHROMA = 25.0           # a tile colour learnt over this chroma is strongly coloured (red, a green cloth)


@dataclass
class Table:
    """The table's colours in a photo, and the regions that stand out from them (find_table)."""
    colours: list                # ColourClass of each table colour (a cloth may have two or three)
    regions: list                # candidate World regions (uint8 masks), largest and most central first


def find_table(image: LoadedImage, table_from: str = "border") -> Table:
    """The table's colours in the photo's working image and the regions that stand out from
    them. The table's colours come from the photo's border (`table_from`, one of TABLE_SOURCES):
    all of it; or its lower two thirds only (a tilted photo's top may show the room beyond the
    table, whose colours can match the tiles'); or all of it, but only its commonest colour (a
    lamp's pool of light at the border can match the light tiles, and the shade the dark ones);
    or all of it, the regions being what differs from the table around it (the median colour of
    its surroundings: a lamp's pool of light across a plain table, dark tiles in its shade); or all
    of it, what reaches in from the photo's edge (reaching_in: a player's arm and hand touching the
    World) being no region. Raises NoWorldFoundError when nothing stands out."""
    if table_from not in TABLE_SOURCES:
        raise ValueError(f"table colours come from one of {TABLE_SOURCES}, not {table_from!r}")
    lab = image.lab
    h, w = lab.shape[:2]
    band = max(4, int(0.03 * min(h, w)))
    lower = table_from == "lower border"
    top = h // 3 if lower else 0
    border = np.concatenate(([] if lower else [lab[:band].reshape(-1, 3)]) +
                            [lab[-band:].reshape(-1, 3), lab[top:, :band].reshape(-1, 3),
                             lab[top:, -band:].reshape(-1, 3)])
    tables = _table_classes(border)
    if table_from == "main colour":
        tables = tables[:1]
    small = lab[::2, ::2]
    if table_from == "surroundings":
        table_d2 = tables[0].distance2(small - _surroundings(small) + tables[0].mean.astype(np.float32))
    else:
        table_d2 = np.min([t.distance2(small) for t in tables], axis=0)
    foreground = cv2.resize((table_d2 > 16.0).astype(np.uint8), (w, h), interpolation=cv2.INTER_NEAREST)
    k = max(3, int(round(min(h, w) / 250)) | 1)
    foreground = cv2.morphologyEx(foreground, cv2.MORPH_OPEN, np.ones((k, k), np.uint8))
    if table_from == "reaching in aside":     # (with its outline, and what that leaves of the fingers')
        reaching = reaching_in(foreground, image.colour_gradients[2])
        foreground = cv2.morphologyEx(foreground & ~reaching, cv2.MORPH_OPEN, np.ones((5, 5), np.uint8))
    regions = _components(foreground)
    if not regions:
        raise NoWorldFoundError("no EXXIT World found: nothing in the photo stands out from the table")
    return Table(tables, regions)


def find_colours(image: LoadedImage, profile: SetProfile, table_from: str = "border",
                 table: Table | None = None) -> ColourModel:
    """Learn table / tile colours of the photo's working image and segment the main World region:
    the table as find_table(image, table_from) finds it (or `table`, found so already), the two
    tile colours from the largest region standing out from it."""
    table = table or find_table(image, table_from)
    world_mask = table.regions[0]
    lab = image.lab
    inner = cv2.erode(world_mask, np.ones((5, 5), np.uint8))
    pix = lab[inner > 0]
    if len(pix) < 200:
        raise NoWorldFoundError("no EXXIT World found: the tiled region is too small to read")
    pix = pix[:: max(1, len(pix) // 40000)]
    tiles = _two_colours(pix, profile)
    return ColourModel(tables=table.colours, tiles=tiles, discs=dict(tiles), world_mask=world_mask, lab=lab,
                       image=image, confidence=_separation(tiles), regions=table.regions,
                       white_is_lighter=profile.white_is_lighter(), hints=hint_labs(profile))


def reaching_in(foreground: np.ndarray, gradient: np.ndarray) -> np.ndarray:
    """The mask (uint8, 0 or 255) of the smooth surfaces of a `foreground` mask that reach the photo's
    edge, with their outlines: a player's arm and hand, a sleeve, the room beyond the table, a lamp's
    pool of light on it. Tiles and discs lie inside the photo, and their outlines (`gradient` the
    working image's colour gradient) part them from these: a hand whose fingertips touch a disc
    takes the World's region with it, and skin is learnt as a tile colour (fresh 139 s060 with a
    hand beside the World). A last try only (find_table's "reaching in aside"): as a first, the
    World read otherwise on 37 of 1,152 photos, 17 of them worse (BENCHMARKS.md, session 85)."""
    smooth = ((foreground > 0) & (gradient < SMOOTH_GRADIENT)).astype(np.uint8)
    count, labels = cv2.connectedComponents(smooth, connectivity=4)
    edge = np.concatenate([labels[:EDGE_BAND].ravel(), labels[-EDGE_BAND:].ravel(),
                           labels[:, :EDGE_BAND].ravel(), labels[:, -EDGE_BAND:].ravel()])
    reaches = np.zeros(count, np.uint8)
    reaches[edge] = 255
    reaches[0] = 0
    return cv2.dilate(reaches[labels], np.ones((5, 5), np.uint8))


def _surroundings(lab: np.ndarray) -> np.ndarray:
    """Each pixel's median Lab colour over a window SURROUNDINGS of the image's short side wide
    (computed at a quarter of the resolution): the table's own colour where the tiles and discs
    on it cover less of the window than the table does."""
    h, w = lab.shape[:2]
    small = cv2.resize(lab, (max(1, w // 4), max(1, h // 4)), interpolation=cv2.INTER_AREA)
    k = max(3, int(SURROUNDINGS * min(small.shape[:2])) | 1)
    scale = np.array([2.55, 1.0, 1.0], np.float32)          # Lab to 0..255 for 8-bit median filters
    offset = np.array([0.0, 128.0, 128.0], np.float32)
    as_bytes = np.clip(small * scale + offset, 0, 255).astype(np.uint8)
    median = np.stack([cv2.medianBlur(np.ascontiguousarray(as_bytes[..., i]), k) for i in range(3)], -1)
    median = (median.astype(np.float32) - offset) / scale
    return cv2.resize(median, (w, h), interpolation=cv2.INTER_LINEAR)


def _table_classes(border: np.ndarray) -> list:
    """The table's colours from the photo's border: one to three clusters (cloths, wood grain);
    clusters holding little of the border (a piece or a hand at the edge) are dropped, and so are
    clusters close to one kept, unless a valley in the border's colours parts them (_valley_between)."""
    pix = border[:: max(1, len(border) // 20000)].astype(np.float32)
    crit = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 20, 0.5)
    cv2.setRNGSeed(1)  # kmeans++ draws from OpenCV's global generator: keep results reproducible
    _, lbl, centres = cv2.kmeans(pix, 3, None, crit, 2, cv2.KMEANS_PP_CENTERS)
    lbl = lbl.ravel()
    classes = []
    for i in np.argsort(-np.bincount(lbl, minlength=3)):
        members = pix[lbl == i]
        if len(members) < 0.12 * len(pix):
            continue
        classes.append((_robust_class(members, floor=(4.0, 2.5, 2.5)), members))
    kept = [classes[0]]
    for c, members in classes[1:]:      # close clusters are one colour split in three: keep one
        if all(np.abs((c.mean - k.mean) / k.sigma).max() > 3.0 or _valley_between(k_members, members, k, c)
               for k, k_members in kept):
            kept.append((c, members))
    return [c for c, _ in kept]


def _valley_between(a_pix: np.ndarray, b_pix: np.ndarray, a: ColourClass, b: ColourClass) -> bool:
    """Whether the pixels of two close clusters are two colours (a checkered cloth's checks under
    dim light) rather than one colour split: along the line from one centre to the other, their
    density falls between the centres to under half of what it is around each."""
    axis = b.mean - a.mean
    if not axis.any():
        return False
    t = (np.concatenate([a_pix, b_pix]) - a.mean) @ axis / (axis @ axis)
    density, _ = np.histogram(t, bins=16, range=(-0.2, 1.4))     # bins of 0.1: centres at bins 2 and 12
    around = min(density[:5].max(), density[10:15].max())
    return bool(density[5:10].min() < 0.5 * around)


def _components(mask: np.ndarray, keep=3) -> list:
    """The largest, most central non-table regions (masks), best first; the room beyond the table's
    far edge (a region across over ROOM_WIDTH of the photo, its centre in the top third) after
    the others."""
    h, w = mask.shape
    closed = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((9, 9), np.uint8))
    n, lbl, stats, cents = cv2.connectedComponentsWithStats(closed, connectivity=8)
    if n <= 1:
        return []
    diag = np.hypot(w, h)
    scored = []
    for i in range(1, n):
        area = stats[i, cv2.CC_STAT_AREA]
        if area < 0.002 * h * w:
            continue
        d = np.hypot(cents[i][0] - w / 2, cents[i][1] - h / 2) / diag
        room = stats[i, cv2.CC_STAT_WIDTH] > ROOM_WIDTH * w and cents[i][1] < h / 3
        scored.append((not room, area * np.exp(-(d / 0.35) ** 2), i))
    scored.sort(reverse=True)
    return [((lbl == i) & (mask > 0)).astype(np.uint8) * 255 for *_, i in scored[:keep]]


def hint_labs(profile: SetProfile) -> dict:
    out = {}
    for role, hint in profile.colours.items():
        if hint.tile_rgb:
            rgb = np.array([[hint.tile_rgb]], np.float32) / 255.0
            out[role] = cv2.cvtColor(rgb, cv2.COLOR_RGB2Lab)[0, 0]
    return out if len(out) == 2 else {}


def _chroma(lab: np.ndarray) -> float:
    return float(np.hypot(lab[1], lab[2]))


def hints_differ_in_chroma(hints: dict) -> bool:
    """Whether the profile's two colour hints differ in chroma (red against black or silver)."""
    return bool(hints) and abs(_chroma(hints["white"]) - _chroma(hints["black"])) > 15


def hints_tell_apart(a: np.ndarray, b: np.ndarray, hints: dict) -> bool:
    """Whether the colour hints tell the roles of two Lab colours by their chroma: the hints' chromas
    differ (hints_differ_in_chroma), and so do the two colours'."""
    return hints_differ_in_chroma(hints) and abs(_chroma(a) - _chroma(b)) > 10


def assign_roles(a: np.ndarray, b: np.ndarray, hints: dict, white_is_lighter: bool) -> tuple:
    """(white, black) of two Lab colours. Where the colour hints tell them apart (hints_tell_apart),
    the colour nearer in chroma to each hint takes its role: lightness misleads under reflections
    (silver looks dark) and dim light. Otherwise the lighter one is White unless the profile says
    the darker colour plays White."""
    if hints_tell_apart(a, b, hints):
        hw, hb = hints["white"], hints["black"]

        def cost(x, y):
            return np.linalg.norm(x[1:] - hw[1:]) + np.linalg.norm(y[1:] - hb[1:])
        return (a, b) if cost(a, b) <= cost(b, a) else (b, a)
    lighter, darker = (a, b) if a[0] >= b[0] else (b, a)
    return (lighter, darker) if white_is_lighter else (darker, lighter)


def lab_clusters(lab: np.ndarray, k: int) -> tuple:
    """(labels, centres) of k clusters of Lab colours (n, 3), lightness counted at LAB_WEIGHTS; the
    centres in Lab."""
    crit = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 30, 0.2)
    cv2.setRNGSeed(1)  # kmeans++ draws from OpenCV's global generator: keep results reproducible
    _, lbl, centres = cv2.kmeans((lab * LAB_WEIGHTS).astype(np.float32), k, None, crit, 3, cv2.KMEANS_PP_CENTERS)
    return lbl.ravel(), centres / LAB_WEIGHTS


def _two_colours(pix: np.ndarray, profile: SetProfile) -> dict:
    """Split the World's pixels into two colour clusters; the lighter plays White by default."""
    lbl, _ = lab_clusters(pix, 2)
    groups = [pix[lbl == i] for i in range(2)]
    # a first guess only: the tile reader re-learns both colours from the tile cells
    classes = [_robust_class(g if len(g) >= 5 else pix) for g in groups]
    white, _ = assign_roles(classes[0].mean, classes[1].mean, hint_labs(profile), profile.white_is_lighter())
    if white is classes[0].mean:
        return {"white": classes[0], "black": classes[1]}
    return {"white": classes[1], "black": classes[0]}


def _separation(tiles: dict) -> float:
    a, b = tiles["white"], tiles["black"]
    d = np.linalg.norm((a.mean - b.mean) / np.sqrt(a.sigma ** 2 + b.sigma ** 2))
    return float(np.clip((d - 1.0) / 3.0, 0.0, 1.0))

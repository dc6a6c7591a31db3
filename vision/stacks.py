"""Stage 4: stacks of discs on tiles and on the perimeter: presence, height, top and side colours.

A small convolutional network (vision/stack_net.py), trained on rendered photos with exact truth,
looks at every candidate cell through the same canonical crop and gives the chances of no stack and
of each height 1..MAX_READ; the confidence is how often such reads were right when the network was
cross-validated. An off-World cell read bare is looked at again through its crop moved a fifth of a
pitch towards each neighbour: the lattice, fitted on the World's tiles, can lie that far off the
table beside a small World (_looked_around). A found stack is then placed: its offset from the
cell's centre is where the projected silhouette of a cylinder of its height (the profile's disc
diameter and thickness) finds the most edge support along its outline and base (stack_offset).
Nearer stacks are placed first and hide what lies behind them. The top disc's colour is read inside
the top ellipse, the side discs' colours on the stack's front face between the expected disc
boundaries. A reading that holds more discs of a colour than a set has is brought back within it by
the changes the network and the colour reads lose least by (keep_to_the_set).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import cv2
import numpy as np

import rules
from rules.position import DISCS_PER_COLOUR

from .colours import BLACK, TABLE, WHITE, ColourModel
from .convnet import ConvNet
from .geometry import WorldGeometry, sample_image
from .hexgrid import cells_to_plane
from .profile import SetProfile
from .stack_net import CROP_H, CROP_SCALARS, CROP_W, network_input, stack_chances, stack_crop

MAX_READ = 8                     # tallest stack read (RULES.md §14: 6,500 random games never passed 7)
CIRCLE = np.stack([np.cos(np.linspace(0, 2 * np.pi, 48, endpoint=False)),
                   np.sin(np.linspace(0, 2 * np.pi, 48, endpoint=False))], axis=1)
RIM = CIRCLE[::3]                # the coarser circle of the many-hypothesis scores
TOP_FACE = np.concatenate([[[0.0, 0.0]], RIM[::2] * 0.35, RIM * 0.7])   # points over a disc's top, in radii
SHIFT_GRID_MM = np.array([(1.2 * (q + r / 2), 1.2 * r * 0.866)     # a stack's offsets from its cell
                          for q in range(-3, 4) for r in range(-3, 4) if abs(q + r) <= 3])    # centre tried
SATURATION = 3.0
SIDE_SAMPLES = 6
NORMAL_SEARCH_PX = (-1.2, 0.0, 1.2)   # tolerated misfit of an outline, across it
HUES_APART = 15.0                # a*b* distance of two disc colours that differ in hue, not only in lightness
HUE_SET_LIGHTNESS = 0.3          # weight of lightness in a top's colour then (renders: top colour 97.8 -> 98.7%)
TOP_PERCENTILE = 85              # of a top's points, towards black (dev renders: top colour 621 -> 624 of 625)
GLARE_RIM_RADIUS = 0.8           # the circle, in disc radii, where a glossy black top stays dark under glare
GLARE_RIM = 0.32                 # a top read white whose rim's median point lies further towards black is a
                                 # black top under glare (eight sets: white tops' rims at most 0.27 of 1,544,
                                 # glare-lit black tops' 0.37-0.68 of 10; BENCHMARKS.md, session 66) ...
GLARE_MIDDLE = 0.12              # ... if its circle at 0.6 radii lies that far too: glare darkens a top gradually
                                 # (those 10: 0.18-0.47); a circle at a disc too low that strays onto the side
                                 # of a disc under a white top is dark only at its rim (fresh 87 s064: 0.06)
GLARE_CONFIDENCE = 0.5           # of a top read black by its rim: flagged for a user or another photo to settle
CONFIDENT = 0.8                  # reads at or above it are sure; below, flagged uncertain
LOWERED_CONFIDENCE = 0.5         # at most, of a stack read lower than it looks to keep to the set
SIDE_READ_LOSS = 0.7             # log(right / wrong) of a side colour read (samples, dev renders: 52 to 25)
LOOK_AROUND_PITCH = 0.2         # an off-World cell read bare is read again with its crop moved this far (in
                                # pitches) towards each neighbour not holding a stack: where the lattice,
                                # fitted on a few tiles, lies 0.2-0.5 pitch off the table beside them, the
                                # stack there stands off its crop's centre (BENCHMARKS.md, session 69) ...
LOOK_AROUND_FOUND = 0.3         # ... and holds a stack where a moved crop's chance of none is under this;
LOOK_AROUND_DISCS = 0.1         # a moved crop is read only where this share of the points of a disc's top
                                # there show a disc's colour, not the table's (a fifth of the moved crops
                                # pass; the twelve stacks found this way on sixteen sets showed 0.16-1)
ACTIVITY_GATE = 0.05             # edge activity (edge_activity) under which a cell is not measured (dev renders:
                                 # at 0.15, 5 of 451 stacks fell under it, at 0.08-0.13; the network reads them)


@dataclass
class StackRead:
    cell: tuple
    height: int
    discs: list                   # bottom..top, "white"/"black"/None
    top: str
    confidence: float
    top_confidence: float
    height_confidence: float
    on_tile: bool
    top_pixel: tuple              # full-resolution pixel of the top disc's centre
    shift_mm: tuple = (0.0, 0.0)  # the stack's offset from its cell's centre
    side_confidences: tuple = ()  # of the colours of discs[:-1] (0 where unread)
    height_chances: tuple = ()    # the stack networks' chances of heights 1..MAX_READ, given a stack


@dataclass
class StackReading:
    stacks: dict = field(default_factory=dict)    # cell -> StackRead
    hidden: np.ndarray | None = field(default=None, repr=False)   # work mask of stack silhouettes
    lowered: list = field(default_factory=list)   # cells of stacks read lower than they look (keep_to_the_set)
    chances: dict = field(default_factory=dict, repr=False)   # (cell, on a tile) -> stack_chances of its crop
    moved: dict = field(default_factory=dict, repr=False)     # off-World cell -> mm its crop was moved by

    def merged(self, other: "StackReading") -> "StackReading":
        """A reading to give read_stacks as its `earlier`: the chances and moved crops of both."""
        return StackReading(chances={**self.chances, **other.chances}, moved={**self.moved, **other.moved})

    def draw(self, image: np.ndarray, geo: WorldGeometry, profile: SetProfile) -> np.ndarray:
        out = image.copy()
        f = out.shape[1] / (geo.segments_scale_width / geo.scale)
        for cell, st in self.stacks.items():
            sil = silhouette(geo, profile, cell, st.height, st.on_tile, st.shift_mm) * f
            colour = (255, 255, 255) if st.top == "white" else (0, 0, 0)
            cv2.polylines(out, [np.round(sil).astype(np.int32)], True, (0, 255, 0), 2, cv2.LINE_AA)
            x, y = (np.array(st.top_pixel) * f).round().astype(int)
            cv2.circle(out, (int(x), int(y)), 9, colour, -1)
            cv2.circle(out, (int(x), int(y)), 9, (0, 255, 0), 1)
            label = f"{st.height}{'?' if st.confidence < CONFIDENT else ''}"
            cv2.putText(out, label, (int(x) + 10, int(y) - 6), cv2.FONT_HERSHEY_SIMPLEX, 0.8, (0, 0, 0), 4)
            cv2.putText(out, label, (int(x) + 10, int(y) - 6), cv2.FONT_HERSHEY_SIMPLEX, 0.8,
                        (0, 255, 255) if st.confidence >= CONFIDENT else (255, 0, 255), 2)
        return out


def _base_height(profile: SetProfile, on_tile: bool) -> float:
    return 0.0 if on_tile else -profile.tile_thickness_mm


def ring_points(geo: WorldGeometry, profile: SetProfile, cell, height_mm: float, scale=1.0,
                shift=(0.0, 0.0)) -> np.ndarray:
    """Full-resolution pixels of the disc circle (radius * scale) at `height_mm` over the cell,
    its centre moved by `shift` (mm) from the cell's centre."""
    r = profile.disc_diameter_mm / 2 * scale
    return geo.project([cell], height_mm, CIRCLE * r + np.asarray(shift))


def top_pixel(geo: WorldGeometry, profile: SetProfile, cell, height: int, on_tile: bool,
              shift=(0.0, 0.0)) -> tuple:
    """Full-resolution pixel of the centre of a stack's top disc."""
    top_h = _base_height(profile, on_tile) + height * profile.disc_thickness_mm
    return tuple(float(v) for v in geo.project([cell], top_h, np.array([shift]))[0])


def silhouette(geo, profile, cell, height, on_tile, shift=(0.0, 0.0)) -> np.ndarray:
    base = _base_height(profile, on_tile)
    bottom = ring_points(geo, profile, cell, base, shift=shift)
    top = ring_points(geo, profile, cell, base + height * profile.disc_thickness_mm, shift=shift)
    pts = np.concatenate([bottom, top]).astype(np.float32)
    return cv2.convexHull(pts).reshape(-1, 2)


class EdgeMap:
    """Colour gradients of the working image, normalised by their typical strength on the World."""

    def __init__(self, colours: ColourModel):
        self.gx, self.gy, mag = colours.colour_gradients()          # gx, gy: (h, w, 3): L, a, b
        vals = mag[colours.world_mask > 0]
        self.norm = float(np.percentile(vals, 90)) if len(vals) else 1.0
        self.norm = max(self.norm, 1.0)
        self.h, self.w = mag.shape
        self.strength = np.minimum(mag / self.norm, SATURATION).astype(np.float32)

    def support(self, pts: np.ndarray, normals: np.ndarray) -> np.ndarray:
        """Normal-direction edge strength at work-image points (bilinear), in units of the World's
        typical edge strength, clipped at SATURATION so one very strong edge cannot dominate."""
        s = self.across(pts, normals, NORMAL_SEARCH_PX).max(axis=0)     # tolerate a pixel or two of misfit
        return np.clip(s, 0, SATURATION)

    def across(self, pts: np.ndarray, normals: np.ndarray, offsets) -> np.ndarray:
        """(len(offsets), N): the edge strength across unit `normals` (N, 2) at work-image points
        `pts` (N, 2) moved by each of `offsets` (pixels) along their normals, in units of the
        World's typical edge strength."""
        n = len(pts)
        offsets = np.asarray(offsets, np.float32)
        shifted = pts[None, :, :] + offsets[:, None, None] * normals[None, :, :]
        vx = sample_image(self.gx, shifted[..., 0], shifted[..., 1])
        vy = sample_image(self.gy, shifted[..., 0], shifted[..., 1])
        nx = np.tile(normals[:, 0].astype(np.float32), len(offsets))[:, None]
        ny = np.tile(normals[:, 1].astype(np.float32), len(offsets))[:, None]
        across = vx * nx + vy * ny
        s = np.sqrt(across[:, 0] ** 2 + across[:, 1] ** 2 + across[:, 2] ** 2)
        return s.reshape(len(offsets), n) / self.norm


def score_heights(edges: EdgeMap, geo, profile, cell, on_tile, discs, blocked=None, shifts_mm=((0.0, 0.0),)):
    """(sides, front, back) edge support, each (len(shifts_mm), len(discs)): per offset of the
    stack from its cell centre (mm) and per stack of discs[j] discs, discs[0] being 0 (the bare
    base); and below (len(shifts_mm),).

    sides[:, j]: along the two vertical silhouette lines of the stack (its left and right outline,
    base to top); front[:, j] and back[:, j]: along the near half (the top face's front edge) and
    the far half (the silhouette) of its top disc's rim; below: along the side lines continued one
    disc under the base (strong when the base is put on top of real discs). Points hidden by
    `blocked` do not count.
    """
    shifts = np.asarray(shifts_mm, float).reshape(-1, 2)
    discs = np.asarray(discs)
    S, H, n, m = len(shifts), len(discs), len(RIM), SIDE_SAMPLES
    base = _base_height(profile, on_tile)
    heights = base + discs * profile.disc_thickness_mm
    r = profile.disc_diameter_mm / 2
    toward = _toward_camera(geo, cell)
    near = RIM @ toward > 0
    a0 = np.arctan2(toward[1], toward[0])
    sides_at = np.array([[np.cos(a0 + d), np.sin(a0 + d)] for d in (np.pi / 2, -np.pi / 2)]) * r
    frac = (np.arange(m) + 0.5) / m
    zs = base + frac[None, :] * (heights - base)[:, None]                       # (H, m)
    zs[0] = base - (1 - frac) * profile.disc_thickness_mm     # the bare base's lines: the disc under it
    # rims (S, H, n) and side lines (S, 2, H, m): offsets and heights of every point
    rim_off = shifts[:, None, None, :] + (RIM * r)[None, None, :, :] + np.zeros((1, H, 1, 1))
    rim_z = np.broadcast_to(heights[None, :, None], (S, H, n))
    side_off = shifts[:, None, None, None, :] + sides_at[None, :, None, None, :] + np.zeros((1, 1, H, m, 1))
    side_z = np.broadcast_to(zs[None, None], (S, 2, H, m))
    offs = np.concatenate([rim_off.reshape(-1, 2), side_off.reshape(-1, 2)])
    z = np.concatenate([rim_z.ravel(), side_z.ravel()])
    pix = geo.project([cell], z, offs) * geo.scale
    rims = pix[:S * H * n].reshape(S, H, n, 2)
    side_pts = pix[S * H * n:].reshape(S, 2, H, m, 2)
    d = side_pts[..., -1, :] - side_pts[..., 0, :]                               # (S, 2, H, 2)
    side_nrm = np.stack([d[..., 1], -d[..., 0]], -1) / (np.linalg.norm(d, axis=-1, keepdims=True) + 1e-9)
    side_nrm = np.broadcast_to(side_nrm[..., None, :], side_pts.shape)
    ccw = np.where(_clockwise(rims), -1.0, 1.0)[..., None, None]
    tang = np.roll(rims, -1, axis=2) - np.roll(rims, 1, axis=2)
    rim_nrm = ccw * np.stack([tang[..., 1], -tang[..., 0]], -1)
    rim_nrm /= np.linalg.norm(rim_nrm, axis=-1, keepdims=True) + 1e-9
    pts = np.concatenate([rims.reshape(-1, 2), side_pts.reshape(-1, 2)])
    nrm = np.concatenate([rim_nrm.reshape(-1, 2), side_nrm.reshape(-1, 2)])
    sup = edges.support(pts, nrm)
    if blocked is not None:
        px = np.clip(np.round(pts[:, 0]).astype(int), 0, edges.w - 1)
        py = np.clip(np.round(pts[:, 1]).astype(int), 0, edges.h - 1)
        sup = np.where(blocked[py, px] == 0, sup, np.nan)
    rim_sup = sup[:S * H * n].reshape(S, H, n)
    side_sup = sup[S * H * n:].reshape(S, 2, H, m).transpose(0, 2, 1, 3).reshape(S, H, 2 * m)
    counted = (~np.isnan(side_sup)).sum(axis=-1)
    sides = np.where(counted >= m, np.nansum(side_sup, axis=-1) / np.maximum(counted, 1), 0.0)
    below = sides[:, 0].copy()
    sides[:, 0] = 0.0
    return sides, robust_mean(rim_sup[..., near], 6), robust_mean(rim_sup[..., ~near], 6), below


def robust_mean(sup: np.ndarray, min_points: int):
    """Mean over the last axis of the support values without NaNs (hidden points) and the weakest
    eighth; 0 where fewer than `min_points` are left."""
    sup = np.asarray(sup, float)
    count = (~np.isnan(sup)).sum(axis=-1)
    ordered = np.nan_to_num(np.sort(sup, axis=-1))                 # NaNs sort last and add nothing
    csum = np.concatenate([np.zeros(sup.shape[:-1] + (1,)), np.cumsum(ordered, axis=-1)], axis=-1)
    skip = count // 8                                             # ignore the weakest eighth
    total = np.take_along_axis(csum, count[..., None], -1)[..., 0] - np.take_along_axis(csum, skip[..., None], -1)[..., 0]
    mean = np.where(count >= min_points, total / np.maximum(count - skip, 1), 0.0)
    return float(mean) if mean.ndim == 0 else mean


def rim_support(edges: EdgeMap, geo, cell, height_mm: float, radius_mm: float) -> float:
    """Edge support along a horizontal circle of `radius_mm` at `height_mm` over a cell: the weaker
    of its far half (a disc top's silhouette) and its near half (the top face's front edge)."""
    pts = geo.project([cell], height_mm, CIRCLE * radius_mm) * geo.scale
    toward = _toward_camera(geo, cell)
    near = CIRCLE @ toward > 0
    ccw = -1.0 if _clockwise(pts) else 1.0
    tang = np.roll(pts, -1, axis=0) - np.roll(pts, 1, axis=0)
    nrm = ccw * np.stack([tang[:, 1], -tang[:, 0]], 1) / (np.linalg.norm(tang, axis=1, keepdims=True) + 1e-9)
    sup = edges.support(pts, nrm)
    return min(robust_mean(sup[near], 8), robust_mean(sup[~near], 8))


def _clockwise(poly):
    """Whether a polygon (..., n, 2) runs clockwise in the image (y down: negative shoelace area)."""
    x, y = poly[..., 0], poly[..., 1]
    return np.sum(x * np.roll(y, -1, axis=-1) - np.roll(x, -1, axis=-1) * y, axis=-1) < 0


def _ground_before(colours: ColourModel, geo, profile, cell, on_tile, ground, shifts):
    """Per offset: the share of points just in front of a stack's base (on the camera's side) that
    show the ground's colour class."""
    toward = _toward_camera(geo, cell)
    a0 = np.arctan2(toward[1], toward[0])
    angles = a0 + np.radians(np.linspace(-60, 60, 9))
    ring_pts = np.concatenate([np.stack([np.cos(angles), np.sin(angles)], 1) * k for k in (1.12, 1.25)])
    offs = (np.asarray(shifts)[:, None, :] + ring_pts[None] * profile.disc_diameter_mm / 2).reshape(-1, 2)
    pts = geo.project([cell], _base_height(profile, on_tile), offs) * geo.scale
    classes = colours.classify(_lab_at(colours, pts))[0]
    return (classes == ground).reshape(len(shifts), len(ring_pts)).mean(axis=1)


def edge_activity(edges: EdgeMap, geo: WorldGeometry, profile: SetProfile, cells, tiles) -> np.ndarray:
    """Per cell: the mean of the strongest tenth of the edge strength on rings inside where a low
    stack's outline would run. A bare tile or table cell shows texture there, a stack its outline."""
    rings = np.concatenate([RIM * k for k in (0.35, 0.7, 0.95)]) * profile.disc_diameter_mm / 2
    lifts = np.array([0.0, 1.0, 2.0]) * profile.disc_thickness_mm
    cells = list(cells)
    base = np.array([_base_height(profile, c in tiles) for c in cells])
    n = len(rings) * len(lifts)
    z = (base[:, None, None] + lifts[None, :, None] + np.zeros((1, 1, len(rings)))).ravel()
    offs = np.broadcast_to(rings[None, None], (len(cells), len(lifts), len(rings), 2)).reshape(-1, 2)
    pts = geo.project(np.repeat(cells, n, axis=0), z, offs) * geo.scale
    vals = sample_image(edges.strength, np.clip(pts[:, 0], 0, edges.w - 1), np.clip(pts[:, 1], 0, edges.h - 1))
    vals = vals.reshape(len(cells), n)
    return np.sort(vals, axis=1)[:, -(n // 10):].mean(axis=1)


def stack_offset(edges: EdgeMap, colours: ColourModel, geo: WorldGeometry, profile: SetProfile, cell,
                 on_tile: bool, ground: int, height: int, hidden: np.ndarray, around=(0.0, 0.0)) -> np.ndarray:
    """Where (mm from the cell's centre, `around` plus one of SHIFT_GRID_MM) a stack of `height` on `cell` stands:
    the offset whose outline fits best. The outline is the edge support of its side lines, of the
    far half of its top rim and the step from its top rim to the next height's; the base counts
    too (the front edge where the stack meets the ground, and the ground's colour just in front of
    it, `ground` being the colour class under the cell), minus the support of an outline continued
    one disc under the base (strong when the base is put on top of real discs). Points hidden by
    nearer stacks (`hidden`) do not count."""
    grid = SHIFT_GRID_MM + np.asarray(around, float)
    h = min(height, MAX_READ)
    sides, front, back, below = score_heights(edges, geo, profile, cell, on_tile, (0, h, h + 1), hidden, grid)
    outline = back[:, 1] + front[:, 1] - front[:, 2] + 0.5 * sides[:, 1]
    before = _ground_before(colours, geo, profile, cell, on_tile, ground, grid)
    return grid[int(np.argmax(outline + front[:, 0] + before - below))]


def place_stacks(colours: ColourModel, geo: WorldGeometry, profile: SetProfile, heights: dict, tiles: dict,
                 edges: EdgeMap, hidden: np.ndarray, moved: dict | None = None):
    """Place the stacks of `heights` (cell -> height), nearest to the camera first: each one's
    offset (stack_offset, around where `moved` (cell -> mm) moved its crop) is found with the
    stacks already placed hiding what lies behind them, and its silhouette is then drawn into
    `hidden` (a working-resolution mask). Yields (cell, offset in mm)."""
    cam = geo.camera.centre
    dist = {c: float(np.linalg.norm(np.append(np.array(cells_to_plane([c])[0]) * geo.pitch_mm, 0) - cam))
            for c in heights}
    role_class = {"white": WHITE, "black": BLACK}
    for cell in sorted(heights, key=dist.get):
        on_tile = cell in tiles
        ground = role_class[tiles[cell]] if on_tile else TABLE
        shift = stack_offset(edges, colours, geo, profile, cell, on_tile, ground, heights[cell], hidden,
                             (moved or {}).get(cell, (0.0, 0.0)))
        sil = silhouette(geo, profile, cell, heights[cell], on_tile, shift) * geo.scale
        cv2.fillPoly(hidden, [np.round(sil).astype(np.int32)], 255)
        yield cell, shift


def read_stacks(colours: ColourModel, geo: WorldGeometry, profile: SetProfile, cells, tiles: dict,
                edges: "EdgeMap | None" = None, earlier: "StackReading | None" = None) -> StackReading:
    """Find the stacks among `cells` (on-tile when the cell is in `tiles`): the stack networks
    weigh each cell whose edge activity reaches ACTIVITY_GATE into chances of no stack and of each
    height (stack_chances); a cell whose chance of a stack is over one half holds its likeliest
    height, unless the reading then holds more discs than a set has (keep_to_the_set). The
    confidences are how often such reads were right when the network was cross-validated. An
    off-World cell read bare is read again with its crop moved around (_looked_around). The
    chances an `earlier` reading of the same photo found for a cell on the same base are reused."""
    edges = edges or EdgeMap(colours)
    net = ConvNet.shipped("stack_net")
    cells = list(cells)
    activity = edge_activity(edges, geo, profile, cells, tiles) if cells else []
    measured = [(c, c in tiles) for c, a in zip(cells, activity) if a >= ACTIVITY_GATE]
    known = earlier.chances if earlier else {}
    new = [c for c, on_tile in measured if (c, on_tile) not in known]
    crops, scalars = stack_crops(colours, geo, profile, new, tiles)
    found = dict(zip(((c, c in tiles) for c in new), stack_chances(net, network_input(crops), scalars)))
    reading = StackReading(hidden=np.zeros(colours.world_mask.shape, np.uint8),
                           chances={key: found[key] if key in found else known[key] for key in measured})
    reading.moved = {c: m for c, m in (earlier.moved if earlier else {}).items() if (c, False) in reading.chances}
    stacked = {c for (c, _), p in reading.chances.items() if p[0] < 0.5}
    bare = [c for (c, on_tile), p in found.items() if not on_tile and p[0] >= 0.5]
    for cell, (p, shift) in _looked_around(colours, geo, profile, net, bare, stacked).items():
        reading.chances[(cell, False)] = p
        reading.moved[cell] = shift
    chances = {c: reading.chances[(c, on_tile)] for c, on_tile in measured}
    heights = {c: int(np.argmax(p[1:]) + 1) for c, p in chances.items() if p[0] < 0.5}

    def read(cell, height, shift):
        p = chances[cell]
        present = float(net.confidence("present", 1 - p[0]))
        height_conf = float(net.confidence("height", p[height] / p[1:].sum()))
        st = _read_colours(colours, geo, profile, cell, height, cell in tiles, shift)
        st.height_confidence = round(height_conf, 3)
        st.height_chances = tuple(float(c) for c in p[1:] / max(p[1:].sum(), 1e-9))
        st.confidence = round(min(height_conf * present, st.top_confidence), 3)   # both must be right
        return st

    for cell, shift in place_stacks(colours, geo, profile, heights, tiles, edges, reading.hidden, reading.moved):
        reading.stacks[cell] = read(cell, heights[cell], shift)
    reading.lowered = keep_to_the_set(reading.stacks, chances, read)
    return reading


def _looked_around(colours: ColourModel, geo: WorldGeometry, profile: SetProfile, net, cells, stacked) -> dict:
    """{cell: (chances, mm moved)} of the off-World `cells` that show a stack once their crop is
    moved LOOK_AROUND_PITCH towards one of their neighbours: the moved crop whose chance of no
    stack is least, if under LOOK_AROUND_FOUND. A crop is moved only where a disc's top would show
    a disc's colour (LOOK_AROUND_DISCS); not towards a cell of `stacked` or of another found this
    way (it would see that cell's stack), nor towards a cell whose own moved crop found a stack
    towards it (the same stack, seen from both sides)."""
    moves = [(c, step) for c in cells for step in rules.STEPS
             if (c[0] + step[0], c[1] + step[1]) not in stacked]
    if not moves:
        return {}
    to = np.array([(c[0] + LOOK_AROUND_PITCH * s[0], c[1] + LOOK_AROUND_PITCH * s[1]) for c, s in moves])
    top = _base_height(profile, False) + profile.disc_thickness_mm
    face = np.tile(TOP_FACE * profile.disc_diameter_mm / 2, (len(to), 1))
    pts = geo.project(np.repeat(to, len(TOP_FACE), axis=0), top, face) * geo.scale
    discs = (colours.classify(_lab_at(colours, pts))[0] != TABLE).reshape(len(to), len(TOP_FACE)).mean(axis=1)
    keep = np.flatnonzero(discs >= LOOK_AROUND_DISCS)
    if not len(keep):
        return {}
    moves = [moves[i] for i in keep]
    crops, scalars = stack_crops(colours, geo, profile, [tuple(c) for c in to[keep]], {})
    chances = stack_chances(net, network_input(crops), scalars)
    found, towards = {}, set()
    for i in np.argsort(chances[:, 0], kind="stable"):
        (c, step), p = moves[i], chances[i]
        if p[0] >= LOOK_AROUND_FOUND:
            break
        target = (c[0] + step[0], c[1] + step[1])
        if c in found or c in towards or target in found:
            continue
        found[c] = (p, tuple(float(v) for v in cells_to_plane([step])[0] * LOOK_AROUND_PITCH * geo.pitch_mm))
        towards.add(target)
    return found


def read_at_heights(reading: StackReading, colours: ColourModel, geo: WorldGeometry, profile: SetProfile,
                    chances: dict, settle=None) -> StackReading:
    """`reading` with each stack of `chances` ({cell: chances of heights 1..MAX_READ}, e.g. two
    photos' combined) at its likeliest height under them, its colours read again where the height
    changes, then `settle(cell, read)`'s (e.g. the surer of another photo's colours) if given, and
    its height confidence that chance; then kept to the set (keep_to_the_set)."""
    chances_of = {c: tuple(chances.get(c, st.height_chances)) for c, st in reading.stacks.items()}

    def read(cell, height, shift):
        old = reading.stacks[cell]
        if height == old.height and cell not in chances:
            return old
        st = old if height == old.height else _read_colours(colours, geo, profile, cell, height, old.on_tile, shift)
        if settle is not None:
            st = settle(cell, st)
        confidence = round(chances_of[cell][height - 1], 3)
        return replace(st, height_chances=chances_of[cell], height_confidence=confidence,
                       confidence=round(min(confidence, st.top_confidence), 3))

    stacks = {c: read(c, int(np.argmax(chances_of[c])) + 1, st.shift_mm) for c, st in reading.stacks.items()}
    lowered = keep_to_the_set(stacks, {c: np.array([0.0, *p]) for c, p in chances_of.items()}, read)
    return replace(reading, stacks=stacks, lowered=sorted(set(reading.lowered) | set(lowered)))


def keep_to_the_set(stacks: dict, chances: dict, read) -> list:
    """While the reading holds more discs of a colour (or in all) than a set has (RULES.md §3),
    make the change that costs least: lower a stack by a disc (what the stack network loses) or
    leave a disc's side colour unread (SIDE_READ_LOSS). `read(cell, height, shift)` reads a stack
    again at a new height. Lowered stacks are flagged uncertain; returns their cells. Changes
    `stacks` in place. Where no change helps (too many stacks of one disc), the reading stays as
    it is and the sanity check flags it."""
    lowered = set()
    while (excess := _excess(stacks.values())) > 0:
        best = None
        for cell, st in stacks.items():
            for loss, candidate in _fewer_discs(st, chances[cell], read):
                if (best is None or loss < best[0]) and \
                        _excess([candidate, *(s for c, s in stacks.items() if c != cell)]) < excess:
                    best = (loss, cell, candidate)
        if best is None:
            break
        _, cell, candidate = best
        if candidate.height < stacks[cell].height:
            candidate.confidence = min(candidate.confidence, LOWERED_CONFIDENCE)
            lowered.add(cell)
        stacks[cell] = candidate
    return sorted(lowered)


def _fewer_discs(st: StackRead, p: np.ndarray, read):
    """(loss, read) of the ways to read the stack `st` with a disc less, or a disc's colour less."""
    if st.height > 1:
        yield float(np.log(p[st.height] + 1e-9) - np.log(p[st.height - 1] + 1e-9)), \
            read(st.cell, st.height - 1, st.shift_mm)
    for colour in rules.COLOURS:
        mine = [k for k, d in enumerate(st.discs[:-1]) if d == colour]
        if mine:
            k = min(mine, key=lambda k: st.side_confidences[k])
            discs, conf = list(st.discs), list(st.side_confidences)
            discs[k], conf[k] = None, 0.0
            yield SIDE_READ_LOSS, replace(st, discs=discs, side_confidences=tuple(conf))


def _excess(stacks) -> int:
    """How many discs a reading holds beyond a set's: of each colour, and in all."""
    stacks = list(stacks)
    known = [d for st in stacks for d in st.discs if d is not None]
    over = sum(max(0, known.count(c) - DISCS_PER_COLOUR) for c in rules.COLOURS)
    return over + max(0, sum(st.height for st in stacks) - 2 * DISCS_PER_COLOUR)


def stack_crops(colours: ColourModel, geo: WorldGeometry, profile: SetProfile, cells, tiles) -> tuple:
    """(crops, scalars): what the stack network looks at for each cell (vision.stack_net.stack_crop),
    a stack standing on the tile when the cell is in `tiles`, on the table otherwise."""
    cut = [stack_crop(colours.lab, geo, profile, c, _base_height(profile, c in tiles), _toward_camera(geo, c))
           for c in cells]
    return (np.array([c for c, _ in cut], np.float32).reshape(-1, CROP_H, CROP_W, 3),
            np.array([s for _, s in cut], np.float32).reshape(-1, CROP_SCALARS))


def _toward_camera(geo, cell) -> np.ndarray:
    """The horizontal direction (mm, not normalised) from a cell's centre to the camera."""
    return geo.camera.centre[:2] - np.array(cells_to_plane([cell])[0]) * geo.pitch_mm


def _lab_at(colours: ColourModel, pts_work: np.ndarray) -> np.ndarray:
    """Lab colours of the working image at the nearest pixels to `pts_work` (clamped to the image)."""
    h, w = colours.lab.shape[:2]
    x = np.clip(np.round(pts_work[:, 0]).astype(int), 0, w - 1)
    y = np.clip(np.round(pts_work[:, 1]).astype(int), 0, h - 1)
    return colours.lab[y, x]


def _classify_points(colours: ColourModel, pts_work: np.ndarray, shade_tolerant=False):
    """(role, confidence) of the disc under `pts_work`: where the points' colours lie between the two
    disc colours (_towards_black). On a disc's shaded side the median point decides; on a top face
    the point at TOP_PERCENTILE towards the black colour decides: a glossy black top's glare can
    lighten three quarters of it, while a white top is light all over."""
    t = _towards_black(colours, pts_work, shade_tolerant)
    t = float(np.percentile(t, 50 if shade_tolerant else TOP_PERCENTILE))
    conf = float(np.clip(abs(t - 0.5) * 2.5, 0, 1))
    return ("white" if t < 0.5 else "black"), conf


def _towards_black(colours: ColourModel, pts_work: np.ndarray, shade_tolerant=False) -> np.ndarray:
    """How far each point's colour lies from the white disc colour (0) towards the black one (1). On
    a disc's shaded side lightness counts half; on a top face of a set whose colours differ in hue
    (red against silver or black: the discs' colours in the photo, or the profile's colour hints
    where a lamp washes the photo's out) it counts HUE_SET_LIGHTNESS: glare and shade move the
    lightness of a lit top, not its hue."""
    lab = _lab_at(colours, pts_work)
    a, b = colours.discs["white"].mean, colours.discs["black"].mean
    hints = colours.hints
    if shade_tolerant:
        lightness = 0.5
    elif np.linalg.norm(b[1:] - a[1:]) > HUES_APART or \
            (hints and np.linalg.norm(hints["black"][1:] - hints["white"][1:]) > HUES_APART):
        lightness = HUE_SET_LIGHTNESS
    else:
        lightness = 1.0
    wt = np.array([lightness, 1.0, 1.0])
    axis = (b - a) * wt
    return ((lab - a) * wt) @ axis / (axis @ axis)


def _read_top(colours, geo, profile, cell, top_h, centre, shift) -> tuple:
    """(colour, confidence) of a stack's top disc at `top_h` (its centre pixel `centre`): its inner
    circles' colour (_classify_points); but a top that reads white there whose rim, at
    GLARE_RIM_RADIUS, lies mostly dark (past GLARE_RIM), and its circle at 0.6 radii darker than
    GLARE_MIDDLE, is a glossy black top whose middle a light straight above whitens, read black at
    GLARE_CONFIDENCE. A white top is light to its rim: a dark neighbour that a circle strays onto
    darkens a part of it, not half, and the side of a disc under it only the rim."""
    circles = {k: ring_points(geo, profile, cell, top_h, k, shift) * geo.scale for k in (0.2, 0.4, 0.6)}
    top, conf = _classify_points(colours, np.vstack([*circles.values(), centre[None] * geo.scale]))
    if top == "white":
        rim = ring_points(geo, profile, cell, top_h, GLARE_RIM_RADIUS, shift) * geo.scale
        median_towards_black = lambda pts: float(np.median(_towards_black(colours, pts)))
        if median_towards_black(rim) > GLARE_RIM and median_towards_black(circles[0.6]) > GLARE_MIDDLE:
            return "black", GLARE_CONFIDENCE
    return top, conf


def _read_colours(colours, geo, profile, cell, height, on_tile, shift) -> StackRead:
    base = _base_height(profile, on_tile)
    top_h = base + height * profile.disc_thickness_mm
    centre = np.array(top_pixel(geo, profile, cell, height, on_tile, shift))
    top, top_conf = _read_top(colours, geo, profile, cell, top_h, centre, shift)
    discs = [None] * height
    discs[-1] = top
    side_conf = [0.0] * (height - 1)
    toward = _toward_camera(geo, cell)
    ang0 = np.arctan2(toward[1], toward[0])
    r = profile.disc_diameter_mm / 2
    for k in range(height - 1):
        mid_h = base + (k + 0.5) * profile.disc_thickness_mm
        angs = ang0 + np.radians([-35, -20, -8, 0, 8, 20, 35])
        off = np.stack([np.cos(angs), np.sin(angs)], 1) * r * 0.97 + np.asarray(shift)
        pts = geo.project([cell], mid_h, off) * geo.scale
        colour, conf = _classify_points(colours, pts, shade_tolerant=True)
        if conf >= 0.5 and geo.camera.tilt_deg > 15:
            discs[k], side_conf[k] = colour, round(conf, 3)
    return StackRead(cell=cell, height=height, discs=discs, top=top, confidence=0.0,
                     top_confidence=round(top_conf, 3), height_confidence=0.0, on_tile=on_tile,
                     top_pixel=tuple(float(v) for v in centre), shift_mm=tuple(float(v) for v in shift),
                     side_confidences=tuple(side_conf))

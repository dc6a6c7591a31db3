"""Stage 4: stacks of discs on tiles and on the perimeter: presence, height, top and side colours.

Every candidate cell is measured against stack hypotheses of height 1..MAX_READ: the projected
silhouette of a cylinder (the profile's disc diameter, h times its thickness) standing on the cell,
with the edge support along its outline, the colours inside its top face and the lattice edges it
would hide (stack_evidence). A classifier trained on rendered photos with exact truth
(vision/forest.py) turns that evidence into chances of no stack and of each height; the
confidence is how often such reads were right when the classifiers were cross-validated. The top
disc's colour is read inside the top ellipse, the side discs' colours on the stack's front face
between the expected disc boundaries.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from .colours import BLACK, LAB_WEIGHTS, TABLE, WHITE, ColourModel
from .geometry import WorldGeometry
from .hexgrid import cells_to_plane
from .profile import SetProfile
from .forest import Forest

MAX_READ = 8                     # tallest stack read (RULES.md §14: 6,500 random games never passed 7)
MAX_HEIGHT = MAX_READ + 1        # scored up to here: the top rim's step needs the height above
CIRCLE = np.stack([np.cos(np.linspace(0, 2 * np.pi, 48, endpoint=False)),
                   np.sin(np.linspace(0, 2 * np.pi, 48, endpoint=False))], axis=1)
RIM = CIRCLE[::3]                # the coarser circle of the many-hypothesis scores
SHIFT_GRID_MM = np.array([(1.2 * (q + r / 2), 1.2 * r * 0.866)     # a stack's offsets from its cell
                          for q in range(-3, 4) for r in range(-3, 4) if abs(q + r) <= 3])    # centre tried
SATURATION = 3.0
SIDE_SAMPLES = 6
OCCLUSION_MARGIN_PX = 5.0        # an edge this far inside a silhouette would be hidden by the stack
NORMAL_SEARCH_PX = (-1.2, 0.0, 1.2)   # tolerated misfit of an outline, across it
HUES_APART = 15.0                # a*b* distance of two disc colours that differ in hue, not only in lightness
HUE_SET_LIGHTNESS = 0.3          # weight of lightness in a top's colour then (renders: top colour 97.8 -> 98.7%)
CONFIDENT = 0.8                 # calibrated: stack reads at or above it were right 9 times in 10 on the samples
ACTIVITY_GATE = 0.15             # edge activity (edge_activity) under which a cell is not measured (renders:
                                 # the weakest of 765 stacks had 0.17; a third of the empty cells fall under it)


@dataclass
class StackEvidence:
    cell: tuple
    on_tile: bool
    shifts: list                  # mm: per height 1..MAX_READ, the offset from the cell centre that fits it best
    features: np.ndarray          # float32 vector, see stack_evidence


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


@dataclass
class StackReading:
    stacks: dict = field(default_factory=dict)    # cell -> StackRead
    hidden: np.ndarray | None = field(default=None, repr=False)   # work mask of stack silhouettes

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


def silhouette(geo, profile, cell, height, on_tile, shift=(0.0, 0.0)) -> np.ndarray:
    base = _base_height(profile, on_tile)
    bottom = ring_points(geo, profile, cell, base, shift=shift)
    top = ring_points(geo, profile, cell, base + height * profile.disc_thickness_mm, shift=shift)
    pts = np.concatenate([bottom, top]).astype(np.float32)
    return cv2.convexHull(pts).reshape(-1, 2)


class EdgeMap:
    """Colour gradients of the working image, normalised by their typical strength on the World."""

    def __init__(self, colours: ColourModel):
        lab = cv2.GaussianBlur(colours.lab, (3, 3), 0) * np.array([1.0, 1.2, 1.2], np.float32)
        self.gx = cv2.Sobel(lab, cv2.CV_32F, 1, 0, ksize=3) / 8      # (h, w, 3): L, a, b
        self.gy = cv2.Sobel(lab, cv2.CV_32F, 0, 1, ksize=3) / 8
        sq = self.gx * self.gx + self.gy * self.gy
        mag = np.sqrt(sq[..., 0] + sq[..., 1] + sq[..., 2])
        vals = mag[colours.world_mask > 0]
        self.norm = float(np.percentile(vals, 90)) if len(vals) else 1.0
        self.norm = max(self.norm, 1.0)
        self.h, self.w = mag.shape
        self.light = np.ascontiguousarray(colours.lab[..., 0])
        self.strength = np.minimum(mag / self.norm, SATURATION).astype(np.float32)

    def support(self, pts: np.ndarray, normals: np.ndarray) -> np.ndarray:
        """Normal-direction edge strength at work-image points (bilinear), in units of the World's
        typical edge strength, clipped at SATURATION so one very strong edge cannot dominate."""
        n = len(pts)
        offsets = np.array(NORMAL_SEARCH_PX, np.float32)
        shifted = pts[None, :, :] + offsets[:, None, None] * normals[None, :, :]
        total = len(offsets) * n
        cols = 1024
        pad = (-total) % cols                  # remap maps must stay under 32767 rows and columns
        mx = np.append(shifted[..., 0].ravel(), np.zeros(pad)).astype(np.float32).reshape(-1, cols)
        my = np.append(shifted[..., 1].ravel(), np.zeros(pad)).astype(np.float32).reshape(-1, cols)
        vx = cv2.remap(self.gx, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT).reshape(-1, 3)[:total]
        vy = cv2.remap(self.gy, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT).reshape(-1, 3)[:total]
        nx = np.tile(normals[:, 0].astype(np.float32), len(offsets))[:, None]
        ny = np.tile(normals[:, 1].astype(np.float32), len(offsets))[:, None]
        across = vx * nx + vy * ny
        s = np.sqrt(across[:, 0] ** 2 + across[:, 1] ** 2 + across[:, 2] ** 2)
        s = s.reshape(len(offsets), n).max(axis=0)     # tolerate a pixel or two of misfit
        return np.clip(s / self.norm, 0, SATURATION)


def score_heights(edges: EdgeMap, geo, profile, cell, on_tile, blocked=None, shifts_mm=((0.0, 0.0),)):
    """(sides, front, back) edge support, each (len(shifts_mm), MAX_HEIGHT + 1): per offset of
    the stack from its cell centre (mm) and per height 0..MAX_HEIGHT; and below (len(shifts_mm),).

    sides[h]: along the two vertical silhouette lines of an h-stack (its left and right outline,
    base to top); front[h] and back[h]: along the near half (the top face's front edge) and the
    far half (the silhouette) of its top disc's rim; below: along those lines continued one disc
    under the base (strong when the base is put on top of real discs). Points hidden by `blocked`
    do not count.
    """
    shifts = np.asarray(shifts_mm, float).reshape(-1, 2)
    S, H, n, m = len(shifts), MAX_HEIGHT + 1, len(RIM), SIDE_SAMPLES
    base = _base_height(profile, on_tile)
    heights = base + np.arange(H) * profile.disc_thickness_mm
    r = profile.disc_diameter_mm / 2
    toward = _toward_camera(geo, cell)
    near = RIM @ toward > 0
    a0 = np.arctan2(toward[1], toward[0])
    sides_at = np.array([[np.cos(a0 + d), np.sin(a0 + d)] for d in (np.pi / 2, -np.pi / 2)]) * r
    frac = (np.arange(m) + 0.5) / m
    zs = base + frac[None, :] * (heights - base)[:, None]                       # (H, m)
    zs[0] = base - (1 - frac) * profile.disc_thickness_mm     # height 0's lines: the disc under the base
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


def stack_evidence(edges: EdgeMap, colours: ColourModel, geo: WorldGeometry, profile: SetProfile, cell,
                   on_tile: bool, ground: int, hidden: np.ndarray, lattice_edges: tuple,
                   activity: float) -> StackEvidence:
    """Everything the photo says about a stack of each height 1..MAX_READ on `cell`, as one vector.

    Each height is tried at every offset of SHIFT_GRID_MM from the cell centre and keeps the one
    that fits it best: its outline (edge support of the side outlines, of the near and far halves
    of its top rim and the step to the next height up) plus its base (the front edge where the
    stack meets the ground, and the ground's colour just in front of it). The base matters: a
    lower stack moved away from the camera has the top rim of a taller one, but its base would
    stand on the taller one's lower discs. Then, per height at its offset: those measures, the
    colours and spread inside its top face, and the visible lattice edge its silhouette would hide.
    `ground` is the colour class under the cell (the tile's, or the table's off the World);
    `lattice_edges` the (midpoints, lengths) of the photo's lattice edges; `activity` the cell's
    edge_activity, the last feature.
    """
    grid = SHIFT_GRID_MM
    sides, front, back, below = score_heights(edges, geo, profile, cell, on_tile, hidden, grid)   # (S, H)
    step = front[:, 1:MAX_READ + 1] - front[:, 2:MAX_READ + 2]
    outline = back[:, 1:MAX_READ + 1] + step + 0.5 * sides[:, 1:MAX_READ + 1]
    before, darker = _ground_before(colours, geo, profile, cell, on_tile, ground, grid)
    fit = outline + front[:, :1] + before[:, None] - below[:, None]                         # (S, MAX_READ)
    best = np.argmax(fit, axis=0)                                  # each height's offset
    h_idx = np.arange(MAX_READ)
    shifts = grid[best]
    pick = lambda arr: arr[best, h_idx]
    per_height = [pick(sides[:, 1:MAX_READ + 1]), pick(front[:, 1:MAX_READ + 1]), pick(back[:, 1:MAX_READ + 1]),
                  pick(front[:, 2:MAX_READ + 2]), pick(step), pick(outline), front[best, 0], before[best], darker[best], below[best],
                  np.hypot(*shifts.T), pick(fit)]
    fits = per_height[-1]
    ranked = np.sort(fits)
    anchor = grid[int(np.argmax(front[:, 0] + before))]          # where the base fits best
    column, jumps = _front_column(edges, geo, profile, cell, on_tile, anchor)
    heights = np.arange(1, MAX_READ + 1)
    top_z = _base_height(profile, on_tile) + heights * profile.disc_thickness_mm
    shares, spread = _top_faces(colours, geo, profile, cell, top_z, shifts)
    far_contrast, near_contrast = _rim_contrast(colours, geo, profile, cell, top_z, shifts)
    hidden_edges = _hidden_edge_share(geo, profile, cell, on_tile, shifts, heights, lattice_edges)
    a, b = geo.project([cell, cell], [0.0, profile.disc_thickness_mm])
    parallax = float(np.linalg.norm(a - b)) * geo.scale
    rim = ring_points(geo, profile, cell, 0.0) * geo.scale
    diameter = float(np.ptp(rim[:, 0]))
    pts = silhouette(geo, profile, cell, 2, on_tile) * geo.scale
    x = np.clip(np.round(pts[:, 0]).astype(int), 0, edges.w - 1)
    y = np.clip(np.round(pts[:, 1]).astype(int), 0, edges.h - 1)
    blocked = float(np.mean(hidden[y, x] > 0))
    # trees split on one feature at a time: where the fit peaks, and by how much, is given directly
    peaks = [np.argmax(fits) + 1, ranked[-1], ranked[-1] - ranked[-2], np.argmax(per_height[4]) + 1,
             np.argmax(per_height[2]) + 1]
    features = np.concatenate(per_height + [fits - ranked[-1], peaks, column, jumps, [np.argmax(jumps) + 1],
                                            shares.ravel(), spread, far_contrast, near_contrast, hidden_edges,
                                            np.eye(3)[ground],
                                            [geo.camera.tilt_deg, parallax, diameter, float(on_tile), blocked,
                                             activity]])
    return StackEvidence(cell=cell, on_tile=on_tile, shifts=[tuple(map(float, v)) for v in shifts],
                         features=features.astype(np.float32))


def _front_column(edges: EdgeMap, geo, profile, cell, on_tile, shift):
    """The lightness up the stack's front (the side line nearest the camera), from a disc below
    its base to MAX_READ + 1 discs above, in half discs, relative to its median; and per height h
    the jump between the half disc above h and the one below (a side turns into a top face there).
    """
    toward = _toward_camera(geo, cell)
    front = toward / (np.linalg.norm(toward) + 1e-9) * profile.disc_diameter_mm / 2 * 0.97
    halves = np.arange(-2, 2 * MAX_READ + 3) / 2
    z = _base_height(profile, on_tile) + (halves + 0.25) * profile.disc_thickness_mm
    pts = geo.project([cell], z, np.broadcast_to(front + np.asarray(shift), (len(z), 2))) * geo.scale
    x = np.clip(pts[:, 0], 0, edges.w - 1).astype(np.float32)[None]
    y = np.clip(pts[:, 1], 0, edges.h - 1).astype(np.float32)[None]
    light = cv2.remap(edges.light, x, y, cv2.INTER_LINEAR)[0]
    light = light - np.median(light)
    at = {v: i for i, v in enumerate(halves)}
    jumps = np.array([light[at[hh + 0.5]] - light[at[hh - 0.5]] for hh in range(1, MAX_READ + 1)])
    return light, jumps


def _ground_before(colours: ColourModel, geo, profile, cell, on_tile, ground, shifts):
    """Per offset: the share of points just in front of a stack's base (on the camera's side) that
    show the ground's colour class, and how far their lightness is from the ground's (a disc's
    shaded side, even of the tile's own colour, is darker than the lit tile top)."""
    toward = _toward_camera(geo, cell)
    a0 = np.arctan2(toward[1], toward[0])
    angles = a0 + np.radians(np.linspace(-60, 60, 9))
    ring_pts = np.concatenate([np.stack([np.cos(angles), np.sin(angles)], 1) * k for k in (1.12, 1.25)])
    around = np.stack([np.cos(a0 + np.radians(np.arange(0, 360, 30))), np.sin(a0 + np.radians(np.arange(0, 360, 30)))], 1)
    r = profile.disc_diameter_mm / 2
    offs = np.concatenate([(np.asarray(shifts)[:, None, :] + ring_pts[None] * r).reshape(-1, 2), around * 1.5 * r])
    pts = geo.project([cell], _base_height(profile, on_tile), offs) * geo.scale
    lab = _lab_at(colours, pts)
    classes = colours.classify(lab)[0]
    n = len(shifts) * len(ring_pts)
    outer = lab[n:, 0][classes[n:] == ground]
    ground_light = float(np.median(outer)) if len(outer) else float(np.median(lab[n:, 0]))
    share = (classes[:n] == ground).reshape(len(shifts), len(ring_pts)).mean(axis=1)
    light = np.abs(np.median(lab[:n, 0].reshape(len(shifts), len(ring_pts)), axis=1) - ground_light)
    return share, light


def _rim_contrast(colours: ColourModel, geo, profile, cell, top_z, shifts):
    """Per height (its top at top_z, offset by shifts): the colour difference between a band just
    inside and one just outside the far half of its top rim (a top face against what lies behind
    it), and the same across the near half (the top face against the stack's own side). Regions a
    few pixels wide, unlike edges, survive blur and grain."""
    toward = _toward_camera(geo, cell)
    a0 = np.arctan2(toward[1], toward[0])
    r = profile.disc_diameter_mm / 2
    sides = []
    for centre in (a0 + np.pi, a0):                      # far half, near half
        angles = centre + np.radians(np.linspace(-60, 60, 7))
        unit = np.stack([np.cos(angles), np.sin(angles)], 1)
        sides.append(np.concatenate([unit * 0.72 * r, unit * 1.25 * r]))
    ring_pts = np.concatenate(sides)                      # (28, 2): far in, far out, near in, near out
    offs = (np.asarray(shifts)[:, None, :] + ring_pts[None]).reshape(-1, 2)
    pts = geo.project([cell], np.repeat(top_z, len(ring_pts)), offs) * geo.scale
    lab = _lab_at(colours, pts).reshape(len(top_z), 4, 7, 3) * LAB_WEIGHTS
    med = np.median(lab, axis=2)                          # (H, 4, 3)
    return np.linalg.norm(med[:, 0] - med[:, 1], axis=1), np.linalg.norm(med[:, 2] - med[:, 3], axis=1)


def _top_faces(colours: ColourModel, geo, profile, cell, top_z, shifts):
    """Per height (its top at top_z, its centre offset by shifts): shares of (table, white, black)
    pixels inside the top face, and its L spread."""
    rings = np.concatenate([CIRCLE[::2] * k for k in (0.25, 0.5, 0.75)])
    r = profile.disc_diameter_mm / 2
    n = len(rings)
    offs = (np.asarray(shifts)[:, None, :] + rings[None] * r).reshape(-1, 2)
    pts = geo.project([cell], np.repeat(top_z, n), offs) * geo.scale
    lab = _lab_at(colours, pts)
    classes = colours.classify(lab)[0].astype(int).reshape(len(top_z), n)
    shares = np.stack([(classes == k).mean(axis=1) for k in (TABLE, WHITE, BLACK)], 1)
    spread = lab[:, 0].reshape(len(top_z), n).std(axis=1)
    return shares, spread


def _hidden_edge_share(geo, profile, cell, on_tile, shifts, heights, lattice_edges) -> np.ndarray:
    """Per height (at its offset): visible straight lattice edge inside the silhouette a stack of
    that height would have (a stack hides what stands behind it), as a share of its width.
    `lattice_edges`: (midpoints, lengths) of the lattice's straight edges, working pixels."""
    mids, lengths = lattice_edges
    centre = geo.project([cell], 0.0)[0] * geo.scale
    near = np.linalg.norm(mids - centre, axis=1) < 3.0 * _pitch_px(geo, cell)
    mids, lengths = mids[near], lengths[near]
    base = _base_height(profile, on_tile)
    r = profile.disc_diameter_mm / 2
    z = np.concatenate([np.full(len(heights), base), base + heights * profile.disc_thickness_mm])
    offs = (np.concatenate([shifts, shifts])[:, None, :] + RIM[None] * r).reshape(-1, 2)
    rims = (geo.project([cell], np.repeat(z, len(RIM)), offs) * geo.scale).reshape(2, len(heights), len(RIM), 2)
    lo, hi = rims.reshape(-1, 2).min(axis=0), rims.reshape(-1, 2).max(axis=0)
    inside_box = np.all((mids > lo) & (mids < hi), axis=1)
    mids, lengths = mids[inside_box], lengths[inside_box]
    if not len(mids):
        return np.zeros(len(heights))
    hulls = [cv2.convexHull(np.concatenate([rims[0, i], rims[1, i]]).astype(np.float32)).reshape(-1, 2).astype(float)
             for i in range(len(heights))]
    widths = np.array([max(float(np.ptp(h[:, 0])), 1.0) for h in hulls])
    return (_inside_convex(hulls, mids, OCCLUSION_MARGIN_PX) * lengths[None]).sum(axis=1) / widths


def _inside_convex(polys: list, pts: np.ndarray, margin: float) -> np.ndarray:
    """(len(polys), len(pts)): which points lie inside each convex polygon by more than `margin` px."""
    k = max(len(p) for p in polys)
    padded = np.stack([np.concatenate([p, np.repeat(p[-1:], k - len(p), axis=0)]) for p in polys])  # (P, k, 2)
    d = np.roll(padded, -1, axis=1) - padded
    length = np.linalg.norm(d, axis=2)
    nrm = np.stack([-d[..., 1], d[..., 0]], -1) / np.maximum(length, 1e-9)[..., None]
    nrm *= np.where(_clockwise(padded), -1.0, 1.0)[:, None, None]
    dist = np.einsum("pj,ckj->cpk", pts, nrm) - np.einsum("ckj,ckj->ck", padded, nrm)[:, None, :]
    dist = np.where(length[:, None, :] > 1e-6, dist, np.inf)      # padding adds edges of no length
    return dist.min(axis=2) > margin


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
    mx = np.clip(pts[:, 0], 0, edges.w - 1).astype(np.float32)[None]
    my = np.clip(pts[:, 1], 0, edges.h - 1).astype(np.float32)[None]
    vals = cv2.remap(edges.strength, mx, my, cv2.INTER_LINEAR)[0].reshape(len(cells), n)
    return np.sort(vals, axis=1)[:, -(n // 10):].mean(axis=1)


def walk_stacks(colours: ColourModel, geo: WorldGeometry, profile: SetProfile, cells, tiles: dict,
                edges: EdgeMap, decide, hidden: np.ndarray, gate: float | None = ACTIVITY_GATE):
    """Gather the evidence of every cell, nearest to the camera first, and let `decide(evidence)`
    name its height (0: no stack); a decided stack's silhouette is then drawn into `hidden` (a
    working-resolution mask): it hides the image behind it, so its edges are not counted again as
    evidence for a stack further away. Yields (evidence, height). Cells whose edge activity is
    under `gate` hold no stack and are skipped (None: every cell is measured).
    """
    cells = list(cells)
    activity = dict(zip(cells, edge_activity(edges, geo, profile, cells, tiles))) if cells else {}
    if gate is not None:
        cells = [c for c in cells if activity[c] >= gate]
    segments = geo.segments[geo.families >= 0]
    lattice_edges = ((segments[:, :2] + segments[:, 2:]) / 2, np.hypot(*(segments[:, 2:] - segments[:, :2]).T))
    cam = geo.camera.centre
    dist = {c: float(np.linalg.norm(np.append(np.array(cells_to_plane([c])[0]) * geo.pitch_mm, 0) - cam))
            for c in cells}
    role_class = {"white": WHITE, "black": BLACK}
    for cell in sorted(cells, key=dist.get):
        on_tile = cell in tiles
        ground = role_class[tiles[cell]] if on_tile else TABLE
        ev = stack_evidence(edges, colours, geo, profile, cell, on_tile, ground, hidden, lattice_edges,
                            activity[cell])
        height = decide(ev)
        if height:
            sil = silhouette(geo, profile, cell, height, on_tile, ev.shifts[height - 1]) * geo.scale
            cv2.fillPoly(hidden, [np.round(sil).astype(np.int32)], 255)
        yield ev, height


def read_stacks(colours: ColourModel, geo: WorldGeometry, profile: SetProfile, cells, tiles: dict,
                edges: "EdgeMap | None" = None) -> StackReading:
    """Find the stacks among `cells` (on-tile when the cell is in `tiles`): one classifier weighs
    each cell's evidence (stack_evidence) into the chance of a stack there, another into the
    chances of each height given a stack; the confidences are how often such reads were right
    when the classifiers were cross-validated."""
    edges = edges or EdgeMap(colours)
    presence = Forest.shipped("stacks", 2)
    heights = Forest.shipped("heights", MAX_READ + 1)
    reading = StackReading(hidden=np.zeros(colours.world_mask.shape, np.uint8))
    chances = {}

    def decide(ev):
        present = presence.probabilities(ev.features[None])[0, 1]
        if present < 0.5:
            return 0
        p = heights.probabilities(ev.features[None])[0]
        height = int(np.argmax(p[1:]) + 1)
        chances[ev.cell] = (float(presence.confidence(present)), float(heights.confidence(p[height])))
        return height

    for ev, height in walk_stacks(colours, geo, profile, cells, tiles, edges, decide, reading.hidden):
        if not height:
            continue
        present, height_conf = chances[ev.cell]
        st = _read_colours(colours, geo, profile, ev.cell, height, ev.on_tile, ev.shifts[height - 1])
        st.height_confidence = round(height_conf, 3)
        st.confidence = round(min(height_conf * present, st.top_confidence), 3)   # both must be right
        reading.stacks[ev.cell] = st
    return reading


def _pitch_px(geo, cell) -> float:
    a, b = geo.cell_to_work([cell, (cell[0] + 1, cell[1])])
    return float(np.linalg.norm(b - a))


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
    """(role, confidence) of the disc under `pts_work`: where the points' median colour lies between
    the two disc colours. On a disc's shaded side lightness counts half; on a top face of a set
    whose colours differ in hue (red against silver or black) it counts HUE_SET_LIGHTNESS: glare
    and shade move the lightness of a lit top, not its hue."""
    lab = _lab_at(colours, pts_work)
    a, b = colours.discs["white"].mean, colours.discs["black"].mean
    if shade_tolerant:
        lightness = 0.5
    elif np.linalg.norm(b[1:] - a[1:]) > HUES_APART:
        lightness = HUE_SET_LIGHTNESS
    else:
        lightness = 1.0
    wt = np.array([lightness, 1.0, 1.0])
    axis = (b - a) * wt
    t = ((lab - a) * wt) @ axis / (axis @ axis)          # 0 = white's colour, 1 = black's
    t = float(np.median(t))
    conf = float(np.clip(abs(t - 0.5) * 2.5, 0, 1))
    return ("white" if t < 0.5 else "black"), conf


def _read_colours(colours, geo, profile, cell, height, on_tile, shift) -> StackRead:
    base = _base_height(profile, on_tile)
    top_h = base + height * profile.disc_thickness_mm
    centre = geo.project([cell], top_h, np.array([shift]))[0]
    inner = np.concatenate([ring_points(geo, profile, cell, top_h, k, shift) for k in (0.2, 0.4, 0.6)])
    top, top_conf = _classify_points(colours, np.vstack([inner, centre[None]]) * geo.scale)
    discs = [None] * height
    discs[-1] = top
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
            discs[k] = colour
    return StackRead(cell=cell, height=height, discs=discs, top=top, confidence=0.0,
                     top_confidence=round(top_conf, 3), height_confidence=0.0, on_tile=on_tile,
                     top_pixel=tuple(float(v) for v in centre), shift_mm=tuple(float(v) for v in shift))

"""Stage 4: stacks of discs on tiles and on the perimeter: presence, height, top and side colours.

Every candidate cell is tested against stack hypotheses of height 0..MAX_HEIGHT. A hypothesis is
the projected silhouette of a cylinder (the profile's disc diameter, h times its thickness) standing
on the cell; its score is the image edge strength across that silhouette. The best height wins; its
margin over the runner-up is the confidence. The top disc's colour is read inside the top ellipse,
the side discs' colours on the stack's front face between the expected disc boundaries.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from .colours import ColourModel
from .geometry import WorldGeometry
from .hexgrid import cells_to_plane
from .profile import SetProfile

MAX_HEIGHT = 9                   # scored up to here; readable up to MAX_HEIGHT - 1
CIRCLE = np.stack([np.cos(np.linspace(0, 2 * np.pi, 48, endpoint=False)),
                   np.sin(np.linspace(0, 2 * np.pi, 48, endpoint=False))], axis=1)
SIDE_MIN = 0.3                   # minimal support of a stack's side outlines
TOP_PRESENCE = 0.75              # minimal stack_score
FRONT_MIN = 0.25                 # minimal support of the top rim's near half
SHIFT_STEPS_MM = (3.0, 1.5, 0.75)   # coarse-to-fine search of a stack's offset from its cell centre
SATURATION = 3.0
SIDE_SAMPLES = 10
TOP_UNIFORM = 0.7                # share of a top face's samples that must share one disc colour
OCCLUSION_MARGIN_PX = 5.0        # an edge this far inside a silhouette would be hidden by the stack
OCCLUDED_EDGE_SHARE = 0.8        # visible lattice edge length (share of the stack's width) refuting it
SHORT_SIDE_PX = 6.0
MIN_OUTLINE = 0.4                # weakest of side outline and front rim for a stack at all
HEIGHT_TIE = 0.15                # stack_score differences below this do not tell heights apart
HEIGHT_PRIOR = 0.03               # taller stacks are rarer (RULES.md §14): a small cost per disc
NORMAL_SEARCH_PX = (-1.5, -0.75, 0.0, 0.75, 1.5)      # coarse-to-fine search of a stack's offset from its cell centre
CONFIDENT = 0.6


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
    scores: list = field(default_factory=list, repr=False)


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
    return geo.project([cell] * len(CIRCLE), height_mm, CIRCLE * r + np.asarray(shift))


def silhouette(geo, profile, cell, height, on_tile, shift=(0.0, 0.0)) -> np.ndarray:
    base = _base_height(profile, on_tile)
    bottom = ring_points(geo, profile, cell, base, shift=shift)
    top = ring_points(geo, profile, cell, base + height * profile.disc_thickness_mm, shift=shift)
    pts = np.concatenate([bottom, top]).astype(np.float32)
    return cv2.convexHull(pts).reshape(-1, 2)


class EdgeMap:
    """Colour gradients of the working image, normalised by their typical strength on the World."""

    def __init__(self, colours: ColourModel):
        lab = colours.lab
        self.g = []
        for c, wt in ((0, 1.0), (1, 1.2), (2, 1.2)):
            ch = cv2.GaussianBlur(lab[..., c], (3, 3), 0) * wt
            self.g.append((cv2.Sobel(ch, cv2.CV_32F, 1, 0, ksize=3) / 8,
                           cv2.Sobel(ch, cv2.CV_32F, 0, 1, ksize=3) / 8))
        mag = np.sqrt(sum(gx ** 2 + gy ** 2 for gx, gy in self.g))
        vals = mag[colours.world_mask > 0]
        self.norm = float(np.percentile(vals, 90)) if len(vals) else 1.0
        self.norm = max(self.norm, 1.0)
        self.h, self.w = mag.shape

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
        nx = np.tile(normals[:, 0], len(offsets))
        ny = np.tile(normals[:, 1], len(offsets))
        s = np.zeros(total)
        for gx, gy in self.g:
            vx = cv2.remap(gx, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT).ravel()[:total]
            vy = cv2.remap(gy, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT).ravel()[:total]
            s += (vx * nx + vy * ny) ** 2
        s = np.sqrt(s).reshape(len(offsets), n).max(axis=0)     # tolerate a pixel or two of misfit
        return np.clip(s / self.norm, 0, SATURATION)


def _contour_samples(poly: np.ndarray, n=72):
    """Points and outward normals evenly spaced along a closed convex polygon."""
    p = np.concatenate([poly, poly[:1]])
    seg = np.diff(p, axis=0)
    lens = np.hypot(seg[:, 0], seg[:, 1])
    cum = np.concatenate([[0], np.cumsum(lens)])
    t = np.linspace(0, cum[-1], n, endpoint=False)
    idx = np.clip(np.searchsorted(cum, t, side="right") - 1, 0, len(seg) - 1)
    frac = ((t - cum[idx]) / np.maximum(lens[idx], 1e-9))[:, None]
    pts = p[idx] + seg[idx] * frac
    tang = seg[idx] / np.maximum(lens[idx], 1e-9)[:, None]
    normals = np.stack([tang[:, 1], -tang[:, 0]], 1)
    return pts, normals


def score_heights(edges: EdgeMap, geo, profile, cell, on_tile, blocked=None, max_height=MAX_HEIGHT,
                  shift_mm=(0.0, 0.0)):
    """(sides, front, back) edge support per height 0..max_height.

    sides[h]: along the two vertical silhouette lines of an h-stack (its left and right outline,
    base to top); front[h] and back[h]: along the near half (the top face's front edge) and the
    far half (the silhouette) of its top disc's rim.
    """
    s = geo.scale
    base = _base_height(profile, on_tile)
    heights = base + np.arange(max_height + 1) * profile.disc_thickness_mm
    r = profile.disc_diameter_mm / 2
    n = len(CIRCLE)
    shift = np.asarray(shift_mm, float)
    offs = np.tile(CIRCLE * r + shift, (len(heights), 1))
    rims = geo.project([cell] * len(offs), np.repeat(heights, n), offs).reshape(len(heights), n, 2) * s
    toward = geo.camera.centre[:2] - np.array(cells_to_plane([cell])[0]) * geo.pitch_mm
    near = CIRCLE @ toward > 0
    a0 = np.arctan2(toward[1], toward[0])
    m = SIDE_SAMPLES
    side_off = np.array([[np.cos(a0 + d), np.sin(a0 + d)] for d in (np.pi / 2, -np.pi / 2)]) * r + shift
    frac = (np.arange(m) + 0.5) / m
    H = len(heights)
    # side outlines: m points on each of the two vertical silhouette lines, for every height
    zs = base + frac[None, :] * (heights - base)[:, None]                       # (H, m)
    side_pts = [geo.project([cell] * (H * m), zs.ravel(), np.repeat(off[None], H * m, 0)).reshape(H, m, 2) * s
                for off in side_off]
    side_nrm = []
    for line in side_pts:
        d = line[:, -1] - line[:, 0]
        d[0] = (0.0, 1.0)
        nrm = np.stack([d[:, 1], -d[:, 0]], 1) / (np.linalg.norm(d, axis=1, keepdims=True) + 1e-9)
        side_nrm.append(np.repeat(nrm[:, None, :], m, axis=1))
    ccw = np.where([_clockwise(rim) for rim in rims], -1.0, 1.0)[:, None, None]
    tang = np.roll(rims, -1, axis=1) - np.roll(rims, 1, axis=1)
    rim_nrm = ccw * np.stack([tang[..., 1], -tang[..., 0]], -1)
    rim_nrm /= np.linalg.norm(rim_nrm, axis=-1, keepdims=True) + 1e-9
    pts = np.concatenate([side_pts[0], side_pts[1], rims], axis=1).reshape(-1, 2)
    nrm = np.concatenate([side_nrm[0], side_nrm[1], rim_nrm], axis=1).reshape(-1, 2)
    sup = edges.support(pts, nrm)
    if blocked is not None:
        x = np.clip(np.round(pts[:, 0]).astype(int), 0, edges.w - 1)
        y = np.clip(np.round(pts[:, 1]).astype(int), 0, edges.h - 1)
        sup = np.where(blocked[y, x] == 0, sup, np.nan)
    sup = sup.reshape(H, 2 * m + n)
    sides, front, back = (np.zeros(H) for _ in range(3))
    side_len = np.linalg.norm(side_pts[0][:, -1] - side_pts[0][:, 0], axis=1) * m / max(m - 1, 1)
    for h in range(H):
        side = sup[h, :2 * m]
        side = side[~np.isnan(side)]
        sides[h] = float(np.mean(side)) if h and len(side) >= m else 0.0
        if h and side_len[h] < SHORT_SIDE_PX:   # a wall a few pixels high shows no outline to test
            sides[h] = max(sides[h], SIDE_MIN)
        rim_sup = sup[h, 2 * m:]
        front[h], back[h] = robust_mean(rim_sup[near], 6), robust_mean(rim_sup[~near], 6)
    return sides, front, back


def stack_score(sides, front, back):
    """Evidence for a stack of each height h: the far half of its top rim (the top's silhouette:
    lower rims are hidden under the top face, higher ones float in the air), the step of the
    near-half support between h and h+1 (the top face's front edge exists at the top and nowhere
    above it; seams below also show it, so only the step counts), and its two side outlines."""
    nxt = np.append(front[1:], front[-1])
    score = back + (front - nxt) + 0.5 * sides - HEIGHT_PRIOR * np.arange(len(front))
    score[-1] = -np.inf                 # the last height only serves as the step above its neighbour
    return np.where((front >= FRONT_MIN) & (sides >= SIDE_MIN), score, -np.inf)


def robust_mean(sup: np.ndarray, min_points: int) -> float:
    """Mean of the support values without NaNs (hidden points) and the weakest eighth; 0 if too few."""
    sup = sup[~np.isnan(sup)]
    if len(sup) < min_points:
        return 0.0
    return float(np.mean(np.sort(sup)[len(sup) // 8:]))       # ignore the weakest eighth


def rim_support(edges: EdgeMap, geo, cell, height_mm: float, radius_mm: float) -> float:
    """Edge support along a horizontal circle of `radius_mm` at `height_mm` over a cell: the weaker
    of its far half (a disc top's silhouette) and its near half (the top face's front edge)."""
    pts = geo.project([cell] * len(CIRCLE), height_mm, CIRCLE * radius_mm) * geo.scale
    toward = geo.camera.centre[:2] - np.array(cells_to_plane([cell])[0]) * geo.pitch_mm
    near = CIRCLE @ toward > 0
    ccw = -1.0 if _clockwise(pts) else 1.0
    tang = np.roll(pts, -1, axis=0) - np.roll(pts, 1, axis=0)
    nrm = ccw * np.stack([tang[:, 1], -tang[:, 0]], 1) / (np.linalg.norm(tang, axis=1, keepdims=True) + 1e-9)
    sup = edges.support(pts, nrm)
    return min(robust_mean(sup[near], 8), robust_mean(sup[~near], 8))


def _clockwise(poly) -> bool:
    x, y = poly[:, 0], poly[:, 1]
    return float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y)) < 0


def read_stacks(colours: ColourModel, geo: WorldGeometry, profile: SetProfile, cells, tiles: dict,
                edges: "EdgeMap | None" = None) -> StackReading:
    """Find the stacks among `cells` (on-tile when the cell is in `tiles`).

    Cells are decided nearest-to-camera first; a decided stack's silhouette then hides the image
    behind it, so its edges are not counted again as evidence for a stack further away.
    """
    edges = edges or EdgeMap(colours)
    lattice_edges = geo.segments[geo.families >= 0]
    reading = StackReading(hidden=np.zeros(colours.world_mask.shape, np.uint8))
    cam = geo.camera.centre
    dist = {c: float(np.linalg.norm(np.append(np.array(cells_to_plane([c])[0]) * geo.pitch_mm, 0) - cam))
            for c in cells}
    for cell in sorted(cells, key=dist.get):
        on_tile = cell in tiles
        sides, front, back = score_heights(edges, geo, profile, cell, on_tile, blocked=reading.hidden)
        total = stack_score(sides, front, back)
        best = int(np.argmax(total[1:])) + 1
        if not np.isfinite(total[best]) or total[best] < 0.6 * TOP_PRESENCE:
            continue
        shift = np.zeros(2)
        for step in SHIFT_STEPS_MM:         # stacks are rarely centred: find the offset that fits best
            trials = [shift + step * np.array(d) for d in ((1, 0), (-1, 0), (0, 1), (0, -1))]
            results = [score_heights(edges, geo, profile, cell, on_tile, reading.hidden, shift_mm=t)
                       for t in trials]
            totals = [stack_score(*r) for r in results]
            k = int(np.argmax([t.max() for t in totals]))
            if totals[k].max() > total[best]:
                shift = trials[k]
                sides, front, back = results[k]
                total = totals[k]
                best = int(np.argmax(total[1:])) + 1
        if total[best] < TOP_PRESENCE or sides[best] < SIDE_MIN:
            continue
        best = _unoccluded_height(geo, profile, cell, on_tile, shift, total, lattice_edges)
        if best is None:
            continue                    # every candidate height would hide tile edges we can see
        if top_uniformity(colours, geo, profile, cell, best, on_tile, shift) < TOP_UNIFORM:
            continue                    # a disc's top is one colour: this is tile edges, not a stack
        # heights scoring nearly as well are indistinguishable (near-vertical views, where every
        # rim falls on the same circle): keep the lowest, the likelier, and flag the doubt
        close = [h for h in range(1, len(total)) if np.isfinite(total[h]) and total[h] >= total[best] - HEIGHT_TIE]
        others = np.delete(total[1:], best - 1)
        others = others[np.isfinite(others)]
        margin = total[best] - (others.max() if len(others) else 0.0)
        height_conf = float(np.clip(margin / 1.0, 0, 1))
        if min(close) < best:
            best, height_conf = min(close), min(height_conf, 0.5)
        # one disc's parallax in pixels: below a few pixels heights are barely told apart (on the
        # renders: right 40% of the time under 2 px, 55% under 4 px, 75% above)
        a, b = geo.project([cell, cell], [0.0, profile.disc_thickness_mm], np.array([shift, shift]))
        parallax = float(np.linalg.norm(a - b)) * geo.scale
        height_conf *= float(np.clip((parallax - 1.0) / 6.0, 0.15, 1.0))
        # stacks imagined on tile edges have a weak front rim or side outline
        outline = min(sides[best], front[best])
        if outline < MIN_OUTLINE:
            continue
        presence_conf = float(np.clip((outline - MIN_OUTLINE) / 0.8, 0, 1))
        st = _read_colours(colours, geo, profile, cell, best, on_tile, tuple(shift))
        st.height_confidence = round(height_conf, 3)
        st.confidence = round(min(height_conf, presence_conf, st.top_confidence), 3)
        st.scores = [[round(float(x), 2) for x in arr] for arr in (sides, front, back)]
        reading.stacks[cell] = st
        sil = silhouette(geo, profile, cell, best, on_tile, tuple(shift)) * geo.scale
        cv2.fillPoly(reading.hidden, [np.round(sil).astype(np.int32)], 255)
    return reading


def _unoccluded_height(geo, profile, cell, on_tile, shift, total, lattice_edges):
    """The best-scoring height whose silhouette hides no tile edge the photo shows.

    A stack hides what stands behind it: a straight lattice edge seen inside the silhouette of a
    hypothetical stack (the far side of its own tile, a neighbour's edge) refutes that height."""
    mids = (lattice_edges[:, :2] + lattice_edges[:, 2:]) / 2
    lengths = np.hypot(*(lattice_edges[:, 2:] - lattice_edges[:, :2]).T)
    centre = geo.project([cell], 0.0)[0] * geo.scale
    near = np.linalg.norm(mids - centre, axis=1) < 3.0 * _pitch_px(geo, cell)
    mids, lengths = mids[near], lengths[near]
    for h in np.argsort(-total):
        if h == 0 or not np.isfinite(total[h]) or total[h] < TOP_PRESENCE:
            break
        sil = (silhouette(geo, profile, cell, int(h), on_tile, tuple(shift)) * geo.scale).astype(np.float32)
        rim_width = float(np.ptp(sil[:, 0]))
        seen = sum(l for m, l in zip(mids, lengths)
                   if cv2.pointPolygonTest(sil, (float(m[0]), float(m[1])), True) > OCCLUSION_MARGIN_PX)
        if seen < OCCLUDED_EDGE_SHARE * rim_width:
            return int(h)
    return None


def _pitch_px(geo, cell) -> float:
    a, b = geo.cell_to_work([cell, (cell[0] + 1, cell[1])])
    return float(np.linalg.norm(b - a))


def top_uniformity(colours, geo, profile, cell, height, on_tile, shift) -> float:
    """Share of the top face's samples in its majority colour class (0 when that is the table)."""
    top_h = _base_height(profile, on_tile) + height * profile.disc_thickness_mm
    pts = np.concatenate([ring_points(geo, profile, cell, top_h, k, shift) for k in (0.25, 0.5, 0.75)])
    pts = pts * geo.scale
    h, w = colours.lab.shape[:2]
    x = np.clip(np.round(pts[:, 0]).astype(int), 0, w - 1)
    y = np.clip(np.round(pts[:, 1]).astype(int), 0, h - 1)
    classes = colours.classify(colours.lab[y, x])[0]
    counts = np.bincount(classes, minlength=3)
    return 0.0 if counts.argmax() == 0 else float(counts.max() / len(classes))


def _classify_points(colours: ColourModel, pts_work: np.ndarray, shade_tolerant=False):
    h, w = colours.lab.shape[:2]
    x = np.clip(np.round(pts_work[:, 0]).astype(int), 0, w - 1)
    y = np.clip(np.round(pts_work[:, 1]).astype(int), 0, h - 1)
    lab = colours.lab[y, x]
    a, b = colours.discs["white"].mean, colours.discs["black"].mean
    wt = np.array([0.5 if shade_tolerant else 1.0, 1.0, 1.0])
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
    cam_xy = geo.camera.centre[:2] / geo.pitch_mm
    cxy = np.array(cells_to_plane([cell])[0])
    toward = cam_xy - cxy
    ang0 = np.arctan2(toward[1], toward[0])
    r = profile.disc_diameter_mm / 2
    for k in range(height - 1):
        mid_h = base + (k + 0.5) * profile.disc_thickness_mm
        angs = ang0 + np.radians([-35, -20, -8, 0, 8, 20, 35])
        off = np.stack([np.cos(angs), np.sin(angs)], 1) * r * 0.97 + np.asarray(shift)
        pts = geo.project([cell] * len(angs), mid_h, off) * geo.scale
        colour, conf = _classify_points(colours, pts, shade_tolerant=True)
        if conf >= 0.5 and geo.camera.tilt_deg > 15:
            discs[k] = colour
    return StackRead(cell=cell, height=height, discs=discs, top=top, confidence=0.0,
                     top_confidence=round(top_conf, 3), height_confidence=0.0, on_tile=on_tile,
                     top_pixel=tuple(float(v) for v in centre), shift_mm=tuple(float(v) for v in shift))

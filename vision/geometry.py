"""Stage 2: the World's geometry without markers.

Straight segments of the tile edges fall into three families (the hex edge directions). Their
vanishing points give the table plane's vanishing line (affine rectification) and the known 60°
angles give a metric rectification. In the rectified plane the edges lie on three sets of
parallel lines spaced half a tile pitch apart: their period and phase fix the lattice, the colour
pattern picks which of the three candidate sub-lattices holds the tile centres, and an ICP-style
refit of every segment to its lattice line (cv2.findHomography) gives the final homography.
A camera is posed on the lattice lines (fit_camera) and, once tiles are read on it, refitted to
their outlines (refine_on_tiles).
"""
from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass, field, replace

import cv2
import numpy as np

from .camera import Camera, camera_from_homography, focal_from_homography
from .colours import TABLE, ColourModel
from .errors import LatticeFellShortError, NoWorldFoundError
from .hexgrid import SQRT3, cells_to_plane, distinct_cells, hexagon, plane_to_cells, ring
from .profile import SetProfile

EDGE_NORMALS = np.array([[1.0, 0.0], [0.5, SQRT3 / 2], [-0.5, SQRT3 / 2]])   # 0°, 60°, 120°
CAMERA_ITERS = 3
SMALL_WORLD_CELLS = 14          # cells beside a small World's edges (the opening diamond's: 8-13)
GROW_ROUNDS = 3                 # rings of cells a lattice is extended by beyond the edges it was fitted on
TILE_EDGE_ROUNDS = 10           # ... and then at most by over edges with a tile colour beside them
CAMERA_ATTEMPTS = 3             # lattice fits, best first, that the camera is posed on
GOOD_INLIERS = 0.6               # a lattice explaining this share of the edges is accepted at once
MAX_CELLS = 90                   # 39 tiles, their perimeter and stacks hanging over it
MIN_INLIERS = 0.45               # below this share no lattice is trusted (exit 3 rather than guess)
CAMERA_KEEPS = 0.8               # ... nor a camera explaining under this share of the edges its lattice did
LAST_LOOK = (0.40, 0.7)          # those two when no other look found a World (a World on a checked cloth,
                                 # whose edges crowd around it: BENCHMARKS.md, sessions 42 and 47)
MAX_RESIDUAL = 0.06             # ... nor one whose edges lie this far off its lines (median, pitch units)
MIN_EVIDENCE = 6.0              # ... nor one with under this length of edges on its lines (pitch units:
                                # about ten tile sides; one hexagon leaves the perspective open)
MIN_EVIDENCE_IN_PERSPECTIVE = 3.0   # ... or this when a checked cloth gives the perspective (one hexagon: 3.5)
LAST_LOOK_EVIDENCE = 4.0        # ... or this in the last look, its lattice then a World only if tiles read on it
                                # (vision.pipeline; the opening diamond far off at 38 degrees, three of its tiles
                                # under discs: 4.1-5.6; the rules' two-tile example: 4.6-5.0; spare tile piles:
                                # 4.0-5.5, with one tile read on them)
MAX_TILT = 75.0
ROW_POINTS = 1024               # points per row of the maps sample_image gives cv2.remap
DIRECTION_PEAKS = 5            # strongest segment directions considered as the three edge families
MAX_TRIPLETS = 4               # ... and how many triplets of them are fitted at most
MIN_FAMILY_SEPARATION = 20.0   # degrees between two edge families' image directions
MIN_FORESHORTENING = 0.2       # a table seen at up to ~75 degrees of tilt
FOCAL_PRIOR_WEIGHT = 0.05
FOCAL_PRIOR_SPREAD = 0.25        # ~25% either way: fields of view of 55-80 degrees
DEFAULT_FOCAL = 0.62           # focal length / image diagonal of a typical phone camera (HFOV ~65°)
OUTLINE_SEARCH_PX = (4.0, 3.0, 2.0, 2.0, 1.5, 1.5)   # refine_on_tiles' rounds: how far (working pixels) each point
                                                    # of a tile's outline looks for its edge, either side
OUTLINE_SEARCH_STEP_PX = 0.5    # ... in steps of this
OUTLINE_EDGE = 0.35             # edge strength (in the World's typical) at which an outline point finds its edge
OUTLINE_POINTS = 30             # fewest outline points on edges that refine a camera
_OUTLINE_T = np.linspace(0.15, 0.85, 6)                       # points along each side of a tile's top face
_PARAM_STEPS = np.array([1e-4] * 3 + [0.05] * 3 + [1e-3])      # numeric derivatives: radians, mm, log focal length
SQUARE_GRID_TOL_DEG = 3.0       # a checked cloth's edges off its grid's two directions, in the plane
SQUARE_GRID_MIN_FAMILY = 0.25   # share of a square grid's edge length the weaker of its two directions holds
SQUARE_GRID_MIN_SHARE = 0.3     # share of the table's edge length (away from the World) a square grid holds
FAMILY_COLOURS = [(0, 0, 255), (0, 200, 0), (255, 0, 0)]


@dataclass
class WorldGeometry:
    plane_to_work: np.ndarray     # 3x3: lattice plane (pitch = 1) -> work-image pixels
    camera: Camera                # mm world (tile tops at z = 0) -> full-resolution pixels
    pitch_mm: float
    scale: float                  # work / full
    fit_residual: float           # median distance of inlier segments to their lattice line (pitch units)
    inlier_fraction: float
    confidence: float
    edge_evidence: float          # length of the edges on its lines (pitch units; a hexagon's six sides: 3.5)
    segments: np.ndarray = field(repr=False)   # (N,4) work px
    families: np.ndarray = field(repr=False)   # (N,) -1 or 0..2

    def cell_to_work(self, cells) -> np.ndarray:
        return _apply(self.plane_to_work, cells_to_plane(cells))

    @property
    def camera_on_plane(self) -> np.ndarray:
        """The point of the lattice plane (pitch units) straight under the camera."""
        return self.camera.centre[:2] / self.pitch_mm

    def largest_family_share(self) -> float:
        """The share of the length of the edges on the lattice's lines that its commonest edge
        direction holds (a World's hexagons give each of the three about a third)."""
        on = self.families >= 0
        if not on.any():
            return 1.0
        seg = self.segments[on]
        length = np.hypot(seg[:, 2] - seg[:, 0], seg[:, 3] - seg[:, 1])
        return float(np.bincount(self.families[on], length, minlength=3).max() / length.sum())

    def project(self, cells, height_mm=0.0, offsets_mm=None) -> np.ndarray:
        """Full-resolution pixels of points `height_mm` above the tile tops at the given cells."""
        xy = cells_to_plane(cells) * self.pitch_mm
        if offsets_mm is not None:
            xy = xy + offsets_mm
        z = np.broadcast_to(-np.asarray(height_mm, float), (len(xy),))
        return self.camera.project(np.column_stack([xy, z]))

    def work_to_plane(self, pts) -> np.ndarray:
        return _apply(np.linalg.inv(self.plane_to_work), pts)

    def with_camera(self, camera: Camera) -> "WorldGeometry":
        """The same geometry seen through `camera`: its lattice plane re-derived from it."""
        return replace(self, camera=camera, plane_to_work=_tile_tops_in_work(camera, self.scale, self.pitch_mm))

    def draw(self, image: np.ndarray, cells=None) -> np.ndarray:
        """Debug drawing: segments coloured by family, lattice hexagons of `cells` (default: all near)."""
        out = image.copy()
        f = out.shape[1] / (self.segments_scale_width or out.shape[1])
        for seg, fam in zip(self.segments, self.families):
            colour = FAMILY_COLOURS[fam] if fam >= 0 else (128, 128, 128)
            p = np.round(seg * f).astype(int)
            cv2.line(out, tuple(p[:2]), tuple(p[2:]), colour, 2)
        if cells is None:
            cells = self.cells_in_view(image.shape[1] / f, image.shape[0] / f)
        for cell in cells:
            poly = _apply(self.plane_to_work, hexagon(cell)) * f
            cv2.polylines(out, [np.round(poly).astype(np.int32)], True, (0, 255, 255), 1, cv2.LINE_AA)
        return out

    segments_scale_width: float | None = None

    def cells_in_view(self, work_w, work_h, margin=0) -> list:
        corners = np.array([[0, 0], [work_w, 0], [work_w, work_h], [0, work_h]], float)
        plane = self.work_to_plane(corners)
        lo, hi = plane.min(0) - 1, plane.max(0) + 1
        lo, hi = np.maximum(lo, -40), np.minimum(hi, 40)
        qs = np.arange(int(lo[1] * 2 / SQRT3) - 1, int(hi[1] * 2 / SQRT3) + 2)
        cells = []
        for r in qs:
            for q in range(int(lo[0] - r / 2) - 1, int(hi[0] - r / 2) + 2):
                cells.append((q, int(r)))
        pix = self.cell_to_work(cells)
        ok = (pix[:, 0] > -margin) & (pix[:, 0] < work_w + margin) & (pix[:, 1] > -margin) & (pix[:, 1] < work_h + margin)
        return [c for c, k in zip(cells, ok) if k]


def _apply(H, pts) -> np.ndarray:
    p = np.asarray(pts, float).reshape(-1, 2)
    w = np.column_stack([p, np.ones(len(p))]) @ H.T
    return w[:, :2] / w[:, 2:3]


def sample_image(image: np.ndarray, x, y, interpolation=cv2.INTER_LINEAR, border_value=0.0) -> np.ndarray:
    """The image's values (N, channels...) at the points `x`, `y` (N each, pixels; outside the
    image `border_value`, or the nearest edge pixel's when it is None). However many points there
    are: cv2.remap refuses maps of 32767 rows or columns, so they are laid out in rows of ROW_POINTS."""
    x, y = np.ravel(x), np.ravel(y)
    n = len(x)
    pad = (-n) % ROW_POINTS
    mx = np.append(x, np.zeros(pad)).astype(np.float32).reshape(-1, ROW_POINTS)
    my = np.append(y, np.zeros(pad)).astype(np.float32).reshape(-1, ROW_POINTS)
    border = cv2.BORDER_REPLICATE if border_value is None else cv2.BORDER_CONSTANT
    values = cv2.remap(image, mx, my, interpolation, borderMode=border, borderValue=border_value or 0.0)
    return values.reshape((-1,) + image.shape[2:])[:n]


def straight_edges(work_gray: np.ndarray, box=None) -> np.ndarray:
    """The straight edges (N, 4: x0, y0, x1, y1) LSD finds in the working image, or only within
    its `box` (x0, y0, x1, y1) when given, those of at least 0.8% of its long side; find_world
    fits the lattice to them."""
    x0, y0, x1, y1 = box or (0, 0, work_gray.shape[1], work_gray.shape[0])
    lines = cv2.createLineSegmentDetector(cv2.LSD_REFINE_STD).detect(np.ascontiguousarray(work_gray[y0:y1, x0:x1]))[0]
    if lines is None:
        return np.zeros((0, 4))
    seg = lines.reshape(-1, 4).astype(float) + [x0, y0, x0, y0]
    length = np.hypot(seg[:, 2] - seg[:, 0], seg[:, 3] - seg[:, 1])
    return seg[length >= max(6.0, 0.008 * max(work_gray.shape))]


def _angle_peaks(seg: np.ndarray, n=3, min_sep=18.0):
    """(angles, lengths, peaks, heights): the strongest directions of the length-weighted
    histogram of segment angles (degrees mod 180), strongest first."""
    d = seg[:, 2:] - seg[:, :2]
    ang = np.degrees(np.arctan2(d[:, 1], d[:, 0])) % 180.0
    length = np.hypot(d[:, 0], d[:, 1])
    hist = np.bincount(np.minimum((ang).astype(int), 179), weights=length, minlength=180)
    kernel = np.exp(-0.5 * (np.arange(-6, 7) / 2.0) ** 2)
    smooth = np.convolve(np.concatenate([hist[-6:], hist, hist[:6]]), kernel, mode="same")[6:-6]
    peaks, heights = [], []
    work = smooth.copy()
    for _ in range(n):
        i = int(np.argmax(work))
        if work[i] <= 0.08 * smooth.max():
            break
        peaks.append(i + 0.5)
        heights.append(float(work[i]))
        for j in range(180):
            if min(abs(j - i), 180 - abs(j - i)) < min_sep:
                work[j] = 0
    return ang, length, peaks, heights


def _direction_triplets(peaks, heights, min_sep=MIN_FAMILY_SEPARATION):
    """Triplets of peak indices that can be the three edge directions (pairwise at least
    `min_sep` degrees apart), the strongest first."""
    out = []
    for trip in itertools.combinations(range(len(peaks)), 3):
        sep = min(abs((peaks[a] - peaks[b] + 90) % 180 - 90) for a, b in itertools.combinations(trip, 2))
        if sep >= min_sep:
            out.append((sum(heights[i] for i in trip), trip))
    return [t for _, t in sorted(out, reverse=True)]


def _lines(seg: np.ndarray) -> np.ndarray:
    p1 = np.column_stack([seg[:, :2], np.ones(len(seg))])
    p2 = np.column_stack([seg[:, 2:], np.ones(len(seg))])
    l = np.cross(p1, p2)
    return l / np.linalg.norm(l[:, :2], axis=1, keepdims=True)


def _vanishing_point(seg: np.ndarray, rng, iters=150, tol_deg=1.5):
    """Robust VP (homogeneous unit 3-vector) of segments in normalised coordinates, and inlier mask."""
    lines = _lines(seg)
    mid = (seg[:, :2] + seg[:, 2:]) / 2
    d = seg[:, 2:] - seg[:, :2]
    length = np.hypot(d[:, 0], d[:, 1])
    dirn = d / length[:, None]
    prob = length / length.sum()

    def inliers_of(v):                  # v: (K, 3) candidate VPs -> (K, N) inlier masks
        to_vp = v[:, None, :2] - v[:, None, 2:3] * mid[None]
        nrm = np.linalg.norm(to_vp, axis=2) + 1e-12
        sin = np.abs(to_vp[..., 0] * dirn[:, 1] - to_vp[..., 1] * dirn[:, 0]) / nrm
        return sin < math.sin(math.radians(tol_deg))

    n = len(seg)
    if n < 2:
        return None, np.zeros(n, bool)
    pairs = rng.choice(n, (iters, 2), p=prob)           # all hypotheses at once
    v = np.cross(lines[pairs[:, 0]], lines[pairs[:, 1]])
    nv = np.linalg.norm(v, axis=1)
    ok = (pairs[:, 0] != pairs[:, 1]) & (nv > 1e-12)
    if not ok.any():
        return None, np.zeros(n, bool)
    v = v[ok] / nv[ok, None]
    best = v[int(np.argmax(inliers_of(v) @ length))]
    inl = inliers_of(best[None])[0]
    A = lines[inl] * np.sqrt(length[inl])[:, None]
    v = np.linalg.svd(A)[2][-1]
    inl2 = inliers_of(v[None])[0]
    if length[inl2].sum() >= 0.9 * length[inl].sum():
        return v, inl2
    return best, inl


def find_world(all_segments: np.ndarray, colours: ColourModel, profile: SetProfile, full_size,
               scale: float, last_look: bool = False, squares_aside: bool = False) -> WorldGeometry:
    """Fit the hex lattice of the tile tops to the working image's straight edges `all_segments`
    (straight_edges); raise NoWorldFoundError when there is none.

    Each candidate colour region (and their union) is fitted; the best few fits are grown over
    the edges around them and posed, and the one explaining the most edge length is kept; a small
    World (every fit's edges beside at most SMALL_WORLD_CELLS cells) on a checked cloth grows over
    the edges with a tile colour beside them only. A
    lattice and its camera must explain a share of the edges (MIN_INLIERS, CAMERA_KEEPS); with
    `squares_aside` the edges of a checked cloth's squares do not count (_explained_share), and
    the lattice is fitted in the plane's perspective the squares show (_cloth_perspective). The
    `last_look` (when no other look found a World) trusts lattices and cameras that explain fewer
    edges (LAST_LOOK), and lattices on fewer edges (LAST_LOOK_EVIDENCE). `colours.world_mask`
    becomes the regions that hold its edges."""
    min_inliers, keeps = LAST_LOOK if last_look else (MIN_INLIERS, CAMERA_KEEPS)
    h, w = colours.world_mask.shape
    attempts, failure = [], "too few straight tile edges in the photo"
    regions = list(colours.regions or [colours.world_mask])
    if len(regions) > 1:             # a World whose dark tiles match the table splits into pieces
        regions.insert(1, np.max(regions, axis=0))
    beside_tiles = _beside_tile_colours(all_segments, colours)
    mid = (all_segments[:, :2] + all_segments[:, 2:]) / 2
    for mask in regions:
        inside = _near(mask, mid, 0.02 * max(h, w))
        # the edges with a tile colour beside them first (not the cloth's checks or the wood's
        # grain), then all of them (black tiles on a dark cloth have the table's colour)
        hints = [beside_tiles[inside]] + ([None] if not beside_tiles[inside].all() else [])
        for hint in hints:
            try:
                attempts.append(_fit_region(all_segments[inside], (h, w), mask, colours, hint) + (inside,))
            except NoWorldFoundError as exc:
                failure = str(exc)
        if max((a[4] for a in attempts), default=0) >= GOOD_INLIERS:
            break
    if not attempts:
        raise NoWorldFoundError(f"no EXXIT World found: {failure}")
    # the table's edges, away from each attempt's region, show whether a checked cloth lies there
    tables = [all_segments[~a[7]] if squares_aside else all_segments[:0] for a in attempts]
    # a checked cloth's many squares show the plane's perspective better than a small World's edges
    refits = [_in_cloth_perspective(a, table, colours, beside_tiles[a[7]]) if squares_aside else None
              for a, table in zip(attempts, tables)]
    perspectives = [refit[1] if refit else None for refit in refits]
    attempts = [refit[0] if refit else a for a, refit in zip(attempts, refits)]
    explained = [_explained_share(a[0], a[5], a[1], table) for a, table in zip(attempts, tables)]
    ranked = sorted(range(len(attempts)), key=lambda i: -_fit_score(explained[i], attempts[i][2]))

    @functools.cache
    def on_checks(i):                   # the table away from attempt i shows a checked cloth's squares
        rest = all_segments[~attempts[i][7]]
        return _square_grid_direction(_to_plane(attempts[i][0], rest), _length(rest)) is not None

    def shows_checks():                 # in the plane of an attempt, or in the squares' own perspective
        if squares_aside:               # (what _lattices asks of a first look only)
            return True
        return any(map(on_checks, ranked)) or \
            _cloth_perspective(all_segments[~attempts[ranked[0]][7]], (h, w)) is not None

    if explained[ranked[0]] < min_inliers:
        raise LatticeFellShortError("no EXXIT World found: no hex lattice explains the straight edges "
                                    "(too few tile edges, or too much clutter)", shows_checks())
    small_world = functools.cache(      # worked out only when a fit lies on a checked cloth
        lambda: max(len(_cells_on_edges(a, all_segments)) for a in attempts) <= SMALL_WORLD_CELLS)
    posed, seen = [], []
    for i in ranked[:CAMERA_ATTEMPTS]:
        attempt, share, table = attempts[i], explained[i], tables[i]
        if share < min_inliers:
            break
        grown = _grown(attempt, all_segments, beside_tiles if on_checks(i) and small_world() else None,
                       perspective=perspectives[i])
        # fitted on part of a steep World, the lattice drifts off its far tiles until it reaches them
        grown = _grown(grown, all_segments, beside_tiles, rounds=TILE_EDGE_ROUNDS, perspective=perspectives[i])
        on = np.zeros(len(all_segments), bool)
        on[grown[7]] = grown[1] >= 0
        if any((on & other).sum() > 0.9 * max(on.sum(), other.sum()) for other in seen):
            continue                    # the same lattice on the same edges as one already posed
        seen.append(on)
        found = _posed_world(grown, profile, full_size, scale, w, table, min_inliers,
                             keeps * _explained_share(grown[0], grown[5], grown[1], table),
                             MIN_EVIDENCE_IN_PERSPECTIVE if perspectives[i] is not None else
                             LAST_LOOK_EVIDENCE if last_look else MIN_EVIDENCE)
        if found is not None:           # the lattice explaining the most tile edge length wins
            posed.append((found.edge_evidence * (1.0 - found.fit_residual / 0.2), len(posed), found, attempt[6]))
    if posed:
        _, _, geo, mask = max(posed)
        colours.world_mask = _lattice_region(geo, colours.regions or [mask], mask)
        return geo
    raise LatticeFellShortError("no EXXIT World found: the camera fitted to the tile edges does not "
                                "explain them (too few tile edges, or too much clutter)", shows_checks())


def _cloth_perspective(table: np.ndarray, shape):
    """The homography (working image -> the table plane, up to a similarity) of the square grid
    of a checked cloth the `table`'s segments show: its two directions' vanishing points are the
    images of two directions at right angles, which give the focal length (the principal point at
    the centre) and the plane's orientation. None when they show no such grid, or imply no
    camera a photo can have."""
    h, w = shape
    if len(table) < 20:
        return None
    N = _normalising(shape)
    segn = np.column_stack([_apply(N, table[:, :2]), _apply(N, table[:, 2:])])
    ang, length, peaks, _ = _angle_peaks(table, n=2, min_sep=25.0)
    if len(peaks) < 2:
        return None
    rng = np.random.default_rng(11)
    vps, held = [], []
    for p in peaks:
        members = np.flatnonzero(np.abs((ang - p + 90) % 180 - 90) < 20)
        v, inl = _vanishing_point(segn[members], rng, iters=300, tol_deg=1.0)
        if v is None or abs(v[2]) < 1e-9:
            return None
        vps.append(v / v[2])
        held.append(length[members[inl]].sum())
    if min(held) < SQUARE_GRID_MIN_FAMILY * sum(held) or sum(held) < SQUARE_GRID_MIN_SHARE * length.sum():
        return None
    focal_sq = -float(vps[0][:2] @ vps[1][:2])          # normalised units
    diag = math.hypot(w, h) * N[0, 0]              # the image diagonal, normalised
    if not (0.35 * diag) ** 2 < focal_sq < (3.0 * diag) ** 2:
        return None
    K = np.diag([math.sqrt(focal_sq), math.sqrt(focal_sq), 1.0])
    r1, r2 = (np.linalg.solve(K, v) for v in vps)
    r1, r2 = r1 / np.linalg.norm(r1), r2 / np.linalg.norm(r2)
    normal = np.cross(r1, r2)
    if normal[2] < 0:
        normal, r2 = -normal, -r2
    if math.degrees(math.acos(min(1.0, normal[2]))) > MAX_TILT:
        return None
    return np.linalg.inv(K @ np.column_stack([r1, r2, normal])) @ N


def _in_cloth_perspective(attempt, table: np.ndarray, colours: ColourModel, tile_edges: np.ndarray):
    """(attempt, Hm): the attempt's lattice fitted again in the plane the checked cloth of the
    `table`'s segments rectifies (Hm: _cloth_perspective, made orientation-preserving at the World),
    keeping that perspective: a small World's few edges imply one far off (samples s008: two
    tiles), which the cloth's squares set right. It is fitted on its `tile_edges` (a mask of its
    segments: those with a tile colour beside them) off the directions of the squares. None when
    the table shows no such cloth, or no lattice fits so."""
    seg, mask, inside = attempt[5:]
    Hm = _cloth_perspective(table, mask.shape)
    if Hm is None:
        return None
    Hm = _orient(Hm, mask)
    grid = _square_grid_direction(_to_plane(Hm, table), _length(table))
    if grid is None:
        return None
    plane = _to_plane(Hm, seg)
    tile_edges = tile_edges & np.isfinite(plane).all(axis=1) & ~(_angle_apart(plane, grid) < SQUARE_GRID_TOL_DEG)
    sp = plane[tile_edges]
    if len(sp) < 6:
        return None
    ang = np.degrees(np.arctan2(sp[:, 3] - sp[:, 1], sp[:, 2] - sp[:, 0]))
    turn = math.radians(30.0 - _folded_peak(ang, _length(sp), 60))     # edges at 30°, 90° and 150°
    R = np.array([[math.cos(turn), -math.sin(turn), 0], [math.sin(turn), math.cos(turn), 0], [0, 0, 1]])
    fit = _fit_lattice(R @ Hm, seg[tile_edges], seg[tile_edges], perspective=Hm)
    if fit is None:
        return None
    M = _choose_coset(fit[0], colours, seg[tile_edges][fit[1] >= 0])
    families, residual, share = _lattice_fit_quality(M, seg)
    return (M, families, residual, share, _fit_score(share, residual), seg, mask, inside), Hm


def _icp_in_perspective(M1, seg, Hm: np.ndarray, iters: int, loose: int = 2):
    """_icp fitting a similarity of the plane `Hm` rectifies: a lattice map with Hm's perspective."""
    S = _icp(M1 @ np.linalg.inv(Hm), _to_plane(Hm, seg), "similarity", iters=iters, loose=loose)
    return None if S is None else S @ Hm


def _cells_on_edges(attempt, all_segments: np.ndarray) -> set:
    """The cells beside the edges an attempt's lattice was fitted on and runs along."""
    on_lines, cells = _lattice_cells(attempt[0], all_segments)
    return {tuple(c) for c in cells[attempt[7] & on_lines]}


def _lattice_cells(M: np.ndarray, all_segments: np.ndarray) -> tuple:
    """(on_lines, cells): whether each segment runs along a line of the lattice `M` (image to
    plane), and the cell its middle lies in."""
    fam_all, _, _ = _lattice_fit_quality(M, all_segments)
    mids = (all_segments[:, :2] + all_segments[:, 2:]) / 2
    return fam_all >= 0, plane_to_cells(_apply(M, mids))


def _grown(attempt, all_segments: np.ndarray, growable: np.ndarray | None = None,
           rounds: int = GROW_ROUNDS, perspective: np.ndarray | None = None):
    """The attempt with its lattice extended, a ring of cells at a time, to the straight edges
    beside the cells its edges run along, refitted on them: a lattice found on a few tiles (a
    World whose dark tiles match the table splits into pieces) then spans the whole World.
    Only the edges `growable` marks are added when it is given: around a small World on a checked
    cloth, the checks' lines beside the tiles would otherwise pull the lattice onto themselves.
    With a `perspective` (_cloth_perspective) the refits keep it."""
    M, fam, residual, inlier_frac, score, seg, mask, used = attempt
    used = used.copy()
    for _ in range(rounds):
        on_lines, cells = _lattice_cells(M, all_segments)
        seed = {tuple(c) for c in cells[used & on_lines]}
        near = seed | ring(seed)
        add = on_lines & ~used & _cells_among(cells, near)
        if growable is not None:
            add &= growable
        if not add.any():
            break
        used |= add
        refit = (_icp(M, all_segments[used], "homography", iters=2, loose=0) if perspective is None else
                 _icp_in_perspective(M, all_segments[used], perspective, iters=2, loose=0))
        if refit is None:
            break
        M = refit
    seg = all_segments[used]
    fam, residual, inlier_frac = _lattice_fit_quality(M, seg)
    return M, fam, residual, inlier_frac, score, seg, mask, used


def _cells_among(cells: np.ndarray, among: set) -> np.ndarray:
    """Which of the cells (N, 2 ints) are in the set `among` (of (q, r) tuples)."""
    if not among or not len(cells):
        return np.zeros(len(cells), bool)
    wanted = np.array(sorted(among), np.int64)
    return (np.asarray(cells, np.int64)[:, None, :] == wanted[None]).all(axis=2).any(axis=1)


def _posed_world(attempt, profile: SetProfile, full_size, scale: float, work_w: int, table: np.ndarray,
                 min_inliers: float, min_explained: float, min_evidence: float):
    """The WorldGeometry of one lattice fit: the camera posed on its edges, the lattice re-derived
    from that camera, and the length of edges on its lines (its edge_evidence). Every first
    camera (_first_cameras) is refined, and of those that explain the edges (at least `min_inliers`
    and `min_explained` of them, as _explained_share counts with the `table`'s segments, and
    `min_evidence`) the one that fits them best (_fit_score) is kept: the first to explain them
    can be a worse fit (fresh 91 s009, five tiles in a line at 60 degrees: focal lengths of 2,108
    and 1,252 px against the truth's 1,369, the lattice 0.056 and 0.022 pitch off the edges, and no
    tile read on the first). None when none explains them."""
    img_to_plane, families, _, _, _, seg, world_mask, _ = attempt
    plane_to_work = np.linalg.inv(img_to_plane)
    plane_to_work /= plane_to_work[2, 2]
    pitch = float(profile.pitch_mm)
    S = np.diag([1 / scale, 1 / scale, 1.0])
    H_mm = S @ plane_to_work @ np.diag([1 / pitch, 1 / pitch, 1.0])
    on = seg[families >= 0]
    centre = ((on[:, :2] + on[:, 2:]) / 2).mean(0)          # the middle of the lattice's edges
    centre_mm = _apply(np.linalg.inv(H_mm), [centre / scale])[0]
    best = None
    for first in _first_cameras(H_mm, full_size, centre_mm):
        camera = fit_camera(first, seg / scale, pitch, profile.tile_thickness_mm, full_size, iters=CAMERA_ITERS)
        # the tile-top plane as the camera sees it, so that plane and 3-D points always agree
        plane_to_work = _tile_tops_in_work(camera, scale, pitch)
        img_to_plane = np.linalg.inv(plane_to_work)
        families, residual, inlier_frac = _lattice_fit_quality(img_to_plane, seg)
        on = seg[families >= 0]
        evidence = np.linalg.norm(_apply(img_to_plane, on[:, :2]) - _apply(img_to_plane, on[:, 2:]), axis=1).sum()
        share = _explained_share(img_to_plane, seg, families, table)
        if share >= max(min_inliers, min_explained) and residual <= MAX_RESIDUAL and evidence >= min_evidence:
            score = _fit_score(share, residual)
            if best is None or score > best[0]:
                best = (score, camera, plane_to_work, families, residual, inlier_frac, evidence)
    if best is None:
        return None
    _, camera, plane_to_work, families, residual, inlier_frac, evidence = best
    conf = float(np.clip(1.0 - (residual - 0.02) / 0.08, 0, 1) * np.clip(inlier_frac / 0.5, 0, 1))
    geo = WorldGeometry(plane_to_work=plane_to_work, camera=camera, pitch_mm=pitch, scale=scale,
                        fit_residual=residual, inlier_fraction=inlier_frac, confidence=conf,
                        edge_evidence=float(evidence), segments=seg, families=families)
    geo.segments_scale_width = float(work_w)
    return geo


def _lattice_region(geo: WorldGeometry, regions, fallback) -> np.ndarray:
    """The World mask: the candidate regions holding a good share of the lattice's edges (a lamp's
    bright spot on the table or a pile of spare tiles holds none), else the fitted region."""
    on = geo.segments[geo.families >= 0]
    if not len(on):
        return fallback
    mid = (on[:, :2] + on[:, 2:]) / 2
    length = np.hypot(*(on[:, 2:] - on[:, :2]).T)
    radius = 0.01 * max(fallback.shape)
    chosen = [m for m in regions if length[_near(m, mid, radius)].sum() >= 0.1 * length.sum()]
    return np.max(chosen, axis=0) if chosen else fallback


def _near(mask: np.ndarray, pts: np.ndarray, radius: float) -> np.ndarray:
    """Which points (N,2 px) lie within `radius` pixels of the mask."""
    h, w = mask.shape
    p = np.clip(np.asarray(pts).round().astype(int).reshape(-1, 2), 0, [w - 1, h - 1])
    x, y, bw, bh = cv2.boundingRect(mask)
    if not bw:
        return np.zeros(len(p), bool)
    # distances to the mask only within the radius of its bounding box, the rest being farther
    pad = int(radius * 1.1) + 2                  # (the 3x3 chamfer distance is up to 5% short)
    x0, y0, x1, y1 = max(x - pad, 0), max(y - pad, 0), min(x + bw + pad, w), min(y + bh + pad, h)
    dist = cv2.distanceTransform((mask[y0:y1, x0:x1] == 0).astype(np.uint8), cv2.DIST_L2, 3)
    inside = (p[:, 0] >= x0) & (p[:, 0] < x1) & (p[:, 1] >= y0) & (p[:, 1] < y1)
    near = np.zeros(len(p), bool)
    near[inside] = dist[p[inside, 1] - y0, p[inside, 0] - x0] <= radius
    return near


def _beside_tile_colours(seg: np.ndarray, colours: ColourModel, offset=4.0) -> np.ndarray:
    """Which segments have a tile colour (not the table's) on at least one side along most of
    their length: tile edges do, the checks of a cloth or the grain of a wooden table do not."""
    if not len(seg):
        return np.zeros(0, bool)
    h, w = colours.lab.shape[:2]
    d = seg[:, 2:] - seg[:, :2]
    n = np.column_stack([-d[:, 1], d[:, 0]]) / (np.hypot(d[:, 0], d[:, 1])[:, None] + 1e-9)
    t = np.linspace(0.15, 0.85, 7)
    along = seg[:, None, :2] + t[None, :, None] * d[:, None, :]
    sides = np.stack([along + offset * n[:, None, :], along - offset * n[:, None, :]])   # (2, N, 7, 2)
    pix = np.clip(sides.round().astype(int), 0, [w - 1, h - 1])
    labels, _ = colours.classify(colours.lab[pix[..., 1], pix[..., 0]])
    return ((labels != TABLE).any(axis=0)).mean(axis=1) >= 0.5


def _normalising(shape) -> np.ndarray:
    """The map from a working image's pixels (`shape` h, w) to coordinates centred on it, its
    longer half side 1, in which vanishing points are found."""
    h, w = shape
    norm_s = max(h, w) / 2.0
    return np.array([[1 / norm_s, 0, -w / 2 / norm_s], [0, 1 / norm_s, -h / 2 / norm_s], [0, 0, 1]])


def _fit_region(seg: np.ndarray, shape, mask, colours: ColourModel, hint=None):
    """Vanishing points, rectification and lattice of the segments of one candidate region;
    with `hint` (a mask of the segments) only those segments propose edge directions and the
    lattice's period, and all of them refine and judge it.

    Returns (image->plane map, families, residual, inlier fraction, inlier fraction, segments, mask);
    raises NoWorldFoundError when the region shows no hex pattern."""
    h, w = shape
    hyp = seg if hint is None else seg[hint]
    if len(hyp) < 6:
        raise NoWorldFoundError("too few straight tile edges in the photo")
    N = _normalising(shape)
    segn = np.column_stack([_apply(N, hyp[:, :2]), _apply(N, hyp[:, 2:])])
    ang, length, peaks, heights = _angle_peaks(hyp, n=DIRECTION_PEAKS, min_sep=12.0)
    if len(peaks) < 3:
        raise NoWorldFoundError("tile edges in three directions are not visible")
    rng = np.random.default_rng(7)
    vps = {}

    def vanishing_point(i):                 # of the segments near peak i, computed once
        if i not in vps:
            diff = np.abs((ang - peaks[i] + 90) % 180 - 90)
            members = np.flatnonzero(diff < 14)
            v, inl = _vanishing_point(segn[members], rng)
            vps[i] = (v, length[members[inl]].sum())
        return vps[i]

    best, failure = None, "tile edge directions are inconsistent"
    for trip in _direction_triplets(peaks, heights)[:MAX_TRIPLETS]:
        found = [vanishing_point(i) for i in trip]
        if any(v is None for v, _ in found):
            continue
        try:
            fit = _fit_directions(np.array([v for v, _ in found]), np.array([s for _, s in found]),
                                  N, seg, hyp, mask)
        except NoWorldFoundError as exc:
            failure = str(exc)
            continue
        if best is None or fit[4] > best[4]:
            best = fit
        if best[4] >= GOOD_INLIERS:
            break
    if best is None:
        raise NoWorldFoundError(failure)
    # the edge lines, and so the best fit, do not depend on which coset holds the tile centres
    return (_choose_coset(best[0], colours, seg[best[1] >= 0]),) + best[1:]


def _fit_directions(vps, support, N, seg, hyp, mask):
    """The lattice of three edge directions given by their vanishing points (see _fit_region)."""
    M = _rectify_from_vps(vps, support)
    if M is None:
        raise NoWorldFoundError("the tile edges do not form a hex pattern")
    M = _orient(M @ N, mask)
    fit = _fit_lattice(M, seg, hyp)
    if fit is None:
        raise NoWorldFoundError("no regular hex lattice fits the tile edges")
    M1, fam, resid, inl = fit
    _check_plausible(M1, seg, fam, mask)
    return M1, fam, resid, inl, _fit_score(inl, resid), seg, mask


def _check_plausible(M1, seg, fam, mask):
    """Refuse lattices no EXXIT World can have: straight edges longer than a hexagon's side (the
    lattice is too fine, so every edge finds some line), edges along far more cells than a set has
    tiles, a plane seen edge-on, or edges of one direction only."""
    ys, xs = np.nonzero(mask[::4, ::4])
    c = np.array([xs.mean() * 4, ys.mean() * 4]) if len(xs) else np.array(mask.shape[::-1]) / 2
    eps = 2.0
    p = _apply(M1, np.array([c, c + [eps, 0], c + [0, eps]]))
    sv = np.linalg.svd(np.column_stack([p[1] - p[0], p[2] - p[0]]), compute_uv=False)
    if sv[1] < MIN_FORESHORTENING * sv[0]:
        raise NoWorldFoundError("the fitted lattice is degenerate")   # a plane seen edge-on
    sp = _to_plane(M1, seg)
    length = np.hypot(sp[:, 2] - sp[:, 0], sp[:, 3] - sp[:, 1])
    per_family = np.bincount(fam[fam >= 0], weights=length[fam >= 0], minlength=3)
    if np.sort(per_family)[1] < 0.1 * per_family.sum():
        raise NoWorldFoundError("the fitted lattice explains tile edges of one direction only")
    length = length[fam >= 0]
    if len(length) and np.percentile(length, 90) > 1.35 / SQRT3:
        raise NoWorldFoundError("the straight edges are longer than tile sides of any fitting lattice")
    if not len(length) or np.median(length) < 0.08:
        raise NoWorldFoundError("the fitted lattice is degenerate")
    on = sp[fam >= 0]                 # the cells the lattice's edges run along
    cells = distinct_cells(plane_to_cells(np.concatenate([on[:, :2], on[:, 2:], (on[:, :2] + on[:, 2:]) / 2])))
    if len(cells) > MAX_CELLS:
        raise NoWorldFoundError("the fitted lattice is far finer than EXXIT tiles")
    if len(cells) < 2:
        raise NoWorldFoundError("the fitted lattice is degenerate")


def _first_cameras(H_mm: np.ndarray, full_size, centre_mm):
    """First cameras for the tile-top homography, each to be refined on the edges: decomposed with
    the focal length the homography implies, when it implies a plausible one; decomposed with a
    typical focal length; posed (PnP, typical focal length) on the homography's affine
    approximation at the World's centre. A small World's perspective may imply
    a focal length far off, whose camera no longer explains the edges once refined; near-vertical
    views carry no usable perspective."""
    w, h = full_size
    diag = math.hypot(w, h)
    f = focal_from_homography(H_mm, (w / 2, h / 2))
    if f is not None and 0.35 * diag < f < 3.0 * diag:
        cam = camera_from_homography(H_mm, full_size, f, True)
        if 8.0 < cam.tilt_deg < MAX_TILT:
            yield cam
            typical = camera_from_homography(H_mm, full_size, DEFAULT_FOCAL * diag, False)
            if 8.0 < typical.tilt_deg < MAX_TILT:
                yield typical
    grid = np.array([[x, y] for x in range(-3, 4) for y in range(-3, 4)], float) * 20.0 + centre_mm
    eps = 5.0
    c = _apply(H_mm, [centre_mm, centre_mm + [eps, 0], centre_mm + [0, eps]])
    J = np.column_stack([c[1] - c[0], c[2] - c[0]]) / eps
    pix = c[0] + (grid - centre_mm) @ J.T
    f = DEFAULT_FOCAL * diag
    K = np.array([[f, 0, w / 2], [0, f, h / 2], [0, 0, 1.0]])
    n, rvecs, tvecs, _ = cv2.solvePnPGeneric(np.column_stack([grid, np.zeros(len(grid))]), pix, K, None,
                                             flags=cv2.SOLVEPNP_IPPE)
    for rvec, tvec in zip(rvecs, tvecs):
        R, _ = cv2.Rodrigues(rvec)
        if (-R.T @ tvec.ravel())[2] < 0:         # the camera above the table
            yield Camera(K=K, R=R, t=tvec.ravel(), focal_estimated=False)
            return
    yield camera_from_homography(H_mm, full_size, f, False)


def _snap(camera: Camera, pts: np.ndarray, pitch: float, thickness: float, tol: float):
    """(indices, z, ends): the segments (N,4 full px) that lie within `tol` (pitch units) of a
    lattice edge line, on the tile tops (z = 0) or, for the side faces' lower edges, on the
    table (z = +thickness), whichever they lie nearer (the tile tops when equal); their plane's
    z and their end points moved onto that line (K, 2, 2 pitch units)."""
    best_d = np.full(len(pts), np.inf)
    best_z = np.zeros(len(pts))
    best_ends = np.zeros((len(pts), 2, 2))
    for z in (0.0, thickness):
        ends = np.stack([camera.pixel_to_plane(pts[:, :2], z), camera.pixel_to_plane(pts[:, 2:], z)], 1) / pitch
        fam, _ = _assign(ends.reshape(-1, 4), tol_deg=8.0)
        nrm = EDGE_NORMALS[np.maximum(fam, 0)]                                   # (N, 2)
        rho = np.einsum("nj,nj->n", ends.mean(axis=1), nrm)
        line = np.round(rho * 2) / 2
        d = np.where(fam >= 0, np.abs(rho - line), np.inf)
        better = (d < tol) & (d < best_d)
        on_line = ends - (np.einsum("nej,nj->ne", ends, nrm) - line[:, None])[..., None] * nrm[:, None, :]
        best_d[better], best_z[better], best_ends[better] = d[better], z, on_line[better]
    idx = np.flatnonzero(np.isfinite(best_d))
    return idx, best_z[idx], best_ends[idx]


def fit_camera(camera: Camera, seg_full: np.ndarray, pitch: float, thickness: float, full_size,
               iters: int = 4) -> Camera:
    """Refine the camera on the lattice lines: every segment is snapped to its nearest edge line
    (on the tile tops, or on the table for the side faces' lower edges), then pose and focal
    length are refitted (cv2.solvePnP over a focal-length search); repeated a few times."""
    w, h = full_size
    diag = math.hypot(w, h)
    for it in range(iters):
        idx, z, ends = _snap(camera, seg_full, pitch, thickness, tol=0.12 if it == 0 else 0.07)
        if len(idx) < 8:
            return camera
        obj = np.concatenate([ends.reshape(-1, 2) * pitch, np.repeat(z, 2)[:, None]], axis=1)
        img = seg_full[idx].reshape(-1, 2)
        camera = _pnp_with_focal(camera, obj, img, full_size, diag, search=it == 1)
    return camera


def _pnp_with_focal(camera: Camera, obj, img, full_size, diag, search: bool) -> Camera:
    w, h = full_size
    obj = obj.astype(np.float64)
    img = img.astype(np.float64)

    def solve(f, refine=True):
        K = np.array([[f, 0, w / 2], [0, f, h / 2], [0, 0, 1.0]])
        try:
            ok, rvec, tvec = cv2.solvePnP(obj, img, K, None, flags=cv2.SOLVEPNP_SQPNP)
            if ok and refine:
                ok, rvec, tvec = cv2.solvePnP(obj, img, K, None, rvec, tvec, useExtrinsicGuess=True,
                                              flags=cv2.SOLVEPNP_ITERATIVE)
        except cv2.error:               # degenerate correspondences (e.g. all on one line)
            ok = False
        if not ok:
            return None, np.inf
        R, _ = cv2.Rodrigues(rvec)
        centre = -R.T @ tvec.ravel()
        if centre[2] >= 0 or R[2, 2] < math.cos(math.radians(MAX_TILT)):
            return None, np.inf                 # below the table, or a view more oblique than any photo
        proj = cv2.projectPoints(obj, rvec, tvec, K, None)[0].reshape(-1, 2)
        err = np.linalg.norm(proj - img, axis=1)
        cut = np.percentile(err, 80)
        return (K, rvec, tvec), float(np.mean(np.minimum(err, cut)))

    f0 = float(camera.K[0, 0])
    if search:
        # the edges of a small World constrain the focal length weakly: weigh the fit against a
        # prior of phone-like fields of view (FOCAL_PRIOR_SPREAD in log focal length)
        prior = DEFAULT_FOCAL * diag
        grid = prior * np.geomspace(0.6, 1.7, 21)
        # the focal lengths are ranked by their closed-form poses' errors; only the chosen one's pose
        # is refined, at ten times the cost (BENCHMARKS.md, session 69: the readings barely move)
        results = {i: solve(grid[i], refine=False) for i in range(0, len(grid), 2)}   # every other focal length,

        def best():
            idx = np.array(sorted(results))
            errs = np.array([results[i][1] for i in idx])
            if not np.isfinite(errs).any():
                return None
            cost = errs / errs.min() + FOCAL_PRIOR_WEIGHT * (np.log(grid[idx] / prior) / FOCAL_PRIOR_SPREAD) ** 2
            return int(idx[np.argmin(cost)])

        i = best()
        if i is None:
            return camera
        for j in (i - 1, i + 1):                                          # then the two beside the best
            if 0 <= j < len(grid) and j not in results:
                results[j] = solve(grid[j], refine=False)
        i = best()
        # an error curve without a clear minimum (near-vertical views) leaves f unobservable
        estimated = bool(results[i][1] < 0.93 * min(results[0][1], results[len(grid) - 1][1]))
        f = grid[i]
        sol, _ = solve(f)
    else:
        f, estimated = f0, camera.focal_estimated
        sol, _ = solve(f)
    if sol is None:
        return camera
    K, rvec, tvec = sol
    R, _ = cv2.Rodrigues(rvec)
    return Camera(K=K, R=R, t=tvec.ravel(), focal_estimated=bool(estimated))


def refine_on_tiles(geo: WorldGeometry, edges, tiles, profile: SetProfile) -> WorldGeometry:
    """`geo` with its camera refitted to the outlines of the tiles read on it (`tiles`, cells), if
    those outlines' edges are then at least as strong (`edges`, a vision.stacks.EdgeMap).

    fit_camera pins every edge across the lattice line it lies on, but not along it: a pose with a
    focal length 5-15% off can put every edge on a line and still the World's far tiles a fifth of a
    cell off theirs (fresh 141 s038: red tiles under silver discs read silver from the table beside
    them). Each side of a tile's top face (the profile's tile width) is a line of known length and
    place: in each round, points along every side look along its normal in the image for the
    strongest edge within OUTLINE_SEARCH_PX, and pose and focal length take a Gauss-Newton step on
    the distances of those that find one (OUTLINE_EDGE) across their sides, weighed down where far
    off (a stack's rim, a shadow). The focal length stays where fit_camera could not estimate it
    (near-vertical views)."""
    camera, pitch = geo.camera, geo.pitch_mm
    corners = np.stack([hexagon(c, profile.tile_width_mm / pitch) for c in sorted(tiles)]) * pitch   # (N, 6, 2)
    sides = np.roll(corners, -1, axis=1) - corners
    normals = np.stack([sides[..., 1], -sides[..., 0]], -1) / np.linalg.norm(sides, axis=-1, keepdims=True)
    points = (corners[:, :, None] + sides[:, :, None] * _OUTLINE_T[None, None, :, None]).reshape(-1, 2)
    beside = points + np.repeat(normals, len(_OUTLINE_T), axis=1).reshape(-1, 2) * 0.5
    X, X_beside = (np.column_stack([xy, np.zeros(len(xy))]) for xy in (points, beside))
    rvec, _ = cv2.Rodrigues(camera.R)
    start = np.concatenate([rvec.ravel(), camera.t, [0.0]])        # rotation, translation, log focal change
    params = start.copy()
    free = np.arange(7 if camera.focal_estimated else 6)

    def camera_of(params) -> Camera:
        R, _ = cv2.Rodrigues(params[:3])
        return Camera(K=camera.K @ np.diag([math.exp(params[6]), math.exp(params[6]), 1.0]), R=R,
                      t=params[3:6].copy(), focal_estimated=camera.focal_estimated)

    def on_outline(params):
        """The outline's points in the working image and their unit normals there."""
        cam = camera_of(params)
        p = cam.project(X) * geo.scale
        n = cam.project(X_beside) * geo.scale - p
        return p.astype(np.float32), (n / (np.linalg.norm(n, axis=1, keepdims=True) + 1e-9)).astype(np.float32)

    for search in OUTLINE_SEARCH_PX:
        p, n = on_outline(params)
        offsets = np.arange(-search, search + OUTLINE_SEARCH_STEP_PX / 2, OUTLINE_SEARCH_STEP_PX)
        strength = edges.across(p, n, offsets)
        best = strength.argmax(axis=0)
        found = (strength[best, np.arange(len(p))] >= OUTLINE_EDGE) & (best > 0) & (best < len(offsets) - 1) & \
            (p[:, 0] >= 0) & (p[:, 0] < edges.w) & (p[:, 1] >= 0) & (p[:, 1] < edges.h)
        if found.sum() < OUTLINE_POINTS:
            return geo
        at = np.clip(best, 1, len(offsets) - 2)
        below, peak, above = (strength[at + k, np.arange(len(p))] for k in (-1, 0, 1))
        vertex = 0.5 * (below - above) / np.minimum(below - 2 * peak + above, -1e-6)     # of a parabola through them
        subpixel = np.clip(vertex, -0.5, 0.5) * OUTLINE_SEARCH_STEP_PX
        target = p[found] + (offsets[best[found]] + subpixel[found])[:, None] * n[found]

        def across(params):
            return np.einsum("ij,ij->i", camera_of(params).project(X[found]) * geo.scale - target, n[found])

        r = across(params)
        spread = max(1.4826 * float(np.median(np.abs(r))), 1.0)
        weight = np.clip(1 - (r / (3 * spread)) ** 2, 0, 1) ** 2
        J = np.empty((len(r), len(free)))
        for k, j in enumerate(free):
            step = np.zeros(7)
            step[j] = _PARAM_STEPS[j]
            J[:, k] = (across(params + step) - r) / _PARAM_STEPS[j]
        A = J.T @ (J * weight[:, None])
        A += np.eye(len(free)) * 1e-6 * np.trace(A) / len(free)
        params[free] -= np.linalg.solve(A, J.T @ (weight * r))
    refined = camera_of(params)
    if refined.centre[2] >= 0 or edges.support(*on_outline(params)).mean() < edges.support(*on_outline(start)).mean():
        return geo
    return geo.with_camera(refined)


def _tile_tops_in_work(camera: Camera, scale: float, pitch: float) -> np.ndarray:
    """3x3: the lattice plane on the tile tops (pitch = 1) -> work-image pixels, as `camera` sees it."""
    plane_to_work = np.diag([scale, scale, 1.0]) @ camera.plane_homography(0.0) @ np.diag([pitch, pitch, 1.0])
    return plane_to_work / plane_to_work[2, 2]


def _lattice_fit_quality(img_to_plane, seg):
    """(families, median residual in pitch units, fraction of segment length on lattice lines)."""
    sp = _to_plane(img_to_plane, seg)
    fam, length = _assign(sp, tol_deg=6.0)
    resid = np.full(len(seg), np.inf)
    for k in range(3):
        sel = fam == k
        if sel.any():
            rho = ((sp[sel, :2] + sp[sel, 2:]) / 2) @ EDGE_NORMALS[k]
            resid[sel] = np.abs(rho - np.round(rho * 2) / 2)
    on = resid < 0.1
    fam = np.where(on, fam, -1)
    seg_len = _length(seg)
    med = float(np.median(resid[on])) if on.any() else 1.0
    return fam, med, float(seg_len[on].sum() / max(seg_len.sum(), 1e-9))


def _fit_score(share: float, residual: float) -> float:
    """How well a lattice fits: the share of the edges it explains, less for a larger residual."""
    return share * (1.0 - min(residual, 0.1) / 0.2)


def _explained_share(img_to_plane, seg, families, table: np.ndarray) -> float:
    """The share of the segments' length on the lattice's lines (`families` >= 0), not counting the
    segments off them that run along the square grid the `table`'s segments (those away from the
    World) show in the same plane: on a checked cloth the squares' edges can outnumber the tiles'
    many times over. The grid must be seen on the table, where no tile is: through a wrong plane
    map the tiles' own edges can look square."""
    seg_len = _length(seg)
    counted = np.ones(len(seg), bool)
    grid = _square_grid_direction(_to_plane(img_to_plane, table), _length(table))
    if grid is not None:
        counted = (families >= 0) | ~(_angle_apart(_to_plane(img_to_plane, seg), grid) < SQUARE_GRID_TOL_DEG)
    return float(seg_len[families >= 0].sum() / max(seg_len[counted].sum(), 1e-9))


def _square_grid_direction(seg_plane: np.ndarray, length: np.ndarray):
    """The direction (degrees, modulo 90) of the square grid the segments (in the plane) run along
    (a checked cloth): two directions at right angles to each other, both well represented,
    together holding SQUARE_GRID_MIN_SHARE of the segments' length; None when they show none (a
    wooden table's grain runs one way). Segments beyond the plane's horizon do not count."""
    seen = np.isfinite(seg_plane).all(axis=1)
    seg_plane, length = seg_plane[seen], length[seen]
    if len(seg_plane) < 8:
        return None
    d = seg_plane[:, 2:] - seg_plane[:, :2]
    ang = np.degrees(np.arctan2(d[:, 1], d[:, 0])) % 180.0
    peak = _folded_peak(ang, length, 90)
    member = _angle_apart(seg_plane, peak) < SQUARE_GRID_TOL_DEG
    across = np.abs((ang - peak + 90.0) % 180.0 - 90.0) > 45.0      # the direction at right angles
    weaker = min(length[member & across].sum(), length[member & ~across].sum())
    on_grid = length[member].sum()
    if weaker < SQUARE_GRID_MIN_FAMILY * on_grid or on_grid < SQUARE_GRID_MIN_SHARE * length.sum():
        return None
    return float(peak)


def _folded_peak(angles_deg: np.ndarray, length: np.ndarray, period: int) -> float:
    """The commonest of the directions (degrees) modulo `period`, weighted by `length`: the peak
    of their histogram in 1-degree bins, smoothed round the period."""
    folded = np.bincount(np.minimum((angles_deg % period).astype(int), period - 1), weights=length, minlength=period)
    kernel = np.exp(-0.5 * np.arange(-3, 4) ** 2)
    smooth = np.convolve(np.concatenate([folded[-3:], folded, folded[:3]]), kernel, mode="same")[3:-3]
    return float(np.argmax(smooth) + 0.5)


def _to_plane(img_to_plane, seg: np.ndarray) -> np.ndarray:
    return np.column_stack([_apply(img_to_plane, seg[:, :2]), _apply(img_to_plane, seg[:, 2:])])


def _length(seg: np.ndarray) -> np.ndarray:
    return np.hypot(seg[:, 2] - seg[:, 0], seg[:, 3] - seg[:, 1])


def _angle_apart(seg: np.ndarray, grid_deg: float) -> np.ndarray:
    """Degrees between each segment and the nearer of a square grid's two directions."""
    ang = np.degrees(np.arctan2(seg[:, 3] - seg[:, 1], seg[:, 2] - seg[:, 0]))
    return np.abs((ang - grid_deg + 45.0) % 90.0 - 45.0)


def _rectify_from_vps(vps: np.ndarray, support: np.ndarray):
    """Homography (normalised image -> metric plane, edges at 90°, 150°, 30°) from 3 edge VPs."""
    V = vps / np.linalg.norm(vps, axis=1, keepdims=True)
    Wt = np.sqrt(support / support.max())
    l = np.linalg.svd(V * Wt[:, None])[2][-1]
    if abs(l[2]) < 1e-9:
        return None
    l = l / l[2]
    Hp = np.array([[1, 0, 0], [0, 1, 0], [l[0], l[1], 1.0]])
    d = (Hp @ V.T).T[:, :2]
    d = d / np.linalg.norm(d, axis=1, keepdims=True)
    D = np.column_stack([d[0], d[1]])
    if abs(np.linalg.det(D)) < 1e-3:
        return None
    alpha, beta = np.linalg.solve(D, d[2])
    if abs(alpha) < 1e-3 or abs(beta) < 1e-3:
        return None
    s1, s2 = -1.0 / alpha, 1.0 / beta
    E = np.column_stack([s1 * np.array([1.0, 0.0]), s2 * np.array([0.5, SQRT3 / 2])])
    A = E @ np.linalg.inv(D)
    R90 = np.array([[0.0, -1.0], [1.0, 0.0]])
    A3 = np.eye(3)
    A3[:2, :2] = R90 @ A
    return A3 @ Hp


def _orient(M: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Make the plane map orientation-preserving at the World (no mirror image)."""
    ys, xs = np.nonzero(mask[::4, ::4])
    c = np.array([xs.mean() * 4, ys.mean() * 4]) if len(xs) else np.array(mask.shape[::-1]) / 2
    eps = 2.0
    p = _apply(M, np.array([c, c + [eps, 0], c + [0, eps]]))
    J = np.column_stack([p[1] - p[0], p[2] - p[0]])
    if np.linalg.det(J) < 0:
        M = np.diag([1.0, -1.0, 1.0]) @ M
    return M


def _assign(seg_plane: np.ndarray, tol_deg=8.0):
    d = seg_plane[:, 2:] - seg_plane[:, :2]
    length = np.hypot(d[:, 0], d[:, 1])
    dirn = d / (length[:, None] + 1e-12)
    cos = np.abs(dirn @ EDGE_NORMALS.T)          # |cos| between segment and normal: ~0 if aligned
    fam = np.argmin(cos, axis=1)
    ok = cos[np.arange(len(fam)), fam] < math.sin(math.radians(tol_deg))
    return np.where(ok, fam, -1), length


def _fit_lattice(M, seg, hyp, perspective: np.ndarray | None = None):
    """Pitch and phase of the lattice on the segments `hyp`, and its homography refined on all
    segments `seg` (keeping the `perspective` when given: _icp_in_perspective); None when nothing
    lattice-like fits."""
    sp = _to_plane(M, hyp)
    fam, length = _assign(sp)
    good = fam >= 0
    if good.sum() < 6:
        return None
    # Scale: a hex side (length pitch/sqrt3) is the longest straight piece an edge can give.
    side = np.percentile(length[good], 90)
    mid = (sp[:, :2] + sp[:, 2:]) / 2
    rho = np.einsum("ij,ij->i", mid, EDGE_NORMALS[np.maximum(fam, 0)])
    # prefer the largest pitch whose score is near the best (smaller periods are sub-harmonics)
    pitches = side * SQRT3 * np.geomspace(0.55, 1.8, 90)
    periods = pitches / 2
    z = np.zeros((3, len(pitches)), complex)
    for k in range(3):
        sel = fam == k
        if sel.any():
            phase = (2 * np.pi) * rho[sel][None, :] / periods[:, None]
            z[k] = np.cos(phase) @ length[sel] + 1j * (np.sin(phase) @ length[sel])
    scores = np.abs(z).sum(0) / length[good].sum()
    near_best = np.flatnonzero(scores >= 0.85 * scores.max())
    i = near_best[np.argmax(pitches[near_best])]
    pitch = pitches[i]
    phases = [(np.angle(z[k, i]) / (2 * np.pi) * periods[i], abs(z[k, i])) for k in range(3)]
    origin = _origin_from_phases(phases, pitch / 2)
    # normalise: plane units where pitch = 1 and the origin is a lattice point
    T = np.array([[1 / pitch, 0, -origin[0] / pitch], [0, 1 / pitch, -origin[1] / pitch], [0, 0, 1]])
    if perspective is None:
        return _refine(T @ M, seg)
    M = _icp_in_perspective(T @ M, seg, perspective, iters=5)
    return None if M is None else (M, *_lattice_fit_quality(M, seg))


def _origin_from_phases(phases, period):
    (p0, w0), (p1, w1), (p2, w2) = phases
    r = ((p1 - p0 - p2) + period / 2) % period - period / 2
    A = EDGE_NORMALS * np.sqrt(np.array([w0, w1, w2]) + 1e-9)[:, None]
    b = np.array([p0, p1, p1 - p0 - r]) * np.sqrt(np.array([w0, w1, w2]) + 1e-9)
    return np.linalg.lstsq(A, b, rcond=None)[0]


def _choose_coset(M1, colours: ColourModel, edges: np.ndarray):
    """Of the three sub-lattices consistent with the edge lines, keep the one of the tile centres:
    the one whose cells around the lattice's edge segments `edges` have the smoothest interiors
    (for the other two, those edges cross the cells)."""
    grad = colours.lightness_gradient()
    h, w = grad.shape
    pts = np.concatenate([edges[:, :2], edges[:, 2:], (edges[:, :2] + edges[:, 2:]) / 2])
    if len(edges) < 4:
        ys, xs = np.nonzero(colours.world_mask[::3, ::3])
        pts = np.column_stack([xs * 3, ys * 3]).astype(float)
    shift = np.array([0.5, -0.5 / SQRT3])
    ang = np.linspace(0, 2 * np.pi, 12, endpoint=False)
    best = None
    for k in range(3):
        Mk = np.array([[1, 0, -k * shift[0]], [0, 1, -k * shift[1]], [0, 0, 1]]) @ M1
        cells = distinct_cells(plane_to_cells(_apply(Mk, pts)))
        Hinv = np.linalg.inv(Mk)
        centres = cells_to_plane(cells)
        gradsum = []
        for rad in (0.12, 0.25, 0.36):
            ring = centres[:, None, :] + rad * np.stack([np.cos(ang), np.sin(ang)], 1)[None]
            pix = _apply(Hinv, ring.reshape(-1, 2)).round().astype(int)
            ok = (pix[:, 0] >= 0) & (pix[:, 0] < w) & (pix[:, 1] >= 0) & (pix[:, 1] < h)
            g = np.zeros(len(pix))
            g[ok] = grad[pix[ok, 1], pix[ok, 0]]
            gradsum.append(g.reshape(len(cells), -1))
        gmat = np.concatenate(gradsum, axis=1)
        score = float(np.median(gmat.mean(axis=1)))
        if best is None or score < best[0]:
            best = (score, Mk)
    return best[1]


def _refine(M1, seg):
    """ICP: snap every segment to its nearest lattice edge line and refit. Two routes: a free
    homography from the vanishing-point rectification, and an affine map (small or
    near-vertical Worlds do not constrain perspective, and a free homography then invents it);
    the route whose lattice explains more of the edges wins."""
    fits = []
    for model, iters in (("homography", 5), ("affine", 4)):
        M = _icp(M1, seg, model, iters=iters)
        if M is not None:
            fam, resid, inl = _lattice_fit_quality(M, seg)
            fits.append((_fit_score(inl, resid), M, fam, resid, inl))
    if not fits:
        return None
    return max(fits, key=lambda f: f[0])[1:]


def _icp(M1, seg, model: str, iters: int, loose: int = 2):
    """Snap the segments to their nearest lattice lines and refit the map, a "homography",
    "affine" map or "similarity", `iters` times (the first `loose` with wide tolerances)."""
    for it in range(iters):
        tol = 0.2 if it < loose else 0.12
        sp = _to_plane(M1, seg)
        fam, _ = _assign(sp, tol_deg=10.0 if it < loose else 6.0)
        src, dst = [], []
        for k in range(3):
            sel = np.flatnonzero(fam == k)
            if not len(sel):
                continue
            nrm = EDGE_NORMALS[k]
            rho = ((sp[sel, :2] + sp[sel, 2:]) / 2) @ nrm
            line = np.round(rho * 2) / 2
            close = np.abs(rho - line) < tol
            sel, line = sel[close], line[close]
            for end in (slice(0, 2), slice(2, 4)):
                p = sp[sel, end]
                src.append(seg[sel, end])
                dst.append(p - ((p @ nrm) - line)[:, None] * nrm[None, :])
        if not src or sum(len(x) for x in src) < 8:
            return None
        src, dst = np.concatenate(src), np.concatenate(dst)
        if model == "homography":
            Hn, _ = cv2.findHomography(src, dst, cv2.RANSAC, 0.08)
        else:
            fit = cv2.estimateAffine2D if model == "affine" else cv2.estimateAffinePartial2D
            A, _ = fit(src, dst, method=cv2.RANSAC, ransacReprojThreshold=0.08)
            Hn = None if A is None else np.vstack([A, [0, 0, 1]])
        if Hn is None or _singular(Hn):     # too few distinct points: degenerate
            return None
        M1 = Hn
    return M1


def _singular(H: np.ndarray) -> bool:
    """Whether a 3x3 matrix is singular as np.linalg.matrix_rank judges it (rank under 3); its
    determinant settles most matrices without the singular values: |det| = s1 s2 s3 <= s1^2 s3
    and s1 <= the Frobenius norm, so a determinant over 1e-9 of the norm cubed leaves s3 far
    above matrix_rank's tolerance (s1 x 3 x the float64 epsilon)."""
    (a, b, c), (d, e, f), (g, h, i) = H.tolist()
    det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
    if abs(det) > 1e-9 * float(np.sum(H * H)) ** 1.5:
        return False
    return bool(np.linalg.matrix_rank(H) < 3)

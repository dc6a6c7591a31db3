"""Stage 3: every cell of the World and its perimeter: white tile, black tile or no tile.

A first reading (read_tiles, hand-set rules) comes before the stacks, which need to know where
the tiles are; the final one (classify_tiles, a network trained on renders, vision/tile_net.py)
comes after them, when the cells their silhouettes hide are known."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from itertools import permutations
from typing import NamedTuple

import cv2
import numpy as np

from rules.position import OPENING_TILES, OPENING_TILES_PER_COLOUR, TOTAL_TILES

from .colours import ColourClass, ColourModel, hints_differ_in_chroma, lab_clusters, lab_distance, shaded_distance
from .convnet import ConvNet
from .geometry import WorldGeometry, _apply
from .hexgrid import cells_to_plane, components, distinct_cells, hexagon, neighbours, plane_to_cells, ring
from .tile_net import tile_input

TILE_NETS = ("tile_net", "tile_net_worn")   # trained on the renders as they are; and also worn as real cameras
                                            # wear photos, then on cloths (BENCHMARKS.md, sessions 40 and 43):
                                            # their log-odds averaged
CONFIDENT = 0.8                  # calibrated: tile reads at or above it were right over 99% of the time
DIAMOND_CHANCE = 0.05            # of a tile, that lets a cell complete a colour's 2 tiles (dev renders: the
                                 # tiles missed so were at 0.29-0.39, every other cell beside the World under 0.01)
ADDED_CONFIDENCE = 0.5           # of a tile added to complete them (under CONFIDENT: flagged)
LAYING_RULE = 2.5                # log-odds of the tile networks' read that a tile touching fewer than two
                                 # others overrules (samples: such tiles of the rule texts' diagrams read at
                                 # 3.3 and more, the phantom tiles and missed cells beside them at 0.7-1.6)
UNDER_STACK_WEIGHT = 0.5         # of those log-odds on a cell under a stack, which hides most of its tile (dev
                                 # renders: tiles read under off-World stacks, and a tile missed under a stack)
UNDER_STACK_TILE = 0.7           # of a tile, that a cell under a stack needs to be read as one (1,224 game
                                 # photos: of 4,943 tiles under stacks none read at 0.5-0.7; 6 of the 15 tiles
                                 # read under off-World stacks at 0.52-0.67; BENCHMARKS.md, session 78)
OPENING_FIT = 8.0                # log-odds of the tile networks' reads and colour reads the opening diamond may
                                 # overrule (dev renders: openings mended at 0.3-6.2; the rule texts' three-tile
                                 # diagrams, samples s004 and s007, would cost 10 and more)
MISSED_TILE_CHANCE = 0.02        # of a tile, that lets a perimeter cell be read as the tile a stack beyond it
                                 # touches (twenty sets: such missed tiles at 0.04-0.91; the cells between the
                                 # World and a stack read where none stands, 0.001 and under)
OFF_COLOUR = 1.05                # distance from the nearer tile colour, in units of the two tile colours' distance
                                 # apart, beyond which a tile cell's colour is neither's (eighteen sets: fresh 111
                                 # s010's patch of light 1.15; every other tile of 864 photos 0.92 and under)
COLOUR_LOSS = 4.0                # what reading a tile as the colour it looks least like costs (log-odds)
OUTLINE_RANK = 1
FLOOR_PCT = 50
EDGE_WEAK = 0.06                 # hexagon-outline support (2nd weakest side) a coloured tile needs
EDGE_STRONG = 0.12               # ... that makes a tile even of a table-coloured cell (both are
                                 # raised with the photo's own floor, the median over all cells)
SIDE_RING_RADII = (0.44, 0.465)     # lattice units: where a tile shows its own colour, clear of a stack's rims
                                    # and near shadow (a disc reaches 0.33 and its offset, the tile's sides 0.49)
                                    # and of most of the glare a lamp leaves on a glossy tile
SIDE_RING_SEEN = 8               # of those 72 points, visible ones enough to decide that tile's colour
SIDES_SHOWN_TILT = 20.0          # degrees of the camera's tilt from which a tile shows its sides facing it
SIDELESS_BELOW = 0.9             # a cell read a tile below this chance, of the table's colour (TABLE_LIKE), that
                                 # shows no side where a tile's would show (_sides_unseen) is read as no tile
TABLE_LIKE = 10.0                # Lab distance from the table's colour (1,305 game photos: of the 11 tiles read at
                                 # 0.5-0.9 this near the table's colour with a side facing the camera beside no tile,
                                 # none shows no side; of the 14 such cells with no tile, 7 do. At 20, a white tile
                                 # of fresh 118 s032 re-encoded as the web app stores it, at 13: BENCHMARKS.md,
                                 # session 79)
SIDELESS_CHANCE = 0.25           # of a tile, such a cell keeps (a mend the rules call for may still read it one)


@dataclass
class CellRead:
    cell: tuple
    colour: str | None           # "white", "black" or None (no tile)
    confidence: float
    votes: tuple                 # fractions (table, white, black) of the visible samples
    visible: float               # fraction of the cell's samples not hidden by stacks


@dataclass
class TileReading:
    cells: dict = field(default_factory=dict)    # cell -> CellRead (World, perimeter, holes)
    added: list = field(default_factory=list)    # cells read as tiles only to complete a colour's 2 (classify_tiles)
    laid: list = field(default_factory=list)     # cells read again so that every tile touches two (classify_tiles)
    dropped: list = field(default_factory=list)  # tiles read as none to keep to a set's tiles (keep_tiles_to_the_set)
    reached: list = field(default_factory=list)  # cells read as tiles so that a stack beyond touches one (classify_tiles)
    unlike: list = field(default_factory=list)   # cells read as no tile, of neither tile colour (classify_tiles)
    chances: dict = field(default_factory=dict, repr=False)   # cell -> the tile networks' chance of a tile

    @property
    def tiles(self) -> dict:
        return {c: r.colour for c, r in self.cells.items() if r.colour}

    @property
    def holes(self) -> set:
        tiles = set(self.tiles)
        if not tiles:
            return set()
        qs = [c[0] for c in tiles]
        rs = [c[1] for c in tiles]
        box = {(q, r) for q in range(min(qs) - 1, max(qs) + 2) for r in range(min(rs) - 1, max(rs) + 2)}
        empty = box - tiles
        outside = {c for c in empty if c[0] in (min(qs) - 1, max(qs) + 1) or c[1] in (min(rs) - 1, max(rs) + 1)}
        todo = list(outside)
        while todo:
            q, r = todo.pop()
            for n in ((q + 1, r), (q - 1, r), (q, r + 1), (q, r - 1), (q + 1, r - 1), (q - 1, r + 1)):
                if n in empty and n not in outside:
                    outside.add(n)
                    todo.append(n)
        return empty - outside

    def draw(self, image: np.ndarray, geo: WorldGeometry) -> np.ndarray:
        out = image.copy()
        f = out.shape[1] / geo.segments_scale_width
        for cell, rd in self.cells.items():
            poly = np.round(_apply(geo.plane_to_work, hexagon(cell, 0.92)) * f).astype(np.int32)
            colour = {"white": (255, 255, 255), "black": (0, 0, 0), None: (0, 200, 255)}[rd.colour]
            cv2.polylines(out, [poly], True, colour, 2 if rd.colour else 1, cv2.LINE_AA)
            if rd.confidence < CONFIDENT:
                c = np.round(_apply(geo.plane_to_work, cells_to_plane([cell]))[0] * f).astype(int)
                cv2.drawMarker(out, tuple(c), (255, 0, 255), cv2.MARKER_TILTED_CROSS, 14, 2)
        return out


def _sample_offsets(n_rings=4, radius=0.4) -> np.ndarray:
    pts = [np.zeros((1, 2))]
    for i in range(1, n_rings + 1):
        rad = radius * i / n_rings
        k = 6 * i
        a = np.linspace(0, 2 * np.pi, k, endpoint=False) + i * 0.3
        pts.append(rad * np.stack([np.cos(a), np.sin(a)], 1))
    return np.concatenate(pts)


OFFSETS = _sample_offsets()
_ANNULUS_ANGLES = np.radians(np.arange(0, 360, 15))


def _rings(radii, angles: np.ndarray) -> np.ndarray:
    """(len(radii) * len(angles), 2) points on circles of these radii about a cell's centre."""
    return np.concatenate([r * np.stack([np.cos(angles), np.sin(angles)], 1) for r in radii])


def _annulus_offsets(away: np.ndarray | None) -> np.ndarray:
    """Points between a centred disc's rim and the tile's edge; only the far half if `away` given."""
    a = _ANNULUS_ANGLES
    if away is not None:
        a = a[np.argsort(-np.cos(a - np.arctan2(away[1], away[0])))[:13]]
    return _rings((0.385, 0.43), a)


_EDGE_T = np.linspace(0.15, 0.85, 8)


def outline_support(edges, geo: WorldGeometry, cells, scale=0.97) -> np.ndarray:
    """(N, 6) edge support along each of the six sides of each cell's hexagon on the tile tops."""
    cells = list(cells)
    corners = np.stack([hexagon(c, scale) for c in cells])                  # (N, 6, 2)
    a, b = corners, np.roll(corners, -1, axis=1)
    pts = a[:, :, None, :] + (b - a)[:, :, None, :] * _EDGE_T[None, None, :, None]   # (N, 6, 8, 2)
    pix = _apply(geo.plane_to_work, pts.reshape(-1, 2)).reshape(pts.shape)
    d = pix[:, :, -1, :] - pix[:, :, 0, :]
    nrm = np.stack([d[..., 1], -d[..., 0]], -1) / (np.linalg.norm(d, axis=-1, keepdims=True) + 1e-9)
    nrm = np.repeat(nrm[:, :, None, :], len(_EDGE_T), axis=2)
    sup = edges.support(pix.reshape(-1, 2), nrm.reshape(-1, 2)).reshape(len(cells), 6, len(_EDGE_T))
    return np.sort(sup, axis=2)[:, :, 2:].mean(axis=2)          # robust: drop the two weakest


def candidate_cells(colours: ColourModel, geo: WorldGeometry) -> list:
    """Cells whose centre falls on the World region, plus two rings around them."""
    ys, xs = np.nonzero(colours.world_mask[::2, ::2])
    pts = np.column_stack([xs * 2, ys * 2]).astype(float)
    core = {tuple(map(int, c)) for c in distinct_cells(plane_to_cells(geo.work_to_plane(pts)))}
    first = ring(core)
    return sorted(core | first | ring(core | first))


def _cell_samples(colours: ColourModel, geo: WorldGeometry, cells, offsets: np.ndarray, hidden=None):
    """(classes, usable, lab) of the sample points `offsets` (N, K, 2 lattice units) around each
    cell: pixel class, whether the point is inside the photo and not hidden, and its Lab colour."""
    h, w = colours.lab.shape[:2]
    n, k = offsets.shape[:2]
    pts = (cells_to_plane(cells)[:, None, :] + offsets).reshape(-1, 2)
    pix = np.round(_apply(geo.plane_to_work, pts)).astype(int)
    usable = (pix[:, 0] >= 0) & (pix[:, 0] < w) & (pix[:, 1] >= 0) & (pix[:, 1] < h)
    px, py = np.clip(pix[:, 0], 0, w - 1), np.clip(pix[:, 1], 0, h - 1)
    lab = colours.lab[py, px]
    classes = colours.classify(lab)[0].astype(int).reshape(n, k)
    if hidden is not None:
        usable &= hidden[py, px] == 0
    return classes, usable.reshape(n, k), lab.reshape(n, k, 3)


def _cell_colours(colours: ColourModel, classes, usable, lab):
    """(votes (N, 3: table, white, black), median Lab (N, 3), visible share (N,)) of each cell's
    samples (_cell_samples); a cell with no usable sample votes table, with the table's colour."""
    n = usable.sum(axis=1)
    seen = n > 0
    votes = np.stack([((classes == k) & usable).sum(axis=1) for k in range(3)], axis=1) / np.maximum(n, 1)[:, None]
    votes[~seen] = (1.0, 0.0, 0.0)
    medians = np.empty((len(n), 3), np.float32)
    medians[~seen] = colours.tables[0].mean
    if seen.any():
        medians[seen] = _usable_medians(lab[seen], usable[seen])
    return votes, medians, n / usable.shape[1]


def _usable_medians(lab: np.ndarray, usable: np.ndarray) -> np.ndarray:
    """The median Lab colour (N, 3) of each row's usable samples (`lab` N, K, 3; `usable` N, K, at
    least one per row), as np.nanmedian gives it with the others NaN, several times faster.

    >>> _usable_medians(np.array([[[1, 0, 0], [3, 0, 0], [9, 0, 0]]], np.float32), np.array([[True, True, False]]))
    array([[2., 0., 0.]], dtype=float32)
    """
    n = usable.sum(axis=1)
    ordered = np.sort(np.where(usable[:, :, None], lab, np.inf).transpose(0, 2, 1), axis=2)   # unusable last
    middle = lambda i: np.take_along_axis(ordered, i[:, None, None], axis=2)[..., 0]   # (the index broadcasts over L, a, b)
    low, high = middle((n - 1) // 2), middle(n // 2)
    return np.where((n % 2 == 1)[:, None], low, (low + high) / np.float32(2))


def _edge_levels(outline: np.ndarray, classes: np.ndarray, usable: np.ndarray):
    """(second weakest side per cell, weak level, strong level): a tile shows all six sides, a bare
    cell beside the World those it shares with tiles, so the second weakest side decides; the
    levels rise with the table's own edges (cloth texture, wood grain) over table-coloured cells,
    or, with too few of them, over all cells, counting only the cells whose samples are `usable`
    (a cell beyond the photo's frame shows no edge at all; one under a stack only the stack's)."""
    second_weakest = np.sort(outline, axis=1)[:, OUTLINE_RANK]
    seen = second_weakest[usable.mean(axis=1) >= 0.9]
    table_cells = second_weakest[((classes == 0) & usable).mean(axis=1) >= 0.9]
    floor = float(np.percentile(table_cells if len(table_cells) >= 5 else
                                seen if len(seen) else second_weakest, FLOOR_PCT))
    return second_weakest, max(EDGE_WEAK, 1.5 * floor), max(EDGE_STRONG, 2.5 * floor)


def read_tiles(colours: ColourModel, geo: WorldGeometry, cells, outline: np.ndarray) -> TileReading:
    """A first reading of each cell, before the stacks are known: white tile, black tile or no tile.

    Two kinds of evidence: the colours around the cell (pixel classes against this photo's table
    colours, and the cell's median colour), sampled only in the ring outside where a disc would
    stand and, in oblique views, on the side facing away from the camera (a stack hides the near
    side); and `outline`, the edge support along the six sides of its hexagon (outline_support).
    Edges alone make a tile of a cell whose colour is the table's (black tiles on a dark cloth).
    The tile colours are then the two clusters of the tiles' median colours, the lighter one White
    unless the profile says otherwise; `colours` is updated with them for the later stages.
    """
    cells = list(cells)
    centres = cells_to_plane(cells)
    away = None
    if geo.camera.tilt_deg > 10:
        away = -geo.camera_on_plane
    offsets = np.stack([_annulus_offsets(None if away is None else away + c) for c in centres])
    classes, usable, lab_pts = _cell_samples(colours, geo, cells, offsets)
    second_weakest, edge_weak, edge_strong = _edge_levels(outline, classes, usable)
    votes_all, medians, visible = _cell_colours(colours, classes, usable, lab_pts)
    is_tile, conf, by_colour = [], [], []
    for i, cell in enumerate(cells):
        votes, vis = votes_all[i], visible[i]
        e = float(second_weakest[i])
        colour_says = 1.0 - votes[0]
        coloured = False
        if colour_says >= 0.65 and e >= edge_weak:
            tile, c = True, min(1.0, colour_says) * min(1.0, e / (2 * edge_weak))
            coloured = True
        elif e >= edge_strong:
            tile, c = True, 0.8 * min(1.0, e / (2 * edge_strong))
        else:
            tile = False
            c = min(1.0, votes[0] + 0.3) * min(1.0, (edge_strong - e) / edge_strong + 0.3)
        c *= min(1.0, vis / 0.3)
        is_tile.append(tile)
        by_colour.append(coloured)
        conf.append(c)
    is_tile, by_colour = np.array(is_tile), np.array(by_colour)
    _tile_roles(colours, medians, is_tile)
    provisional = {cells[i] for i in np.flatnonzero(is_tile)}
    for i in np.flatnonzero(is_tile & ~by_colour):
        # a table-coloured cell with six edges inside the World: a tile of a table-like colour, or a
        # hole (its six sides are its neighbours' edges)
        if not all(n in provisional for n in neighbours(cells[i])):
            continue
        d_tile = min(lab_distance(medians[i], c.mean) for c in colours.tiles.values())
        d_table = min(lab_distance(medians[i], c.mean) for c in colours.tables)
        if d_table < 0.7 * d_tile:
            is_tile[i] = False
            conf[i] = min(conf[i], 0.7)
    roles = _tile_roles(colours, medians, is_tile, relearn=False)
    return _reading(cells, is_tile, conf, roles, votes_all, visible)


def _reading(cells, is_tile, conf, roles, votes, visible) -> TileReading:
    reading = TileReading()
    for i, cell in enumerate(cells):
        colour, c = None, conf[i]
        if is_tile[i]:
            colour, margin = roles[i]
            c = min(c, margin)
        reading.cells[cell] = CellRead(cell=cell, colour=colour, confidence=round(float(c), 3),
                                       votes=tuple(round(float(v), 3) for v in votes[i]),
                                       visible=float(visible[i]))
    return reading


class TileEvidence(NamedTuple):
    features: np.ndarray         # (N, F) what the tile networks weigh beside each cell's picture
    medians: np.ndarray          # (N, 3) each cell's median Lab colour
    votes: np.ndarray            # (N, 3) its samples' shares of table, white tile and black tile colour
    visible: np.ndarray          # (N,) its share of samples no stack hides
    table_distance: np.ndarray   # (N,) Lab distance of its median colour from the nearest table colour
    edge_weak: float             # the outline support a tile's side shows at least (_edge_levels)


def tile_evidence(colours: ColourModel, geo: WorldGeometry, cells, outline: np.ndarray, hidden: np.ndarray,
                  first: TileReading, stacked: set) -> TileEvidence:
    """What the photo says about a tile on each cell once the stacks are known (TileEvidence).

    Every visible sample of the hexagon counts (stack silhouettes are `hidden`); the features are
    the sample classes, the median colour's distances to the table and tile colours, the six side
    outlines against this photo's edge levels, how much of the cell is hidden, and whether a stack
    was read on it (`stacked`, a set), and the cell's first reading (`first`, read_tiles: its
    tile-or-not and confidence). The neighbours' readings are left out on purpose: holes
    inside the World are rare in play, and a classifier that leant on them would fill every hole.
    """
    cells = list(cells)
    offsets = np.broadcast_to(np.concatenate([OFFSETS, _annulus_offsets(None)]),
                              (len(cells), len(OFFSETS) + len(_annulus_offsets(None)), 2))
    classes, usable, lab_pts = _cell_samples(colours, geo, cells, offsets, hidden)
    second_weakest, edge_weak, edge_strong = _edge_levels(outline, classes, usable)
    sides = np.sort(outline, axis=1)
    votes_all, medians, visible = _cell_colours(colours, classes, usable, lab_pts)
    rows, table_distance = [], []
    for i, cell in enumerate(cells):
        votes, med, vis = votes_all[i], medians[i], visible[i]
        spread = float(np.std(lab_pts[i][usable[i]][:, 0])) if vis else 0.0
        d_table = min(lab_distance(med, c.mean) for c in colours.tables)
        table_distance.append(d_table)
        d_tiles = [lab_distance(med, colours.tiles[r].mean) for r in ("white", "black")]
        rows.append(np.concatenate([
            votes, [vis, spread, d_table, min(d_tiles), max(d_tiles), d_table / (min(d_tiles) + 1.0)],
            sides[i], sides[i] / edge_weak, [edge_weak, edge_strong, float(second_weakest[i]) / edge_strong],
            [float(cell in stacked), geo.camera.tilt_deg, float(first.cells[cell].colour is not None),
             first.cells[cell].confidence]]))
    return TileEvidence(np.array(rows, np.float32), medians, votes_all, visible, np.array(table_distance),
                        edge_weak)


_SIDE_NORMALS = (hexagon((0, 0)) + np.roll(hexagon((0, 0)), -1, axis=0))   # (6, 2) unit, each side's outward
_SIDE_NEIGHBOURS = [(int(q), int(r)) for q, r in plane_to_cells(_SIDE_NORMALS)]       # the cell across each side


def _sides_unseen(geo: WorldGeometry, cells: list, outline: np.ndarray, edge_weak: float, first: TileReading,
                  stacked: set) -> np.ndarray:
    """Whether each cell shows no side where a tile's would show: seen from SIDES_SHOWN_TILT and
    more, a tile's sides facing the camera (within 60 degrees) show against the table beside it, so
    where every such side beside a cell neither first read as a tile nor stacked (one at least)
    shows less outline (outline_support) than edge_weak, what looks like a tile of the table's
    colour there is the table itself: a hole, or a cell beside the World (fresh 113 s016)."""
    unseen = np.zeros(len(cells), bool)
    if geo.camera.tilt_deg < SIDES_SHOWN_TILT:
        return unseen
    towards = geo.camera_on_plane - cells_to_plane(cells)
    facing = (towards / np.maximum(np.linalg.norm(towards, axis=1, keepdims=True), 1e-9)) @ _SIDE_NORMALS.T > 0.5
    for i, (q, r) in enumerate(cells):
        beside_table = [j for j, (dq, dr) in enumerate(_SIDE_NEIGHBOURS) if facing[i, j]
                        and (q + dq, r + dr) not in stacked
                        and getattr(first.cells.get((q + dq, r + dr)), "colour", None) is None]
        unseen[i] = bool(beside_table) and bool((outline[i, beside_table] < edge_weak).all())
    return unseen


@dataclass(frozen=True)
class TileViews:
    """The cells a final tile read weighs, what the stacks' silhouettes hide of the working image
    (`hidden`), and what each of the TILE_NETS' convolutions makes of each cell's picture
    (vision.tile_net.tile_input): none of it depends on the tile colours, so every final read of
    the same cells with the same stacks shares it (tile_views)."""
    cells: list
    hidden: np.ndarray
    convolved: list


def tile_views(colours: ColourModel, geo: WorldGeometry, cells, hidden: np.ndarray) -> TileViews:
    """The TileViews of `cells` with the stacks' silhouettes `hidden`."""
    cells = list(cells)
    pictures = tile_input(colours, geo, cells, hidden)
    return TileViews(cells, hidden, [ConvNet.shipped(name).convolved(pictures) for name in TILE_NETS])


def tile_chances(views: TileViews, features: np.ndarray) -> np.ndarray:
    """The chance of a tile on each cell of `views`: the TILE_NETS' chances paired (paired_chances;
    such reads are calibrated as "pair" in the last one's table, by tools/train_tile_net.py
    --pair-with)."""
    return paired_chances([ConvNet.shipped(name).dense_probabilities(convolved, features)[:, 1]
                           for name, convolved in zip(TILE_NETS, views.convolved)])


def paired_chances(chances) -> np.ndarray:
    """The chance whose log-odds are the mean of those of `chances` (a list of arrays)."""
    return 1 / (1 + np.exp(-_log_odds(chances).mean(axis=0)))


def _log_odds(chances) -> np.ndarray:
    """log(p / (1 - p)) of chances p, clipped to 1e-6 from certainty."""
    p = np.clip(np.asarray(chances, float), 1e-6, 1 - 1e-6)
    return np.log(p / (1 - p))


def classify_tiles(colours: ColourModel, geo: WorldGeometry, views: TileViews, outline: np.ndarray,
                   first: TileReading, stacked: set, beyond=frozenset()) -> TileReading:
    """The final reading of each cell of `views` once the stacks are known: the tile networks
    (TILE_NETS) weigh the cell's picture (`views`) and its evidence (tile_evidence) into the chance
    of a tile, over one half for a tile (UNDER_STACK_TILE under a stack), SIDELESS_CHANCE for a cell
    near the table's colour read under SIDELESS_BELOW that shows no side where a tile's would face
    the camera (_sides_unseen); a tile's colour, seen near its sides (_side_ring_colours), is the
    nearer of the two tile colour clusters (relearnt from these tiles; _tile_roles). Every game's
    World holds the opening diamond's two tiles of each colour (tiles are never taken away): a
    reading of at most four tiles that lacks them is read again as that diamond where that overrules
    only doubtful reads (_opening_diamond); otherwise, where fewer of a colour are read, the
    likeliest cells beside them that look of that colour and have at least DIAMOND_CHANCE of a tile
    complete them; both flagged uncertain (the reading's `added`). Every tile a game lays touches
    two others (RULES.md §8.1; so do the diamond's): where a tile read touches fewer, the cheapest
    mend that the network does not rule out (_laying_rule) reads it again, flagged uncertain (the
    reading's `laid`), unless the reading would still hold fewer tiles than the diamond (no game's:
    a rule text's diagram). Every off-World stack touches a tile (RULES.md §2): a stack found on a
    cell of `beyond`, off the World, reaches it through the likeliest cell beside it that the
    networks do not rule out (_tiles_reached), read as a tile or kept one, flagged uncertain (the
    reading's `reached`)."""
    cells, hidden = views.cells, views.hidden
    evidence = tile_evidence(colours, geo, cells, outline, hidden, first, stacked)
    medians, votes, visible = evidence.medians, evidence.votes, evidence.visible
    p_tile = tile_chances(views, evidence.features)
    under_stacks = sorted(i for i, c in enumerate(cells) if c in stacked)
    table_like = (p_tile > 0.5) & (p_tile < SIDELESS_BELOW) & (evidence.table_distance < TABLE_LIKE)
    table_like[under_stacks] = False
    doubtful = np.flatnonzero(table_like)
    sideless = doubtful[_sides_unseen(geo, [cells[i] for i in doubtful], outline[doubtful], evidence.edge_weak,
                                      first, stacked)]
    p_tile[sideless] = SIDELESS_CHANCE
    is_tile = p_tile > 0.5
    is_tile[under_stacks] = p_tile[under_stacks] > UNDER_STACK_TILE
    conf = ConvNet.shipped(TILE_NETS[-1]).confidence("pair", np.maximum(p_tile, 1 - p_tile))
    medians = _side_ring_colours(colours, geo, cells, hidden, medians)
    unlike = _off_colour_tiles(colours, medians, is_tile)
    is_tile[unlike], conf[unlike], p_tile[unlike] = False, ADDED_CONFIDENCE, 0.0    # and no mend reads them again
    roles = _tile_roles(colours, medians, is_tile)
    added = _opening_diamond(colours, cells, p_tile, medians, roles, under_stacks)
    if added is None:
        added = _diamond_completion(colours, cells, p_tile, medians, roles)
    for i, role in added.items():
        is_tile[i], conf[i] = role is not None, ADDED_CONFIDENCE
        if role is None:
            roles.pop(i, None)
        else:
            roles[i] = (role, ADDED_CONFIDENCE)
    reaching = _tiles_reached(cells, is_tile, p_tile, beyond)
    reached = [i for i in reaching if not is_tile[i]]
    is_tile[reached], conf[reached] = True, ADDED_CONFIDENCE
    laid = _laying_rule(cells, is_tile, p_tile, {i for i, role in added.items() if role} | set(reaching),
                        under_stacks)
    if is_tile.sum() + sum(-1 if is_tile[i] else 1 for i in laid) < OPENING_TILES:
        laid = []       # fewer tiles than the opening diamond's are no game's, mended or not: a rule text's diagram
    for i in laid:
        is_tile[i], conf[i] = not is_tile[i], ADDED_CONFIDENCE
        roles.pop(i, None)
    new_tiles = np.zeros(len(cells), bool)
    new_tiles[[i for i in laid + reached if is_tile[i]]] = True
    roles.update({i: (role, ADDED_CONFIDENCE) for i, (role, _) in
                  _tile_roles(colours, medians, new_tiles, relearn=False).items()})
    reading = _reading(cells, is_tile, conf, roles, votes, visible)
    reading.added = sorted(cells[i] for i in added)
    reading.laid = sorted(cells[i] for i in laid)
    reading.reached = sorted(cells[i] for i in reached)
    reading.unlike = sorted(cells[i] for i in unlike)
    reading.chances = {c: float(p) for c, p in zip(cells, p_tile)}
    return reading


def keep_tiles_to_the_set(reading: TileReading, world: set) -> set:
    """While the `world` (its tile cells) holds more tiles than a set has (TOTAL_TILES), read as no
    tile the least sure of them (a cloth's light check, a spare tile beside the World) whose
    going leaves every other tile touching two (as every tile laid in a game does) and the World
    in one piece, flagged uncertain (the reading's `dropped`). A World read in pieces is left as
    read, flagged by the sanity check: on a cloth read as the World, dropping lost more right
    cells than it mended (BENCHMARKS.md, session 45). Returns the World's cells left; changes
    `reading`."""
    world = set(world)
    if len(components(world)) > 1:
        return world
    touching = lambda c: sum(n in world for n in neighbours(c))
    can_go = lambda c: (all(touching(n) > 2 for n in neighbours(c) if n in world)
                        and len(components(world - {c})) == 1)
    while len(world) > TOTAL_TILES:
        # the least sure first: the split test walks the whole World, so it runs on few cells
        cell = next((c for c in sorted(world, key=lambda c: reading.cells[c].confidence) if can_go(c)), None)
        if cell is None:
            break
        reading.cells[cell] = replace(reading.cells[cell], colour=None, confidence=ADDED_CONFIDENCE)
        reading.dropped.append(cell)
        world.discard(cell)
    return world


def _laying_rule(cells: list, is_tile: np.ndarray, p_tile: np.ndarray, keep: set, under_stacks=()) -> list:
    """Indices of the cells to read the other way so that every tile touches at least two others,
    as every tile laid in a game does: while a tile touches fewer, dropping it or reading as a tile
    a cell beside it that touches two tiles, whichever costs less by the tile networks' log-odds,
    among those that cost at most LAYING_RULE. The log-odds of the cells in `under_stacks` count
    UNDER_STACK_WEIGHT: a stack hides most of its tile (the tiles the network misses are mostly
    under stacks), and an off-World stack touching one tile is as a game leaves it where a tile
    under it is not. The rule texts' diagrams and the experienced players' set-up break the rule:
    a tile read sure (its full log-odds over LAYING_RULE) stays, stack or not. Cells in `keep` are
    not dropped, and no cell is read again twice."""
    index = {c: i for i, c in enumerate(cells)}
    tiles = {cells[i] for i in np.flatnonzero(is_tile)}
    against, weight = _tile_log_odds(p_tile, under_stacks)
    touching = lambda c: sum(n in tiles for n in neighbours(c))
    changed = []
    while True:
        allowed = []
        for c in (c for c in tiles if touching(c) < 2):
            i = index[c]
            if i not in keep and i not in changed and against[i] <= LAYING_RULE:
                allowed.append((against[i] * weight[i], i))
            beside = [index[n] for n in neighbours(c) if n in index and n not in tiles and touching(n) >= 2]
            allowed += [(-against[j] * weight[j], j) for j in beside
                        if j not in changed and -against[j] * weight[j] <= LAYING_RULE]
        if not allowed:
            return changed
        _, i = min(allowed)
        tiles ^= {cells[i]}
        changed.append(i)


def _tiles_reached(cells: list, is_tile: np.ndarray, p_tile: np.ndarray, beyond) -> list:
    """Indices of the cells through which the stacks on the cells of `beyond` touch a tile, as every
    off-World stack does: for each, the cell beside it whose chance of a tile is likeliest, among
    those of at least MISSED_TILE_CHANCE that touch a tile. A stack with no such cell beside it
    (found where none stands) reaches none.

    >>> p = np.array([0.99, 0.99, 0.3, 0.0])            # a tile missed at (2, 0), a stack at (3, 0)
    >>> _tiles_reached([(0, 0), (1, 0), (2, 0), (3, 0)], p > 0.5, p, {(3, 0)})
    [2]
    """
    index = {c: i for i, c in enumerate(cells)}
    tiles = {cells[i] for i in np.flatnonzero(is_tile)}
    reaching = []
    for stack in sorted(beyond):
        beside = [index[n] for n in neighbours(stack) if n in index and p_tile[index[n]] >= MISSED_TILE_CHANCE
                  and any(m in tiles for m in neighbours(n))]
        if beside:
            i = max(beside, key=lambda i: p_tile[i])
            if i not in reaching:
                reaching.append(i)
                tiles.add(cells[i])
    return reaching


def _tile_log_odds(p_tile: np.ndarray, under_stacks) -> tuple:
    """(log-odds, weight) per cell: what reading it as no tile costs against the tile networks
    (as a tile, minus that), and how much of it counts when a mend is chosen (UNDER_STACK_WEIGHT
    for the cells in `under_stacks`, whose tiles a stack hides, else 1)."""
    weight = np.ones(len(p_tile))
    weight[list(under_stacks)] = UNDER_STACK_WEIGHT
    return _log_odds(p_tile), weight


_SIDE_RING_OFFSETS = _rings(SIDE_RING_RADII, np.radians(np.arange(0, 360, 10)))


def _side_ring_colours(colours: ColourModel, geo: WorldGeometry, cells: list, hidden: np.ndarray,
                       medians: np.ndarray) -> np.ndarray:
    """The cells' median colours (tile_evidence) taken from a ring near the tile's sides
    (SIDE_RING_RADII) where enough of it is visible, as the colours a tile is read in: a stack's
    lower discs' rims and its shadow fall right beside it (a white tile under a black stack in
    lamp light read black), and a lamp's glare on a glossy black tile lies mostly in its middle
    (black tiles under an overhead light read white from above)."""
    ring = np.broadcast_to(_SIDE_RING_OFFSETS, (len(cells),) + _SIDE_RING_OFFSETS.shape)
    classes, usable, lab = _cell_samples(colours, geo, cells, ring, hidden)
    _, ring_medians, _ = _cell_colours(colours, classes, usable, lab)
    enough = usable.sum(axis=1) >= SIDE_RING_SEEN
    medians = medians.copy()
    medians[enough] = ring_medians[enough]
    return medians


def _opening_diamond(colours: ColourModel, cells: list, p_tile: np.ndarray, medians: np.ndarray, roles: dict,
                     under_stacks: list) -> dict | None:
    """{index: role, or None for no tile} of the cells to read again so that a reading of at most
    OPENING_TILES tiles, a colour short of its two, becomes the opening diamond every game starts
    from (RULES.md §4: two tiles of one colour touching in the middle, one of the other colour at
    each end); None when the reading is larger, has both colours' two, or no diamond costs at most
    OPENING_FIT. A diamond's cost is the tile networks' log-odds it overrules (UNDER_STACK_WEIGHT of
    them under stacks, as in _laying_rule) and, for each of its tiles, what reading it in its
    colour costs (_colour_loss); whichever colour's tiles touch in the middle. A reading of two
    or more tiles, none of one colour, is no World any game or rule text has (black tiles on a
    cloth of their colour: fresh 105 s044), and its tiles place the diamond, so its likeliest
    diamond is taken whatever it costs (a single tile could be any of the diamond's four)."""
    tiles = {cells[i] for i in roles}
    most_lacking = max(_tiles_lacking(roles).values())
    if most_lacking <= 0 or not tiles or len(tiles) > OPENING_TILES:
        return None
    index = {c: i for i, c in enumerate(cells)}
    against, weight = _tile_log_odds(p_tile, under_stacks)
    against = against * weight
    best = None
    middles = {frozenset((a, b)) for t in tiles for a in (t, *neighbours(t)) for b in neighbours(a)}
    for pair in middles:
        a, b = sorted(pair)
        ends = set(neighbours(a)) & set(neighbours(b))
        diamond = {a: "middle", b: "middle", **{e: "end" for e in ends}}
        if not all(c in index for c in diamond):
            continue
        dropped = sum(against[index[t]] for t in tiles - set(diamond))
        for middle, end in (("white", "black"), ("black", "white")):
            colour = {"middle": middle, "end": end}
            cost = dropped + sum((0.0 if c in tiles else -against[index[c]]) +
                                 _colour_loss(colours, medians[index[c]], colour[place])
                                 for c, place in diamond.items())
            if best is None or cost < best[0]:
                best = (cost, {index[c]: colour[place] for c, place in diamond.items()}, tiles - set(diamond))
    colour_missing = len(tiles) >= 2 and most_lacking >= OPENING_TILES_PER_COLOUR
    if best is None or (best[0] > OPENING_FIT and not colour_missing):
        return None
    _, chosen, dropped = best
    changes = {i: role for i, role in chosen.items() if roles.get(i, (None,))[0] != role}
    changes.update({index[c]: None for c in dropped})
    return changes


def _tiles_lacking(roles: dict) -> dict:
    """{role: how many tiles of that role the reading `roles` ({index: (role, confidence)}) lacks
    of the opening diamond's OPENING_TILES_PER_COLOUR (0 or less: none)}."""
    return {role: OPENING_TILES_PER_COLOUR - sum(1 for r, _ in roles.values() if r == role)
            for role in ("white", "black")}


def _colour_loss(colours: ColourModel, median: np.ndarray, role: str) -> float:
    """What reading a tile of this median colour as `role` costs: 0 when it looks more like that
    tile colour than the other, up to COLOUR_LOSS when it looks like the other."""
    other = "black" if role == "white" else "white"
    distance = _role_distance(colours)
    d_role = distance(median, colours.tiles[role].mean)
    d_other = distance(median, colours.tiles[other].mean)
    return float(COLOUR_LOSS * max(0.0, (d_role - d_other) / (d_role + d_other + 1e-9)))


def _diamond_completion(colours: ColourModel, cells: list, p_tile: np.ndarray, medians: np.ndarray,
                        roles: dict) -> dict:
    """{index: role} of the no-tile cells that complete a colour read on fewer than two tiles:
    beside a tile, likeliest first, at least DIAMOND_CHANCE of a tile, and of that colour."""
    lacking = _tiles_lacking(roles)
    if max(lacking.values()) <= 0:
        return {}
    tiles = {cells[i] for i in roles}
    beside = np.array([i not in roles and p_tile[i] >= DIAMOND_CHANCE and any(n in tiles for n in neighbours(c))
                       for i, c in enumerate(cells)], bool)
    candidates = _tile_roles(colours, medians, beside, relearn=False)
    added = {}
    for i, (role, _) in sorted(candidates.items(), key=lambda item: -p_tile[item[0]]):
        if lacking[role] > 0:
            added[i] = role
            lacking[role] -= 1
    return added


def _off_colour_tiles(colours: ColourModel, medians: np.ndarray, is_tile: np.ndarray) -> list:
    """The cells read as tiles whose colour is neither tile colour (fresh 111 s010: a pale patch of light on a
    wooden table read as two white tiles, and with it the red tiles as black). Where the profile's colour hints
    differ in chroma, the tiles' colours are split in three clusters; the two nearest the hints of the roles they
    would take are the tile colours, and a cell farther from both than OFF_COLOUR times their distance apart is of
    neither."""
    idx = np.flatnonzero(is_tile)
    if len(idx) < 3 or not hints_differ_in_chroma(colours.hints):
        return []
    _, centres = lab_clusters(medians[idx], 3)
    hints = colours.hints
    white, black = min(permutations(centres, 2),
                       key=lambda pair: lab_distance(pair[0], hints["white"]) + lab_distance(pair[1], hints["black"]))
    apart = lab_distance(white, black)
    return [i for i in idx
            if min(lab_distance(medians[i], white), lab_distance(medians[i], black)) > OFF_COLOUR * apart]


def _role_distance(colours: ColourModel):
    """The distance a tile colour is chosen by: shaded_distance where the profile's hints differ in
    chroma (their hue tells the colours apart in shade too), lab_distance otherwise."""
    return shaded_distance if hints_differ_in_chroma(colours.hints) else lab_distance


def _tile_roles(colours: ColourModel, medians: np.ndarray, is_tile: np.ndarray, relearn=True) -> dict:
    """{index: (role, confidence)} for the tile cells, from two clusters of their colours (which
    replace the photo's tile colours in `colours` when `relearn`): the nearer, by shaded_distance
    where the profile's hints differ in chroma (a red tile out of a lamp's light is as dark as
    halfway to black, but as red as the red tiles once they are dimmed to it: fresh 106 s043).
    Two clusters need three tiles, or two whose colours the profile's hints tell apart: the first
    colour model may have missed one colour altogether (dev 54 s111: silver tiles as grey as a
    cloth's checks, in the evening, and the first model's two colours both red), and with it only
    two tiles of an opening are read."""
    idx = np.flatnonzero(is_tile)
    if len(idx) == 0:
        return {}
    white, black = colours.tiles["white"].mean, colours.tiles["black"].mean
    if relearn and (len(idx) >= 3 or (len(idx) == 2 and colours.tells_apart(*medians[idx]))):
        lbl, centres = lab_clusters(medians[idx], 2)
        if np.bincount(lbl, minlength=2).min() >= 1:
            a, b = centres[0], centres[1]
            white, black = colours.roles_of(a, b)

            def spread(centre):
                near = medians[idx][np.linalg.norm(medians[idx] - centre, axis=1) < np.linalg.norm(a - b) / 2]
                return np.maximum(np.std(near, axis=0) if len(near) > 1 else 0.0, [3.0, 2.0, 2.0])

            colours.tiles = {"white": ColourClass(white, spread(white)), "black": ColourClass(black, spread(black))}
            colours.discs = dict(colours.tiles)
            colours.reset_cache()
    distance = _role_distance(colours)
    out = {}
    for i in idx:
        dw = distance(medians[i], white)
        db = distance(medians[i], black)
        role = "white" if dw <= db else "black"
        margin = abs(dw - db) / (dw + db + 1e-9)
        out[i] = (role, float(np.clip(margin * 3.0, 0, 1)))
    return out

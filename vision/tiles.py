"""Stage 3: every cell of the World and its perimeter: white tile, black tile or no tile."""
from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from .colours import BLACK, TABLE, WHITE, ColourModel
from .geometry import WorldGeometry, _apply
from .hexgrid import cells_to_plane, components, hexagon, plane_to_cells, ring

LABEL_NAMES = {TABLE: None, WHITE: "white", BLACK: "black"}
CONFIDENT = 0.75


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


def _annulus_offsets(away: np.ndarray | None) -> np.ndarray:
    """Points between a centred disc's rim and the tile's edge; only the far half if `away` given."""
    a = _ANNULUS_ANGLES
    if away is not None:
        a = a[np.argsort(-np.cos(a - np.arctan2(away[1], away[0])))[:13]]
    return np.concatenate([r * np.stack([np.cos(a), np.sin(a)], 1) for r in (0.385, 0.43)])


def candidate_cells(colours: ColourModel, geo: WorldGeometry) -> list:
    """Cells whose centre falls on the World region, plus two rings around them."""
    ys, xs = np.nonzero(colours.world_mask[::2, ::2])
    pts = np.column_stack([xs * 2, ys * 2]).astype(float)
    core = {tuple(map(int, c)) for c in np.unique(plane_to_cells(geo.work_to_plane(pts)), axis=0)}
    first = ring(core)
    return sorted(core | first | ring(core | first))


def read_tiles(colours: ColourModel, geo: WorldGeometry, cells, hidden: np.ndarray | None = None,
               labels=None) -> TileReading:
    """Classify each cell by the pixel classes inside its hexagon.

    Without `hidden` (the first pass, before stacks are known) only the ring outside where a disc
    would stand is used, on the side facing away from the camera (a stack hides the near side);
    with `hidden` (the stacks' silhouettes) every visible sample of the hexagon counts.
    """
    if labels is None:
        labels, _ = colours.pixel_classes()
    h, w = labels.shape
    cells = list(cells)
    centres = cells_to_plane(cells)
    if hidden is None:
        away = None
        if geo.camera.tilt_deg > 10:
            away = -(geo.camera.centre[:2] / geo.pitch_mm)
        offsets = np.stack([_annulus_offsets(None if away is None else away + c) for c in centres])
    else:
        offsets = np.broadcast_to(np.concatenate([OFFSETS, _annulus_offsets(None)]),
                                  (len(cells), len(OFFSETS) + len(_annulus_offsets(None)), 2))
    pts = (centres[:, None, :] + offsets).reshape(-1, 2)
    pix = np.round(_apply(geo.plane_to_work, pts)).astype(int)
    inside = (pix[:, 0] >= 0) & (pix[:, 0] < w) & (pix[:, 1] >= 0) & (pix[:, 1] < h)
    px = np.clip(pix[:, 0], 0, w - 1)
    py = np.clip(pix[:, 1], 0, h - 1)
    lab = labels[py, px].astype(int)
    usable = inside.copy()
    if hidden is not None:
        usable &= hidden[py, px] == 0
    lab = lab.reshape(len(cells), -1)
    usable = usable.reshape(len(cells), -1)
    reading = TileReading()
    for i, cell in enumerate(cells):
        n = usable[i].sum()
        if n == 0:
            votes = np.array([1.0, 0.0, 0.0]) if not inside.reshape(len(cells), -1)[i].any() else np.ones(3) / 3
            conf = 0.0
        else:
            votes = np.bincount(lab[i][usable[i]], minlength=3)[:3] / n
            conf = float(votes.max()) * min(1.0, n / (0.3 * usable.shape[1]))
        k = int(np.argmax(votes))
        reading.cells[cell] = CellRead(cell=cell, colour=LABEL_NAMES[k], confidence=round(conf, 3),
                                       votes=tuple(round(float(v), 3) for v in votes),
                                       visible=float(n / usable.shape[1]))
    return reading


def world_components(tiles) -> list:
    return components(tiles)

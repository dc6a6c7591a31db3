"""A tiny painter's-algorithm renderer of EXXIT tables, for stage tests before/besides Blender renders.

It draws hexagonal tiles (top and side faces) and disc stacks (cylinders) seen by a pinhole
camera, with a gradient-lit table, and returns the image plus the exact ground truth.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import cv2
import numpy as np

from vision.camera import look_at
from vision.hexgrid import cell_to_plane, hexagon

COLOURS = {  # edition -> (white role BGR, black role BGR, table BGR)
    "jactalea-red-black": ((40, 40, 175), (34, 32, 34), (120, 150, 185)),
    "silver-red": ((190, 184, 178), (40, 36, 165), (70, 110, 70)),
    "black-white": ((220, 226, 228), (32, 30, 30), (90, 120, 160)),
}


@dataclass
class Scene:
    tiles: dict                     # cell -> "white"/"black"
    stacks: dict = field(default_factory=dict)   # cell -> tuple of colours bottom..top
    edition: str = "jactalea-red-black"
    tilt_deg: float = 35.0
    yaw_deg: float = 20.0
    distance_mm: float = 520.0
    focal_px: float = 1300.0
    size: tuple = (1600, 1200)
    pitch_mm: float = 42.5
    tile_mm: float = 42.0
    tile_thick: float = 3.5
    disc_diam: float = 28.0
    disc_thick: float = 4.5
    light: float = 1.0
    offset_mm: tuple = (0.0, 0.0)
    clutter: bool = False
    seed: int = 0


def camera_for(scene: Scene):
    xs = [cell_to_plane(c) for c in scene.tiles]
    cx = float(np.mean([p[0] for p in xs])) * scene.pitch_mm + scene.offset_mm[0]
    cy = float(np.mean([p[1] for p in xs])) * scene.pitch_mm + scene.offset_mm[1]
    t, y = math.radians(scene.tilt_deg), math.radians(scene.yaw_deg)
    d = scene.distance_mm
    pos = [cx + d * math.sin(t) * math.sin(y), cy + d * math.sin(t) * math.cos(y), -d * math.cos(t)]
    return look_at(pos, [cx, cy, 0.0], scene.focal_px, scene.size)


def _shade(bgr, f):
    return tuple(int(np.clip(c * f, 0, 255)) for c in bgr)


def render(scene: Scene):
    """Return (BGR image, camera)."""
    rng = np.random.default_rng(scene.seed)
    cam = camera_for(scene)
    w, h = scene.size
    ss = 2
    white, black, table = COLOURS[scene.edition]
    col = {"white": white, "black": black}
    yy, xx = np.mgrid[0:h * ss, 0:w * ss].astype(np.float32)
    grad = (0.8 + 0.35 * xx / (w * ss)) * scene.light
    img = (np.array(table, np.float32)[None, None, :] * grad[..., None])
    img = np.clip(img, 0, 255).astype(np.uint8)
    polys = []                     # (depth, points (N,3) mm, BGR)
    p, T = scene.pitch_mm, scene.tile_thick
    light_dir = np.array([0.3, -0.5, -0.8]) / np.linalg.norm([0.3, -0.5, -0.8])

    def add_prism(top_xy, z_top, z_bot, bgr):
        n = len(top_xy)
        top = np.column_stack([top_xy, np.full(n, z_top)])
        bot = np.column_stack([top_xy, np.full(n, z_bot)])
        centre = top_xy.mean(axis=0)
        for i in range(n):
            j = (i + 1) % n
            quad = np.array([top[i], top[j], bot[j], bot[i]])
            mid = (top_xy[i] + top_xy[j]) / 2 - centre
            normal = np.array([mid[0], mid[1], 0.0]) / (np.linalg.norm(mid) + 1e-9)
            if (cam.centre - quad.mean(0)) @ normal <= 0:
                continue
            f = 0.55 + 0.3 * max(0.0, -normal @ light_dir)
            polys.append((quad, _shade(bgr, f * scene.light)))
        polys.append((top, _shade(bgr, 1.05 * scene.light)))

    def depth(poly):
        return float(np.linalg.norm(poly.mean(0) - cam.centre))

    # tiles and stacks, drawn far to near as whole objects (adequate for convex, separated pieces)
    objects = []
    for cell, colour in scene.tiles.items():
        cx, cy = cell_to_plane(cell)
        hexxy = hexagon(cell, scene.tile_mm / 1.0) * 0 + hexagon((0, 0), 1.0) * scene.tile_mm
        hexxy = hexxy + np.array([cx * p, cy * p])
        objects.append((np.array([cx * p, cy * p, 0.0]), ("prism", hexxy, 0.0, T, col[colour])))
    circle = np.stack([np.cos(np.linspace(0, 2 * np.pi, 40, endpoint=False)),
                       np.sin(np.linspace(0, 2 * np.pi, 40, endpoint=False))], 1) * scene.disc_diam / 2
    for cell, discs in scene.stacks.items():
        cx, cy = cell_to_plane(cell)
        base = 0.0 if cell in scene.tiles else T
        for k, colour in enumerate(discs):
            zt = base - (k + 1) * scene.disc_thick
            zb = base - k * scene.disc_thick
            jitter = rng.normal(0, 0.4, 2)
            xy = circle + np.array([cx * p, cy * p]) + jitter
            objects.append((np.array([cx * p, cy * p, zt]), ("prism", xy, zt, zb, col[colour])))
    if scene.clutter:  # a pile of supply tiles and loose reserve discs well away from the World
        for k in range(3):
            xy = hexagon((0, 0), 1.0) * scene.tile_mm + np.array([-5.5 * p, 3.5 * p + k * 0.5])
            objects.append((np.array([-5.5 * p, 3.5 * p, -k * T]), ("prism", xy, -(k + 1) * T, -k * T,
                                                                     col["black" if k % 2 else "white"])))
    objects.sort(key=lambda o: -(np.linalg.norm(o[0] - cam.centre)) - 1e-3 * o[0][2])
    for _, (_, xy, z_top, z_bot, bgr) in objects:
        start = len(polys)
        add_prism(xy, z_top, z_bot, bgr)
        for quad, colour in polys[start:]:
            pix = cam.project(quad) * ss
            cv2.fillPoly(img, [np.round(pix * 16).astype(np.int32)], colour, cv2.LINE_AA, shift=4)
        # thin seam on the top face outline
        top = np.column_stack([xy, np.full(len(xy), z_top)])
        pix = cam.project(top) * ss
        cv2.polylines(img, [np.round(pix * 16).astype(np.int32)], True,
                      _shade(bgr, 0.6 * scene.light), 1, cv2.LINE_AA, shift=4)
    img = cv2.resize(img, (w, h), interpolation=cv2.INTER_AREA)
    noise = rng.normal(0, 3, img.shape)
    img = np.clip(img.astype(np.float32) + noise, 0, 255).astype(np.uint8)
    return img, cam


def diamond():
    return {(0, 0): "white", (1, 0): "white", (0, 1): "black", (1, -1): "black"}


def midgame():
    tiles = diamond()
    tiles.update({(2, -1): "white", (-1, 1): "black", (2, 0): "white", (-1, 2): "black",
                  (0, -1): "white", (1, 1): "black", (3, -1): "black", (0, 2): "white"})
    stacks = {(0, 0): ("black", "white"), (1, 0): ("white",), (1, 1): ("white", "black", "black"),
              (2, -1): ("black",), (-1, 0): ("white",), (3, -2): ("black", "white")}
    return tiles, stacks


def random_scene(seed: int, tilt_deg: float, edition="jactalea-red-black", n_tiles=None) -> Scene:
    """A random connected World with random stacks (some off the World), for accuracy checks."""
    rng = np.random.default_rng(seed)
    tiles = diamond()
    n_tiles = n_tiles or int(rng.integers(6, 20))
    steps = [(1, 0), (0, 1), (-1, 1), (-1, 0), (0, -1), (1, -1)]
    while len(tiles) < n_tiles:
        q, r = list(tiles)[rng.integers(len(tiles))]
        dq, dr = steps[rng.integers(6)]
        tiles.setdefault((q + dq, r + dr), "white" if rng.random() < 0.5 else "black")
    stacks, left = {}, {"white": 8, "black": 8}
    cells = list(tiles)
    for _ in range(int(rng.integers(2, 7))):
        cell = cells[rng.integers(len(cells))]
        if rng.random() < 0.25:
            q, r = cell
            dq, dr = steps[rng.integers(6)]
            cell = (q + dq, r + dr)
        if cell in stacks:
            continue
        h = int(rng.integers(1, 5))
        discs = []
        for _ in range(h):
            c = "white" if rng.random() < 0.5 else "black"
            if left[c] == 0:
                c = "black" if c == "white" else "white"
            if left[c] == 0:
                break
            left[c] -= 1
            discs.append(c)
        if discs:
            stacks[cell] = tuple(discs)
    return Scene(tiles=tiles, stacks=stacks, edition=edition, tilt_deg=tilt_deg,
                 yaw_deg=float(rng.uniform(0, 360)), distance_mm=float(rng.uniform(450, 650)),
                 focal_px=float(rng.uniform(1100, 1700)), seed=seed,
                 offset_mm=(float(rng.uniform(-40, 40)), float(rng.uniform(-30, 30))))


def compare(reading, scene: Scene, cam) -> dict:
    """Match a PhotoReading to the scene's truth through pixels; count errors."""
    from vision.hexgrid import cell_to_plane as c2p, neighbours
    geo = reading.geometry
    truth_cells = set(scene.tiles) | set(scene.stacks) | {n for c in scene.tiles for n in neighbours(c)}
    err = {"cells": 0, "cell_errors": 0, "stacks": len(scene.stacks), "stack_found": 0,
           "stack_false": 0, "top_ok": 0, "height_ok": 0}
    mapping = {}
    for cell in truth_cells:
        x, y = np.array(c2p(cell)) * scene.pitch_mm
        pix = cam.project([[x, y, 0.0]])[0] * geo.scale
        plane = geo.work_to_plane(pix[None])[0]
        from vision.hexgrid import plane_to_cell
        mapping[cell] = plane_to_cell(*plane)
    tiles = reading.tiles.tiles
    for cell in truth_cells:
        err["cells"] += 1
        if tiles.get(mapping[cell]) != scene.tiles.get(cell):
            err["cell_errors"] += 1
    read = reading.stacks.stacks
    for cell, discs in scene.stacks.items():
        st = read.get(mapping[cell])
        if st is None:
            continue
        err["stack_found"] += 1
        err["top_ok"] += st.top == discs[-1]
        err["height_ok"] += st.height == len(discs)
    err["stack_false"] = len(set(read) - {mapping[c] for c in scene.stacks})
    return err

"""Set profile from photos: the opening diamond (colours, tile gap and thickness), one known stack."""
from __future__ import annotations

import dataclasses

import numpy as np

from vision.colours import find_colours
from vision.errors import VisionError
from vision.geometry import find_world, straight_edges
from vision.hexgrid import CIRCUMRADIUS, cells_to_plane, neighbours
from vision.loading import load_image
from vision.profile import ColourHint, SetProfile, load_profile
from vision.stacks import EdgeMap, robust_mean, rim_support
from vision.tiles import candidate_cells, outline_support, read_tiles


class CalibrationError(VisionError):
    """The calibration photo does not show what it should (one-line message for the user)."""


@dataclasses.dataclass
class Scene:
    image: object
    colours: object
    geometry: object
    tiles: dict


def _read_scene(photo, profile: SetProfile) -> Scene:
    image = load_image(photo)
    colours = find_colours(image, profile)
    geo = find_world(straight_edges(image.gray), colours, profile, image.size, image.scale)
    cells = candidate_cells(colours, geo)
    tiles = read_tiles(colours, geo, cells, outline_support(EdgeMap(colours), geo, cells)).tiles
    return Scene(image, colours, geo, tiles)


def _diamond_roles(tiles: dict) -> dict:
    """Map vision's colour labels to roles: the two touching tiles of the diamond play White."""
    if len(tiles) != 4:
        raise CalibrationError(f"expected the opening diamond (4 tiles, no discs); found {len(tiles)} tiles")
    by = {}
    for cell, label in tiles.items():
        by.setdefault(label, []).append(cell)
    if sorted(len(v) for v in by.values()) != [2, 2]:
        raise CalibrationError("expected 2 + 2 tiles of two colours in the opening diamond")
    touching = [lab for lab, cells in by.items() if cells[1] in neighbours(cells[0])]
    if len(touching) != 1:
        raise CalibrationError("the tiles do not form the opening diamond (two touching, two at the ends)")
    first = touching[0]
    return {first: "white", ("black" if first == "white" else "white"): "black"}


def _mean_rgb(scene: Scene, cells, radius=0.3) -> tuple:
    ang = np.linspace(0, 2 * np.pi, 16, endpoint=False)
    offs = np.concatenate([[[0, 0]]] + [r * np.stack([np.cos(ang), np.sin(ang)], 1) for r in (radius / 2, radius)])
    pts = (cells_to_plane(cells)[:, None, :] + offs[None]).reshape(-1, 2)
    pix = scene.geometry.camera.project(np.column_stack([pts * scene.geometry.pitch_mm, np.zeros(len(pts))]))
    full = scene.image.full
    x = np.clip(np.round(pix[:, 0]).astype(int), 0, full.shape[1] - 1)
    y = np.clip(np.round(pix[:, 1]).astype(int), 0, full.shape[0] - 1)
    bgr = np.median(full[y, x].astype(float), axis=0)
    return tuple(int(round(c)) for c in bgr[::-1])


def _outline_support(scene: Scene, scale: float, depth_mm: float, outward_only: bool) -> float:
    """Edge support along the tiles' hexagon outlines (scaled) at `depth_mm` below the tile tops."""
    geo = scene.geometry
    edges = EdgeMap(scene.colours)
    tiles = set(scene.tiles)
    cam_xy = geo.camera.centre[:2] / geo.pitch_mm
    pts_all, nrm_all = [], []
    ang = np.radians(30.0 + 60.0 * np.arange(7))
    for cell in tiles:
        c = cells_to_plane([cell])[0]
        corners = c + CIRCUMRADIUS * scale * np.stack([np.cos(ang), np.sin(ang)], 1)
        for k in range(6):
            normal_deg = 60.0 + 60.0 * k              # the edge between corners k and k+1
            mid_dir = np.array([np.cos(np.radians(normal_deg)), np.sin(np.radians(normal_deg))])
            nb = (cell[0] + [0, -1, -1, 0, 1, 1][k], cell[1] + [1, 1, 0, -1, -1, 0][k])
            if outward_only and (nb in tiles or mid_dir @ (cam_xy - c) <= 0):
                continue
            t = np.linspace(0.15, 0.85, 12)[:, None]
            edge = corners[k] + (corners[k + 1] - corners[k]) * t
            pix = geo.camera.project(np.column_stack([edge * geo.pitch_mm, np.full(len(edge), depth_mm)]))
            pix = pix * geo.scale
            d = pix[-1] - pix[0]
            n = np.array([d[1], -d[0]]) / (np.linalg.norm(d) + 1e-9)
            pts_all.append(pix)
            nrm_all.append(np.repeat(n[None], len(pix), 0))
    if not pts_all:
        return 0.0
    return robust_mean(edges.support(np.concatenate(pts_all), np.concatenate(nrm_all)), 12)


def measure_set(photo, base=None, stack_photo=None, stack_height=None, name="custom") -> SetProfile:
    """Measure a set from a photo of the opening diamond (and optionally one stack of known height)."""
    base = load_profile(base)
    neutral = dataclasses.replace(base, colours={})          # the lighter colour is "white" for now
    scene = _read_scene(photo, neutral)
    roles = _diamond_roles(scene.tiles)
    colours = {}
    for label, role in roles.items():
        rgb = _mean_rgb(scene, [c for c, lab in scene.tiles.items() if lab == label])
        colours[role] = ColourHint(name=f"{role}-role colour", tile_rgb=rgb, disc_rgb=rgb)
    # tile thickness: the depth below the tile tops where the outward side faces meet the table
    thickness = base.tile_thickness_mm
    if scene.geometry.camera.tilt_deg >= 20 and scene.geometry.camera.focal_estimated:
        depths = np.linspace(1.0, 9.0, 33)
        scale = base.tile_width_mm / base.pitch_mm
        sup = [_outline_support(scene, scale, d, True) for d in depths]
        thickness = float(depths[int(np.argmax(sup))])
    profile = dataclasses.replace(base, name=name, colours=colours, tile_thickness_mm=thickness,
                                  description="measured by python -m calibration profile")
    if stack_photo is not None:
        profile = _measure_stack(profile, stack_photo, stack_height)
    return profile


def _measure_stack(profile: SetProfile, photo, height: int) -> SetProfile:
    """Disc thickness from a photo with one stack of `height` discs: the height over its cell at
    which a disc-sized circle best matches the stack's top rim, divided by the disc count."""
    if not height or height < 1:
        raise CalibrationError("--stack-height must be the number of discs in the stack (1 or more)")
    scene = _read_scene(photo, profile)
    geo = scene.geometry
    if geo.camera.tilt_deg < 20 or not geo.camera.focal_estimated:
        raise CalibrationError("take the stack photo from an angle (20-60° from vertical) so its side shows")
    edges = EdgeMap(scene.colours)
    r0 = profile.disc_diameter_mm / 2
    cells = set(scene.tiles) | {n for c in scene.tiles for n in neighbours(c)}
    best = None
    for cell in cells:
        base = 0.0 if cell in scene.tiles else -profile.tile_thickness_mm
        heights = base + np.linspace(0.5, 1.6, 45) * height * profile.disc_thickness_mm
        sup = np.array([rim_support(edges, geo, cell, z, r0) for z in heights])
        k = int(np.argmax(sup))
        if best is None or sup[k] > best[0]:
            best = (sup[k], cell, heights[k] - base, base)
    score, cell, top_mm, base = best
    if score < 0.35:
        raise CalibrationError("no stack found in the stack photo")
    return dataclasses.replace(profile, disc_thickness_mm=top_mm / height)

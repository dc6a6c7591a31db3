"""analyze_photo: the stages in order, with their timings."""
from __future__ import annotations

import time

import cv2
import numpy as np

from .colours import find_colours
from .geometry import find_world
from .hexgrid import cells_to_plane, ring
from .loading import load_image
from .profile import load_profile
from .reading import PhotoReading
from .sanity import sanity_warnings
from .stacks import CONFIDENT as STACK_CONFIDENT, EdgeMap, read_stacks
from .tiles import CONFIDENT as TILE_CONFIDENT, candidate_cells, outline_support, read_tiles


def analyze_photo(source, profile=None) -> PhotoReading:
    """Read an EXXIT position from a photo (path, bytes or BGR ndarray)."""
    timing = {}
    t0 = last = time.perf_counter()

    def lap(name):
        nonlocal last
        now = time.perf_counter()
        timing[name] = now - last
        last = now

    profile = load_profile(profile)
    image = load_image(source)
    lap("load_s")
    colours = find_colours(image.work, profile)
    lap("colours_s")
    gray = cv2.cvtColor(image.work, cv2.COLOR_BGR2GRAY)
    geo = find_world(gray, colours, profile, image.size, image.scale)
    lap("geometry_s")
    cells = candidate_cells(colours, geo)
    edges = EdgeMap(colours)
    outline = outline_support(edges, geo, cells)
    first = read_tiles(colours, geo, cells, outline)
    stack_cells = set(first.tiles) | ring(first.tiles)
    stacks = read_stacks(colours, geo, profile, sorted(stack_cells), first.tiles, edges)
    tiles = read_tiles(colours, geo, cells, outline, hidden=stacks.hidden, previous=first)
    lap("cells_s")
    origin = _origin(tiles.tiles)
    uncertain_tiles = [c for c, rd in tiles.cells.items() if rd.confidence < TILE_CONFIDENT
                       and (rd.colour or rd.votes[0] < 0.9)]
    uncertain_stacks = [c for c, s in stacks.stacks.items() if s.confidence < STACK_CONFIDENT]
    shift = lambda cs: [(c[0] - origin[0], c[1] - origin[1]) for c in cs]
    warnings = sanity_warnings(
        {(c[0] - origin[0], c[1] - origin[1]): v for c, v in tiles.tiles.items()},
        {(c[0] - origin[0], c[1] - origin[1]): tuple(s.discs) for c, s in stacks.stacks.items()},
        shift(uncertain_tiles), shift(uncertain_stacks))
    timing["total_s"] = time.perf_counter() - t0
    return PhotoReading(tiles=tiles, stacks=stacks, geometry=geo, colours=colours, profile=profile,
                        image_size=image.size, origin=origin, warnings=warnings, timing=timing)


def _origin(tiles: dict) -> tuple:
    """The tile nearest the World's centroid becomes (0, 0)."""
    if not tiles:
        return (0, 0)
    cells = sorted(tiles)
    xy = cells_to_plane(cells)
    i = int(np.argmin(np.linalg.norm(xy - xy.mean(0), axis=1)))
    return cells[i]

"""analyze_photo: the stages in order, with their timings."""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import partial

import cv2
import numpy as np
from threadpoolctl import threadpool_limits

from rules.position import COLOURS, DISCS_PER_COLOUR, OPENING_TILES, OPENING_TILES_PER_COLOUR, TOTAL_TILES

from .colours import TABLE_SOURCES, ColourModel, find_colours, find_table
from .errors import LatticeFellShortError, NoTileReadError, NoWorldFoundError
from .geometry import MIN_EVIDENCE, WorldGeometry, find_world, refine_on_tiles, straight_edges
from .hexgrid import cells_to_plane, components, ring
from .lens import load_lens
from .loading import DETAIL_LONG_SIDE, LoadedImage, load_image
from .profile import load_profile
from .reading import PhotoReading
from .sanity import sanity_warnings, warning_cells
from .stacks import CONFIDENT as STACK_CONFIDENT, EdgeMap, StackReading, read_stacks
from .tiles import (CONFIDENT as TILE_CONFIDENT, MISSED_TILE_CHANCE, TileReading, candidate_cells, classify_tiles,
                    keep_tiles_to_the_set, outline_support, read_tiles, tile_views)

NO_TILE_READ = "no EXXIT World found: a hex pattern was fitted but no tile could be read"
TABLE_READ_AS_TILES = "no EXXIT World found: the table itself reads as tiles"
FEW_EDGES_FEW_TILES = ("no EXXIT World found: a hex pattern fits only a few straight edges, and too few tiles "
                       "(or too many) read on it for a World (too few tile edges, or too much clutter)")
ONE_TILE_READ = "no EXXIT World found: a single tile was read, and a World holds two at least"
FIRST_READ_TILES_MAX = 10 * TOTAL_TILES   # a first read of more is the table read as tiles, not a World
WORLD_TILES_MAX = 3 * TOTAL_TILES // 2    # a final World of more is too (1,909 readings of 27 sets: at most 3 over a
                                          # set's, but one of 74 on a desk as dark as its black tiles; session 81)
STEEP_VIEW_DEG = 20              # camera tilt under which a stack's side hardly shows (BENCHMARKS.md, session 19)
SMALL_PHOTO_SIDE = 1000          # px, a longer side under which fewer Worlds read exactly (BENCHMARKS.md, session 39)
MIN_DETACHED_GROUP = 3           # tiles a group beside the World needs to be kept as part of it (_world_cells)
FEWEST_WORLD_TILES = 2           # every game's World holds the opening diamond's four, a rule text's diagram two
LIKELY_FIRST_TILES = (FEWEST_WORLD_TILES, 2 * TOTAL_TILES)   # a lattice on which the first read finds fewer
                                 # tiles, or more, is kept only if no other try finds a number in between (fresh 86
                                 # s016: a pile of spare tiles taken for a 1-tile World beside a World of 27; fresh
                                 # 88 s057: 310 read at the horizon)
LOOKS = {"squares": {"squares_aside": True},                     # find_world's looks after the first,
         "last": {"squares_aside": True, "last_look": True}}     # in the order _lattices takes them
ONE_FAMILY_SHARE = 0.85          # a likely lattice whose edges lie more than this along one of its three directions
                                 # gives way to the next lattice fitted if that one is likely and even: a checked
                                 # cloth's lines, long and evenly spaced, fit one direction of a lattice finer than
                                 # the tiles' (fresh 95 s040: 0.89). A World's hexagons put about a third on each
                                 # (519 lattices tried on seven sets: median 0.38, 95% at most 0.61); at 0.75,
                                 # lattices of 0.75-0.81 were tried again for nothing (samples s035: 0.7 s more)


# numpy's BLAS threads wait spinning between calls and so take a core from OpenCV's threads on a
# 2-core machine, while vision's matrices are small: with one, a photo reads in 0.95 of the time
# (samples, paired in one process: BENCHMARKS.md, session 72)
threadpool_limits(1, user_api="blas")


def analyze_photo(source, profile=None, lens=None) -> PhotoReading:
    """Read an EXXIT position from a photo (path, bytes or BGR ndarray); `profile` the set's
    (vision.profile), `lens` the camera's (vision.lens: a Lens or an exxit-camera/1 file), when
    measured: the photo is then undistorted before it is read."""
    timing = {}
    t0 = last = time.perf_counter()

    def lap(name):
        nonlocal last
        now = time.perf_counter()
        timing[name] = now - last
        last = now

    # without a profile the sizes are the default set's, and (FORMATS.md) the lighter colour
    # plays White: the default set's colour hints are not applied to somebody else's set
    profile = load_profile(profile) if profile is not None else replace(load_profile(None), colours={})
    image = load_image(source, None if lens is None else load_lens(lens))
    lap("load_s")
    located = locate_world(image, profile)
    image, colours, geo, first, edges = located.image, located.colours, located.geometry, located.first, located.edges
    lap("world_s")
    cells, outline = located.cells, located.outline
    stacks = read_stacks(colours, geo, profile, sorted(set(first.tiles) | ring(first.tiles)), first.tiles, edges)
    for looks in range(1, 3):
        views = tile_views(colours, geo, cells, stacks.hidden)
        tiles = classify_tiles(colours, geo, views, outline, first, set(stacks.stacks))
        world, ignored = _world_cells(tiles.tiles)
        if not world:
            raise NoTileReadError(NO_TILE_READ)
        relevant = world | ring(world)                        # the World and its perimeter
        if relevant <= set(cells) or looks == 2:
            break
        # tiles the first read missed take the World's edge beyond the cells it looked at
        cells = sorted(set(cells) | relevant | ring(relevant))
        outline = outline_support(edges, geo, cells)
        first = read_tiles(colours, geo, cells, outline)
        stacks = read_stacks(colours, geo, profile, sorted(relevant), tiles.tiles, edges, stacks)
    # read once more with the tile colours classify_tiles learnt from the World's tiles, nearer the
    # photo's own than those the first read learnt (twenty-one sets: 12 more Worlds exact, 1 fewer;
    # white tiles on a cloth's light checks above all)
    colours_learnt = replace(colours)     # classify_tiles relearns them in place
    classify = partial(classify_tiles, geo=geo, views=views, outline=outline, first=first, stacked=set(stacks.stacks))
    tiles = classify(colours)
    world, ignored = _kept_world(tiles)
    beyond = _stacks_beyond(colours, geo, profile, tiles, world, edges, stacks)
    if beyond.stacks:
        colours = colours_learnt
        tiles = classify(colours, beyond=set(beyond.stacks))
        world, ignored = _kept_world(tiles)
        stacks = stacks.merged(beyond)
    relevant = world | ring(world)
    # read again, the chances kept: on the World's final cells, and with the tile colours that
    # classify_tiles learnt from the World's tiles (a top read with the first colours can be wrong
    # all over the photo: dev cloth 69 s269, five red tops read black in dim light)
    stacks = read_stacks(colours, geo, profile, sorted(relevant), tiles.tiles, edges, stacks)
    lap("cells_s")
    tiles.cells = {c: rd for c, rd in tiles.cells.items() if c in relevant}
    origin = _origin(tiles.tiles)
    warnings = reading_warnings(tiles, stacks, origin)
    tilt = geo.camera.tilt_deg
    if tilt < STEEP_VIEW_DEG and any(s.height_confidence < STACK_CONFIDENT for s in stacks.stacks.values()):
        warnings.append({"code": "view-from-above", "cells": [],
                         "message": f"photographed from nearly straight above ({tilt:.0f}° from vertical), where "
                                    "a stack's height hardly shows; a photo taken at 30-45° reads heights better"})
    if max(image.size) < SMALL_PHOTO_SIDE:
        warnings.append({"code": "small-photo", "cells": [],
                         "message": f"a small photo ({image.size[0]}x{image.size[1]} pixels): tiles and stacks read "
                                    f"better from photos of at least {SMALL_PHOTO_SIDE} pixels on the longer side"})
    if image.sharpened:
        cause = "out of focus" if image.blur.shake is None else "the camera moved while it was taken"
        warnings.append({"code": "blurred-photo", "cells": [],
                         "message": f"a blurred photo ({cause}): it was sharpened to be read, but blurred discs are "
                                    "counted less surely; hold the camera still and let it focus"})
    if ignored:
        away = [(c[0] - origin[0], c[1] - origin[1]) for c in ignored]
        warnings.append({"code": "ignored-tiles", "cells": warning_cells(away),
                         "message": f"{len(ignored)} tile(s) apart from the World ignored "
                                    "(the supply or spare pieces?)"})
    timing["total_s"] = time.perf_counter() - t0
    return PhotoReading(tiles=tiles, stacks=stacks, geometry=geo, colours=colours, profile=profile,
                        image_size=image.size, origin=origin, warnings=warnings, timing=timing, lens=image.lens)


def reading_warnings(tiles: TileReading, stacks: StackReading, origin) -> list:
    """The sanity warnings of a reading (sanity_warnings), with its uncertain tiles and stacks, the
    stacks lowered to keep to the set, the tiles added to complete the diamond, the cells read
    again so that every tile touches two, those read as tiles for a stack beyond them and the
    tiles dropped to keep to the set; cells as the reading reports them (`origin` at (0, 0))."""
    moved = lambda c: (c[0] - origin[0], c[1] - origin[1])
    shift = lambda cs: [moved(c) for c in cs]
    uncertain_tiles = [c for c, rd in tiles.cells.items() if rd.confidence < TILE_CONFIDENT]
    uncertain_stacks = [c for c, s in stacks.stacks.items() if s.confidence < STACK_CONFIDENT]
    warnings = sanity_warnings({moved(c): v for c, v in tiles.tiles.items()},
                               {moved(c): tuple(s.discs) for c, s in stacks.stacks.items()},
                               shift(uncertain_tiles), shift(uncertain_stacks))
    mended = (
        (stacks.lowered, "lowered-to-the-set", "stack(s) read lower than they look, to keep to the "
                                               f"{DISCS_PER_COLOUR} discs of a colour a set has; please check"),
        (tiles.laid, "laid-beside-two", "cell(s) read again so that every tile touches two others, as every "
                                        "tile laid in a game does; please check"),
        (tiles.dropped, "dropped-to-the-set", "cell(s) read as no tile, the least sure, to keep to the "
                                              f"{TOTAL_TILES} tiles a set has; please check"),
        (tiles.reached, "laid-beside-a-stack", "cell(s) read again as tiles: a stack stands beyond them, and every "
                                               "stack off the World touches a tile; please check"),
        (tiles.unlike, "unlike-the-tiles", "cell(s) read as no tile: they look like neither tile colour (a patch of "
                                           "light, a sheet of paper?); please check"),
        (tiles.added, "added-to-the-diamond", "cell(s) read again to complete the opening diamond every game "
                                              "holds (at least 2 tiles of each colour); please check"),
    )
    warnings += [{"code": code, "cells": warning_cells(shift(cells)), "message": f"{len(cells)} {message}"}
                 for cells, code, message in mended if cells]
    return warnings


@dataclass
class LocatedWorld:
    """Where locate_world found the World, and the first read of its tiles."""
    image: LoadedImage           # with the working image the World was found in
    colours: ColourModel
    geometry: WorldGeometry
    cells: list                  # the cells the first read looked at
    edges: EdgeMap
    outline: np.ndarray          # their edge support (outline_support)
    first: TileReading           # the tiles read before the stacks are known
    one_tile_colour: bool        # the colour model found one tile colour, the other then taken from the
                                 # table's (ColourModel.tile_colour_from_table)


def locate_world(image, profile) -> LocatedWorld:
    """The colour model, the World's lattice and camera, and a first read of the tiles (a lattice
    on which no tile reads is not the World): the first of the tries' lattices (_lattices) that
    is likely (_likely: its first read finding a number of tiles out of LIKELY_FIRST_TILES, and,
    if fewer than the opening diamond's, on enough edges), and even, no more than ONE_FAMILY_SHARE
    of its edges along one direction. A likely lattice that is not even is taken unless the next
    lattice fitted is likely and even (a checked cloth's lines fit one direction of too fine a
    lattice); an unlikely one only when no try finds a likely one. Its camera is then refitted to
    the outlines of the tiles first read, and they are read again on it (_refined)."""
    return _refined(_chosen_lattice(image, profile), profile)


def _chosen_lattice(image, profile) -> LocatedWorld:
    """The try's lattice locate_world takes (see there)."""
    failures = {}                           # the first reason a try found no colour model, or no lattice
    fallback = uneven = None
    background = _Background()
    try:
        for located in _lattices(image, profile, background, failures):
            if _likely(located) and _even(located):
                return located
            if uneven is not None:
                return uneven
            if _likely(located):
                uneven = located
            fallback = fallback or located
    finally:
        background.close()
    if fallback is not None:                # (an uneven lattice is a fallback too)
        return uneven or fallback
    raise failures.get("geometry") or failures["colours"]   # the reason of the first try that got furthest


def _refined(located: LocatedWorld, profile) -> LocatedWorld:
    """`located` with its camera refitted to the outlines of its first read's tiles (refine_on_tiles)
    and its tiles read again on it (1,080 photos: 15 more Worlds exact; the samples' median tile
    0.019 of a pitch off its true place, 0.015 refined; BENCHMARKS.md, session 86)."""
    geo = refine_on_tiles(located.geometry, located.edges, located.first.tiles, profile)
    if geo is located.geometry:
        return located
    try:
        cells, outline, first = _grown_tile_read(located.colours, geo, located.edges)
    except NoTileReadError:
        return located
    if not first.tiles:
        return located
    return replace(located, geometry=geo, cells=cells, outline=outline, first=first)


def _lattices(image, profile, background: "_Background", failures: dict):
    """The lattice each try finds, in turn (LocatedWorld). A small World is looked at at a finer
    working resolution; when one resolution shows no World, the other is tried, and then both
    again with the table's colours taken from the photo's lower border only (the top of a tilted
    photo may show the room beyond the table), then from the border's commonest colour only (a
    lamp's pool of light at the border may match the light tiles), and then with the World's
    region being what differs from the table around it (a lamp's pool of light inside the photo),
    and last with what reaches in from the photo's edge set aside (a player's hand touching the
    World). The tries whose lattice or camera fell short, or whose lattice is neither likely nor
    even, are looked at again with a checked cloth's squares aside (find_world's squares_aside)
    once every try is done, then a last time, the squares still aside, trusting fewer edges (its
    last_look).
    A try whose lattice or camera fell short where the table shows a checked cloth's squares
    (LatticeFellShortError.on_checks) gets its squares' look straight away: there every try falls
    short alike, and the first one's second look finds the World (BENCHMARKS.md, session 76). A
    working image's straight edges (within a box around a small World) and gradients are found in
    the background while its colour model is learnt. The first reason a try found no colour model,
    or no lattice, is kept in `failures` ("colours", "geometry")."""
    again = []                              # (working image, colours, segments, looks still to take)
    for work_image, box, colours in _colour_models(image, profile, background):
        if isinstance(colours, NoWorldFoundError):
            failures.setdefault("colours", colours)
            continue
        segments = background.straight_edges(work_image, box).result()
        try:
            located = _located(work_image, colours, segments, profile)
        except NoWorldFoundError as exc:
            failures.setdefault("geometry", exc)
            if isinstance(exc, NoTileReadError):
                continue
            squares_now = isinstance(exc, LatticeFellShortError) and exc.on_checks
            again.append((work_image, colours, segments, ("last",) if squares_now else ("squares", "last")))
            if not squares_now:
                continue
            try:
                located = _located(work_image, colours, segments, profile, **LOOKS["squares"])
            except NoWorldFoundError:
                continue
        else:
            if not (_likely(located) and _even(located)):
                again.append((work_image, colours, segments, ("squares", "last")))
        yield located
    for look in LOOKS:
        for work_image, colours, segments, looks in again:
            if look not in looks:
                continue
            try:
                yield _located(work_image, colours, segments, profile, **LOOKS[look])
            except NoWorldFoundError:
                continue


def _likely(located: LocatedWorld) -> bool:
    """Whether the first read of a lattice finds a likely number of tiles (LIKELY_FIRST_TILES), and,
    where that is fewer than the opening diamond's, on MIN_EVIDENCE of edges at least: of the three
    lattices taken on fewer edges with two or three tiles read on 1,368 photos, two were not the
    World (fresh 114 s043: a pile of spare tiles beside the opening diamond; BENCHMARKS.md, session
    78); and then not on a colour model that found one tile colour (`one_tile_colour`): its region
    and edges were those of the tiles it saw (fresh 133 s049: the dark room beyond a grey cloth
    learnt as a table colour, so that the black tiles were table; three tiles read, where the lower
    border's try reads the 39; BENCHMARKS.md, session 82). Nor is a lattice read on a colour model
    with a tile colour off its hint (ColourModel.tile_colour_off_its_hint: fresh 140 s034, 13 tiles
    read of 32 with lit felt as the black tiles' colour, where the lower border's try reads them all;
    BENCHMARKS.md, session 85)."""
    if located.colours.tile_colour_off_its_hint():
        return False
    first_read = len(located.first.tiles)
    if first_read >= OPENING_TILES:
        return _likely_tiles(first_read)
    return (_likely_tiles(first_read) and located.geometry.edge_evidence >= MIN_EVIDENCE
            and not located.one_tile_colour)


def _likely_tiles(first_read: int) -> bool:
    fewest, most = LIKELY_FIRST_TILES
    return fewest <= first_read <= most


def _even(located: LocatedWorld) -> bool:
    return located.geometry.largest_family_share() <= ONE_FAMILY_SHARE


def _located(work_image: LoadedImage, colours: ColourModel, segments, profile, last_look=False,
             squares_aside=False) -> LocatedWorld:
    """The World found on a working image's straight edges with its colour model, and its first
    tile read (find_world with the look's `last_look` and `squares_aside`, _first_tile_pass);
    NoWorldFoundError when there is none. A lattice on fewer edges than MIN_EVIDENCE (as the last
    look and a checked cloth's perspective allow) is a World only if its first read finds a likely
    number of tiles: crops of photos away from their World show such lattices on spare tile piles
    or reserve discs, each with one tile read."""
    geo = find_world(segments, colours, profile, work_image.size, work_image.scale, last_look, squares_aside)
    cells, edges, outline, first, one_tile_colour = _first_tile_pass(colours, geo)
    if not first.tiles:
        raise NoTileReadError(NO_TILE_READ)
    if geo.edge_evidence < MIN_EVIDENCE and not _likely_tiles(len(first.tiles)):
        raise NoWorldFoundError(FEW_EDGES_FEW_TILES)
    return LocatedWorld(work_image, colours, geo, cells, edges, outline, first, one_tile_colour)


class _Background:
    """What locate_world has found in the background, each once: the straight edges of a working
    image (within a box), and its gradients (find_world and the EdgeMap read them)."""

    def __init__(self):
        self.pool = ThreadPoolExecutor(max_workers=2)
        self.submitted = {}

    def straight_edges(self, work_image: LoadedImage, box=None):
        """The future of straight_edges(work_image.gray, box)."""
        return self._submit(("edges", id(work_image), box), work_image, straight_edges, work_image.gray, box)

    def gradients(self, work_image: LoadedImage):
        """The future of the work image's gradients (they stay cached on it)."""
        return self._submit(("gradients", id(work_image)), work_image, _gradients, work_image)

    def close(self):
        """Drop what has not started (the edges of an image not needed after all)."""
        self.pool.shutdown(wait=False, cancel_futures=True)

    def _submit(self, key, work_image, fn, *args):
        if key not in self.submitted:      # (with the image, so that its id is not reused)
            self.submitted[key] = (work_image, self.pool.submit(fn, *args))
        return self.submitted[key][1]


def _gradients(image: LoadedImage):
    """Make the working image's gradients (they stay cached on it)."""
    return image.lightness_gradient, image.colour_gradients


def _colour_models(image, profile, background: _Background):
    """(working image, box, its colour model) in the order locate_world tries them, with the error
    that says why in place of a colour model that could not be learnt: the table's colours from the
    whole border, then from its lower part, then from the border's commonest colour, then from the
    whole border with the region set apart from the table's colour around it, then from the whole
    border with what reaches in from the photo's edge set aside (TABLE_SOURCES);
    for each, the photo's working image and a finer one (the finer first when the World is small,
    its straight edges looked for only in the box around the region standing out from the table
    (_around); none when the photo is no larger). The working image's straight edges are started
    in the `background` first, and a working image's edges and gradients as soon as it is known
    to come next."""
    detail = None
    for table_from in TABLE_SOURCES:
        background.straight_edges(image)
        try:
            table = find_table(image, table_from)
        except NoWorldFoundError as exc:
            yield image, None, exc
            continue
        small, box = _world_is_small(table.regions[0]), None
        if small:
            detail = detail or image.with_work_side(DETAIL_LONG_SIDE)
            box = _around(table.regions, image, detail)
        for fine in ((True, False) if small else (False, True)):
            if not fine:
                background.gradients(image)
                yield image, None, _colour_model(image, profile, table_from, table)
                continue
            detail = detail or image.with_work_side(DETAIL_LONG_SIDE)
            if detail is not image:
                background.straight_edges(detail, box)
                background.gradients(detail)
                yield detail, box, _colour_model(detail, profile, table_from)


def _colour_model(image, profile, table_from: str, table=None):
    """find_colours' model of the image's working image, or the NoWorldFoundError it raised."""
    try:
        return find_colours(image, profile, table_from, table)
    except NoWorldFoundError as exc:
        return exc


def _first_tile_pass(colours, geo):
    """(cells, edges, outline, tiles, one tile colour) of the tile cells read before the stacks are
    known, growing the candidate cells until the World's outline is inside them. When the tiles read
    are all of one colour and a table colour is the other's (ColourModel.tile_colour_from_table),
    they are read again with that colour as the other tile colour, and the last is True."""
    edges = EdgeMap(colours)
    cells, outline, first = _grown_tile_read(colours, geo, edges)
    one_tile_colour = colours.tile_colour_from_table()
    if one_tile_colour:
        cells, outline, first = _grown_tile_read(colours, geo, edges)
    return cells, edges, outline, first, one_tile_colour


def _grown_tile_read(colours, geo, edges):
    """(cells, outline, tiles) of one first read (see _first_tile_pass); NoTileReadError when it
    holds more than FIRST_READ_TILES_MAX tiles (the colour model takes the table for tiles; reading
    on would cut a stack crop from every one of its thousands of cells)."""
    cells = candidate_cells(colours, geo)
    for attempt in range(3):
        outline = outline_support(edges, geo, cells)
        first = read_tiles(colours, geo, cells, outline)
        if len(first.tiles) > FIRST_READ_TILES_MAX:
            raise NoTileReadError(TABLE_READ_AS_TILES)
        wanted = set(first.tiles) | ring(first.tiles) | ring(ring(first.tiles))
        if wanted <= set(cells) or attempt == 2:
            break
        cells = sorted(set(cells) | wanted)
    return cells, outline, first


SMALL_WORLD = 0.3
AROUND_SMALL_WORLD = 0.5         # of a small World's span: the margin in which its straight edges are looked for


def _kept_world(tiles: TileReading) -> tuple:
    """(the World's tile cells, kept to a set's tiles (keep_tiles_to_the_set); the tile cells set
    aside beside it (_world_cells)) of the final tile reading. A World of far more tiles than a set
    has (WORLD_TILES_MAX) is the table read as tiles: no World found, rather than a set's worth of
    them kept from it; so is a World of fewer tiles than any World holds (FEWEST_WORLD_TILES: a pile
    of spare tiles, or a tile beside the table, where a photo shows no World; BENCHMARKS.md, session 83)."""
    world, ignored = _world_cells(tiles.tiles)
    if not world:
        raise NoTileReadError(NO_TILE_READ)
    if len(world) < FEWEST_WORLD_TILES:
        raise NoTileReadError(ONE_TILE_READ)
    if len(world) > WORLD_TILES_MAX:
        raise NoTileReadError(TABLE_READ_AS_TILES)
    return keep_tiles_to_the_set(tiles, world), ignored


def _stacks_beyond(colours, geo, profile, tiles: TileReading, world: set, edges, stacks: StackReading) -> StackReading:
    """The stacks two steps from the `world` beyond a cell of its perimeter that the tile networks
    doubt is bare (MISSED_TILE_CHANCE of a tile or more): every off-World stack touches a tile, so
    where one stands that cell holds a missed tile (a white tile on a light cloth; fresh 82 s016)."""
    perimeter = ring(world)
    doubtful = {c for c in perimeter if tiles.chances.get(c, 0.0) >= MISSED_TILE_CHANCE}
    return read_stacks(colours, geo, profile, sorted(ring(doubtful) - world - perimeter), tiles.tiles, edges, stacks)


def _world_is_small(world_mask: np.ndarray) -> bool:
    """Whether the likely World (its region's mask) spans under SMALL_WORLD of the photo (tiles then
    are only a few dozen working pixels wide: too few for straight edges and stack outlines)."""
    ys, xs = np.nonzero(world_mask[::2, ::2])
    if not len(xs):
        return False
    span = max(np.ptp(xs), np.ptp(ys)) * 2
    return span < SMALL_WORLD * max(world_mask.shape)


def _around(regions: list, image: LoadedImage, detail: LoadedImage) -> tuple:
    """(x0, y0, x1, y1): the box in `detail`'s working image around the first of the regions
    (masks of `image`'s) and those near it (a World whose dark tiles match the table splits into
    pieces), with a margin of AROUND_SMALL_WORLD of their span on every side."""
    def grown(box):
        x0, y0, x1, y1 = box
        margin = AROUND_SMALL_WORLD * max(x1 - x0, y1 - y0)
        return x0 - margin, y0 - margin, x1 + margin, y1 + margin

    boxes = [(x, y, x + w, y + h) for x, y, w, h in map(cv2.boundingRect, regions)]
    near = grown(boxes[0])
    kept = [b for b in boxes if b[0] < near[2] and near[0] < b[2] and b[1] < near[3] and near[1] < b[3]]
    x0, y0, x1, y1 = grown((min(b[0] for b in kept), min(b[1] for b in kept),
                            max(b[2] for b in kept), max(b[3] for b in kept)))
    f = detail.scale / image.scale
    height, width = detail.work.shape[:2]
    return (max(0, int(x0 * f)), max(0, int(y0 * f)),
            min(width, int(np.ceil(x1 * f))), min(height, int(np.ceil(y1 * f))))


def _world_cells(tiles: dict):
    """(World cells, ignored cells): the largest group of tiles that holds the opening diamond's
    two tiles of each colour (every World does, tiles are never taken away; the largest group
    when none does), plus any group of at least three tiles of both colours within one empty cell
    of it (kept, and flagged as a disconnected World by the sanity check). Groups farther away,
    groups of one or two tiles, none of which can touch two others as every laid tile does
    (RULES.md §8.1), and groups of one colour (a leaning pile of spare tiles reads as a few cells of
    its top tiles' colour) are the supply or spare tiles, something beside the World read as a
    tile, or a cloth's light checks read as tiles: not part of the game."""
    groups = components(tiles)
    if not groups:
        return set(), set()
    whole = [g for g in groups
             if all(sum(tiles[c] == colour for c in g) >= OPENING_TILES_PER_COLOUR for colour in COLOURS)]
    main = (whole or groups)[0]
    world = set(main)
    near = ring(world) | ring(ring(world))
    ignored = set()
    for group in groups:
        if group is not main:
            kept = group & near and len(group) >= MIN_DETACHED_GROUP and len({tiles[c] for c in group}) > 1
            (world if kept else ignored).update(group)
    return world, ignored


def _origin(tiles: dict) -> tuple:
    """The tile nearest the World's centroid becomes (0, 0)."""
    if not tiles:
        return (0, 0)
    cells = sorted(tiles)
    xy = cells_to_plane(cells)
    i = int(np.argmin(np.linalg.norm(xy - xy.mean(0), axis=1)))
    return cells[i]

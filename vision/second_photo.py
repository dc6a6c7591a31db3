"""Stage 6: a second photo of the same table, from another side, read together with the first.

One photo reads about one stack in six a disc off (BENCHMARKS.md); another photo of the same
table, taken from another side at 35-60°, sees each stack's side anew. `combine_readings` puts the
second reading on the first one's lattice (the rotation and shift under which their tiles and their
stacks' tops agree) and, for every stack both photos show, multiplies the two photos' chances of
each height (and divides by the networks' own prior, which each photo's chances hold once): a
height both photos find likely wins, and a stack stays flagged only while the two together stay
unsure.
The first photo stays the reference: its World, its stacks and its image geometry (the overlay is
drawn on it); the second adds evidence where both see a stack, adds (flagged) a stack the first
photo missed where it was not sure of none, and settles what the two photos read differently: a
disc's colour and a tile's by the more confident read, a tile or none by the second's sure read
where the first's is unsure (and flagged where both are sure, for a third photo to settle).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import replace

from .errors import UnreadableImageError, VisionError
from .pipeline import analyze_photo, reading_warnings
from .reading import PhotoReading
from .sanity import warning_cells
from .stacks import StackRead, read_at_heights, top_pixel
from .tiles import CONFIDENT as TILE_CONFIDENT

MIN_AGREEMENT = 0.8     # the share of either photo's tiles the other must read on the same cell, and of those
                        # the share that must agree in colour
MIN_SHARED_TILES = 4    # the opening diamond; a World of fewer tiles (a set-up given as a position) must be
                        # shared whole
FLOOR = 0.01            # added to every height chance before multiplying: one photo's zero is not proof
HEIGHT_PRIOR = (0.635, 0.265, 0.076, 0.020, 0.003)   # heights 1..5 among a game's stacks as the stack networks
                        # read them before seeing a photo: the mean of their chances over the 1,508 stacks of
                        # the samples and dev renders (the truth's: 0.636, 0.287, 0.063, 0.013; BENCHMARKS.md,
                        # session 63)
KEPT_WARNINGS = ("ignored-tiles", "second-photo-unused")   # of the first reading's (which may hold an earlier
                        # photo's); the second photo answers "view-from-above"
DISPUTED = 0.5          # the confidence of a tile or none one photo reads sure and another sure otherwise
SURE_EMPTY = 0.99       # a stack only the second photo reads is added where the first photo's chance of no
                        # stack is under it (the four dev and fresh sets' second views: 3 such stacks under it,
                        # all true; 5 over it, 3 of them false; BENCHMARKS.md, sessions 63 and 64)


class DifferentWorldError(VisionError):
    """The second photo does not show the World of the first."""


def rotate(cell, k: int) -> tuple:
    """An axial cell turned by k * 60° about (0, 0).

    >>> rotate((1, 0), 1)
    (0, 1)
    """
    q, r = cell
    for _ in range(k % 6):
        q, r = -r, q + r
    return q, r


def place_second(first: dict, second: dict, first_tops: dict | None = None, second_tops: dict | None = None,
                 which: str = "the second photo") -> tuple:
    """(k, shift): the turn by k * 60° and the lattice shift that put the most of `second`'s tiles
    ({cell: colour}) on tiles of `first` of the same colour, the fewest on other cells, and as
    much of its stacks' tops (`second_tops`, {cell: top colour}) on `first_tops` of the same
    colour; raises DifferentWorldError, naming the second photo as `which`, when no placement
    makes the tiles agree. The stacks tell apart the placements a symmetric World allows: the
    opening diamond looks the same turned half round, its stacks do not.

    >>> first = {(0, 0): "white", (1, 0): "white", (0, 1): "black", (1, -1): "black", (2, -1): "white"}
    >>> place_second(first, {(3, 3): "white", (2, 4): "white", (2, 3): "black", (3, 4): "black", (2, 5): "white"})
    (4, (-3, 6))
    >>> diamond = {(0, 0): "white", (1, 0): "black", (0, 1): "black", (1, 1): "white"}
    >>> place_second(diamond, diamond, {(1, 0): "white"}, {(0, 1): "white"})     # half round, not as it is
    (3, (1, 1))
    """
    first_tops, second_tops = first_tops or {}, second_tops or {}
    best, best_score = None, None
    for k in range(6):
        turned = {rotate(c, k): col for c, col in second.items()}
        turned_tops = {rotate(c, k): col for c, col in second_tops.items()}
        shifts = Counter((a[0] - b[0], a[1] - b[1]) for a, ca in first.items()
                         for b, cb in turned.items() if ca == cb)
        for shift, _ in shifts.most_common(8):
            score = _agreement(first, turned, shift) + _agreement(first_tops, turned_tops, shift)
            if best_score is None or score > best_score:
                best, best_score = (k, shift), score
    if best is None:
        raise DifferentWorldError(f"{which} does not show the World of the first: "
                                  "their tiles have no colour in common")
    moved = {_move(c, best): col for c, col in second.items()}
    shared = [c for c in moved if c in first]
    agree = sum(1 for c in shared if first[c] == moved[c])
    if len(shared) < max(min(MIN_SHARED_TILES, len(first), len(second)), MIN_AGREEMENT * max(len(first), len(second))) \
            or agree < MIN_AGREEMENT * len(shared):
        raise DifferentWorldError(f"{which} does not show the World of the first: at best "
                                  f"{agree} of its {len(second)} tiles match the first photo's {len(first)}")
    return best


def _agreement(first: dict, turned: dict, shift) -> int:
    """How many of `turned`'s cells ({cell: colour}), moved by `shift`, fall on a cell of `first`
    of the same colour, less those that do not."""
    return sum(1 if first.get((c[0] + shift[0], c[1] + shift[1])) == col else -1 for c, col in turned.items())


def _move(cell, placement) -> tuple:
    k, (dq, dr) = placement
    q, r = rotate(cell, k)
    return q + dq, r + dr


def photo_name(k: int) -> str:
    """How messages name the k-th photo of a table (k >= 2).

    >>> photo_name(3), photo_name(7)
    ('the third photo', 'photo 7')
    """
    ordinals = {2: "second", 3: "third", 4: "fourth", 5: "fifth"}
    return f"the {ordinals[k]} photo" if k in ordinals else f"photo {k}"


def add_second_photo(first: PhotoReading, source, profile=None, lens=None, which="the second photo") -> PhotoReading:
    """`first` combined with the reading of another photo `source` (combine_readings), taken
    through `lens` if given (analyze_photo); `which` names that photo in messages (photo_name(3)
    when `first` already holds a second). A photo in which no World is found, or another
    World, leaves the reading as `first` has it, with a "second-photo-unused" warning that says
    why; one that is not an image we can read raises UnreadableImageError, saying which photo it is."""
    try:
        return combine_readings(first, analyze_photo(source, profile=profile, lens=lens), which)
    except UnreadableImageError as exc:
        exc.args = (f"{which}: {exc}",)
        raise
    except DifferentWorldError as exc:
        reason = str(exc)
    except VisionError as exc:
        reason = f"{which}: {exc}"
    return replace(first, warnings=first.warnings + [{"code": "second-photo-unused", "cells": [],
                                                      "message": f"{reason}; it was not used"}])


def combined_chances(first: StackRead, second: StackRead) -> tuple:
    """The chances of each height of a stack two photos show: the product of each photo's, divided
    by the chance the networks give each height before seeing a photo (HEIGHT_PRIOR). Each photo's
    chances hold that prior once; their bare product would count it twice and favour the commoner,
    lower heights. A photo that reads one disc at 0.65 says less for one disc than the prior
    (0.635 against 0.265) already did, so with another that reads two at 0.6 the stack holds two:

    >>> [round(p, 2) for p in combined_chances(StackRead((0, 0), 1, ["white"], "white", 0.65, 1.0, 0.65, True,
    ...     (0, 0), height_chances=(0.65, 0.35)), StackRead((0, 0), 2, ["white"] * 2, "white", 0.6, 1.0, 0.6, True,
    ...     (0, 0), height_chances=(0.4, 0.6)))]
    [0.34, 0.66]
    """
    n = max(len(first.height_chances), len(second.height_chances))
    a = list(first.height_chances) + [0.0] * (n - len(first.height_chances))
    b = list(second.height_chances) + [0.0] * (n - len(second.height_chances))
    prior = list(HEIGHT_PRIOR) + [0.0] * n
    product = [(x + FLOOR) * (y + FLOOR) / (prior[h] + FLOOR) for h, (x, y) in enumerate(zip(a, b))]
    return tuple(p / sum(product) for p in product)


def _tops(reading: PhotoReading) -> dict:
    return {c: st.top for c, st in reading.stacks.stacks.items()}


def settle_tiles(first: PhotoReading, tiles_again: dict, stacks_again: dict) -> tuple:
    """The first photo's TileReading with each cell the second photo reads too settled
    (`tiles_again` and `stacks_again`: the second photo's CellReads and StackReads by the first
    photo's cells). Two colours: the more confident read. A tile or none: the second photo's read
    where it is sure and the first's is not (CONFIDENT), and where a stack stands on the cell only
    if the second photo reads it on that base too; a sure read against a sure read stays as the
    first photo reads it, flagged (DISPUTED), for a user or a further photo to settle. A read
    both photos agree on is as sure as the surer. A settled cell is no longer one the first
    photo's reading mended (added, laid, dropped, unlike). Returns (tiles, the cells whose tile came or
    went under a stack)."""
    cells, settled_cells, rebased = dict(first.tiles.cells), set(), []
    for cell, again in tiles_again.items():
        here = cells.get(cell)
        if here is None:
            continue
        if here.colour == again.colour:
            settled = again.confidence >= TILE_CONFIDENT > here.confidence
        elif here.colour and again.colour:
            settled = again.confidence > here.confidence
        else:
            stack, stack_again = first.stacks.stacks.get(cell), stacks_again.get(cell)
            settled = here.confidence < TILE_CONFIDENT <= again.confidence and (
                stack is None or (stack_again is not None and stack_again.on_tile == bool(again.colour)))
            if settled and stack is not None:
                rebased.append(cell)
            if min(here.confidence, again.confidence) >= TILE_CONFIDENT:
                cells[cell] = replace(here, confidence=DISPUTED)
        if settled:
            cells[cell] = replace(here, colour=again.colour, confidence=again.confidence)
            settled_cells.add(cell)
    unsettled = lambda mended: [c for c in mended if c not in settled_cells]
    return replace(first.tiles, cells=cells, added=unsettled(first.tiles.added), laid=unsettled(first.tiles.laid),
                   dropped=unsettled(first.tiles.dropped), unlike=unsettled(first.tiles.unlike)), rebased


def _as_first_reads(first: PhotoReading, cell, st: StackRead, confidence: float) -> StackRead:
    """The second photo's read `st` of a stack, on the first photo's `cell` at its centre."""
    return replace(st, cell=cell, shift_mm=(0.0, 0.0), confidence=confidence,
                   top_pixel=top_pixel(first.geometry, first.profile, cell, st.height, st.on_tile))


def stacks_only_second_reads(first: PhotoReading, tiles: dict, stacks_again: dict) -> dict:
    """{cell: StackRead} of the stacks the second photo reads (`stacks_again`, by the first photo's
    cells) where the first reads none, on the base `tiles` ({cell: colour}) give the cell, and the
    first photo's stack networks were not sure there is none (a chance under SURE_EMPTY, or the
    cell not measured: hidden, or too faint). Each is as the second photo reads it, at its cell's
    centre in the first photo, and as sure as the first photo's chance of a stack there allows."""
    found = {}
    for cell, st in stacks_again.items():
        on_tile = cell in tiles
        chances = first.stacks.chances.get((cell, on_tile))
        if cell in first.stacks.stacks or on_tile != st.on_tile or (chances is not None and chances[0] >= SURE_EMPTY):
            continue
        sure = st.confidence if chances is None else min(st.confidence, round(1.0 - float(chances[0]), 3))
        found[cell] = _as_first_reads(first, cell, st, sure)
    return found


def settle_colours(st: StackRead, again: StackRead | None) -> StackRead:
    """The read `st` of a stack with its discs' colours the surer of its and the second photo's
    read `again` (None: the second photo does not read it): the top's, and where both read the
    stack at the same height, each disc's under it. A colour both read alike is as sure as the
    surer read.

    >>> first = StackRead((0, 0), 2, [None, "white"], "white", 0.4, 0.4, 0.9, True, (0, 0), side_confidences=(0.0,))
    >>> again = StackRead((0, 0), 2, ["white", "black"], "black", 0.9, 0.95, 0.9, True, (0, 0), side_confidences=(0.7,))
    >>> st = settle_colours(first, again)
    >>> st.discs, st.top_confidence, st.side_confidences
    (['white', 'black'], 0.95, (0.7,))
    """
    if again is None:
        return st
    top, top_confidence = _surer(st.top, st.top_confidence, again.top, again.top_confidence)
    discs, side_confidences = list(st.discs), list(st.side_confidences)
    if again.height == st.height:
        for k in range(st.height - 1):
            discs[k], side_confidences[k] = _surer(discs[k], side_confidences[k],
                                                   again.discs[k], again.side_confidences[k])
    discs[-1] = top
    return replace(st, top=top, discs=discs, top_confidence=top_confidence, side_confidences=tuple(side_confidences))


def _surer(colour, confidence, colour_again, confidence_again) -> tuple:
    """(colour, confidence) of the surer of two reads of one disc (None: unread); as sure as the
    surer read where both agree."""
    if colour_again is None:
        return colour, confidence
    if colour == colour_again:
        return colour, max(confidence, confidence_again)
    if colour is None or confidence_again > confidence:
        return colour_again, confidence_again
    return colour, confidence


def combine_readings(first: PhotoReading, second: PhotoReading, which: str = "the second photo") -> PhotoReading:
    """The first photo's reading with every stack the second photo also shows at the height both
    photos' chances together make likeliest (combined_chances, read_at_heights), the stacks only
    the second photo reads where the first was not sure of none (stacks_only_second_reads), the
    discs' colours by the surer read (settle_colours), and the cells the two read differently
    settled (settle_tiles; a stack whose tile came or went is the second photo's read). `which`
    names the second photo in the warning about the stacks only it shows, and in the
    DifferentWorldError raised when it shows another World."""
    placement = place_second(first.tiles.tiles, second.tiles.tiles, _tops(first), _tops(second), which)
    stacks_again = {_move(c, placement): st for c, st in second.stacks.stacks.items()}
    tiles, rebased = settle_tiles(first, {_move(c, placement): rd for c, rd in second.tiles.cells.items()},
                                  stacks_again)
    chances = {c: combined_chances(st, stacks_again[c]) for c, st in first.stacks.stacks.items()
               if c in stacks_again and c not in rebased}
    added = stacks_only_second_reads(first, tiles.tiles, stacks_again)
    stacks = {**first.stacks.stacks, **added,
              **{c: _as_first_reads(first, c, stacks_again[c], stacks_again[c].confidence) for c in rebased}}
    stacks = read_at_heights(replace(first.stacks, stacks=stacks), first.colours, first.geometry, first.profile,
                             chances, settle=lambda cell, st: settle_colours(st, stacks_again.get(cell)))
    warnings = reading_warnings(tiles, stacks, first.origin)
    if added:
        warnings.append({"code": "second-photo-only", "cells": warning_cells(first._public(c) for c in added),
                         "message": f"{len(added)} stack(s) only {which} shows; please check"})
    warnings += [w for w in first.warnings if w["code"] in KEPT_WARNINGS]
    return replace(first, tiles=tiles, stacks=stacks, warnings=warnings,
                   timing={**first.timing, "second_photo_s": first.timing.get("second_photo_s", 0.0)
                           + second.timing.get("total_s", 0.0)})

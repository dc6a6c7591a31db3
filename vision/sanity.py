"""Stage 5: rule-sanity checks on a reading (RULES.md §3, §14). Flags, never fixes."""
from __future__ import annotations

import rules
from rules.position import DISCS_PER_COLOUR, OPENING_TILES_PER_COLOUR, TOTAL_TILES

from .hexgrid import components, neighbours

MAX_ON_TILE, MAX_OFF_WORLD = 15, 14


def sanity_warnings(tiles: dict, stacks: dict, uncertain_tiles=(), uncertain_stacks=()) -> list[dict]:
    """Warnings for `tiles` {cell: colour} and `stacks` {cell: discs bottom..top}."""
    out = []
    for colour in rules.COLOURS:
        cells = sorted(c for c, d in stacks.items() if colour in d)
        n = sum(d.count(colour) for d in stacks.values())
        if n > DISCS_PER_COLOUR:
            out.append({"code": "too-many-discs", "colour": colour, "count": n, "cells": warning_cells(cells),
                        "message": f"{n} {colour} discs read; a set has {DISCS_PER_COLOUR}"})
    total = sum(len(d) for d in stacks.values())
    if total > 2 * DISCS_PER_COLOUR:
        out.append({"code": "too-many-discs", "colour": None, "count": total, "cells": warning_cells(stacks),
                    "message": f"{total} discs read; a set has {2 * DISCS_PER_COLOUR}"})
    if len(tiles) > TOTAL_TILES:
        out.append({"code": "too-many-tiles", "count": len(tiles), "cells": [],
                    "message": f"{len(tiles)} tiles read; a set has {TOTAL_TILES}"})
    groups = components(tiles)
    if len(groups) > 1:
        stray = sorted(c for g in groups[1:] for c in g)
        out.append({"code": "world-disconnected", "cells": warning_cells(stray),
                    "message": f"the World is not connected: {len(stray)} tile(s) cut off from the rest"})
    for colour in rules.COLOURS:
        n = sum(1 for c in tiles.values() if c == colour)
        if tiles and n < OPENING_TILES_PER_COLOUR:
            out.append({"code": "too-few-tiles", "colour": colour, "count": n, "cells": [],
                        "message": f"only {n} {colour} tile(s) read; every game has at least "
                                   f"{OPENING_TILES_PER_COLOUR}"})
    for cell, discs in sorted(stacks.items()):
        on_tile = cell in tiles
        if not on_tile and not any(n in tiles for n in neighbours(cell)):
            out.append({"code": "isolated-stack", "cells": warning_cells([cell]),
                        "message": f"the off-World stack at {list(cell)} touches no tile"})
        limit = MAX_ON_TILE if on_tile else MAX_OFF_WORLD
        if len(discs) > limit:
            out.append({"code": "stack-too-tall", "cells": warning_cells([cell]),
                        "message": f"a stack of {len(discs)} at {list(cell)}; at most {limit} can occur"})
    if uncertain_tiles:
        out.append({"code": "uncertain-tiles", "cells": warning_cells(uncertain_tiles),
                    "message": f"{len(uncertain_tiles)} cell(s) read with low confidence; please check"})
    if uncertain_stacks:
        out.append({"code": "uncertain-stacks", "cells": warning_cells(uncertain_stacks),
                    "message": f"{len(uncertain_stacks)} stack(s) read with low confidence; please check"})
    return out


def warning_cells(cells) -> list:
    """Cells as a warning names them: sorted [q, r] lists."""
    return [list(c) for c in sorted(cells)]

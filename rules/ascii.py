"""ASCII hex map of a position (``python -m rules show``).

Each cell is a 3-character token; a row of cells is drawn with cells 4 characters apart and
each next row shifted by 2, so that the six neighbours of a cell sit around it as on the table.
Token: tile ``w``/``b`` (or ``-`` for an off-World cell holding a stack), then, if the cell holds
a stack, its height and its top disc ``W``/``B``: ``b2W`` is a black tile under a 2-stack topped
by a white disc.

>>> from rules import Position
>>> print(render_ascii(Position.standard()))
r=-1   b
r= 0 w   w
r= 1   b
to move: white   supply: 35/39   reserves: white 8, black 8   score: white 4, black 3
"""

from .engine import score
from .geometry import decode, encode

TILE = {"white": "w", "black": "b"}
DISC = {"white": "W", "black": "B", None: "?"}


def _token(pos, code):
    tile = TILE[pos._tiles[code]] if code in pos._tiles else "-"
    discs = pos._stacks.get(code)
    if discs is None:
        return tile
    return f"{tile}{len(discs)}{DISC[discs[-1]]}"


def render_ascii(pos):
    """The hex map of ``pos`` with a status line and, if any, the stacks bottom to top."""
    cells = [decode(c) for c in set(pos._tiles) | set(pos._stacks)]
    left = min(4 * q + 2 * r for q, r in cells)
    rows = sorted({r for _, r in cells})
    lines = []
    for row in rows:
        line = ""
        for q, r in sorted(c for c in cells if c[1] == row):
            column = 4 * q + 2 * r - left
            line = line.ljust(column) + _token(pos, encode(q, r))
        lines.append(f"r={row:2d} " + line.rstrip())
    scores = score(pos)
    to_move = pos.to_move or "unknown"
    status = (f"to move: {to_move}   supply: {pos.tiles_left}/{pos.total_tiles}   reserves: "
              f"white {pos._reserves['white']}, black {pos._reserves['black']}   "
              f"score: white {scores['white']}, black {scores['black']}")
    if pos.passes:
        status += f"   passes: {pos.passes}"
    if pos.setup_tiles_left:
        status += f"   set-up tiles to lay: {pos.setup_tiles_left}"
    lines.append(status)
    tall = [(cell, discs) for cell, discs in sorted(pos.stacks.items()) if len(discs) > 1]
    if tall:
        lines.append("stacks, bottom to top: " + "  ".join(
            f"{q},{r} {''.join(DISC[d] for d in discs)}" for (q, r), discs in tall))
    return "\n".join(lines)

"""Hex lattice geometry: axial cells, the six directions and their internal integer codes.

Public cells are ``(q, r)`` tuples (pointy-topped hexes, axial coordinates).  Inside the engine a
cell is one integer, ``q * STRIDE + r``, so that a step in a direction is one integer addition
(``code + DELTAS[d]``) and integer order equals ``(q, r)`` order.  Coordinates are limited to
``|q|, |r| <= MAX_COORD`` so that the encoding is one-to-one.

>>> DIRECTIONS[0], STEPS[0]
('E', (1, 0))
>>> decode(encode(-3, 7))
(-3, 7)
>>> decode(encode(2, 0) + DELTAS[DIRECTION_INDEX['NW']])
(2, -1)
>>> neighbours((0, 0))
((1, 0), (0, 1), (-1, 1), (-1, 0), (0, -1), (1, -1))
"""

DIRECTIONS = ("E", "SE", "SW", "W", "NW", "NE")
DIRECTION_INDEX = {name: index for index, name in enumerate(DIRECTIONS)}
STEPS = ((1, 0), (0, 1), (-1, 1), (-1, 0), (0, -1), (1, -1))

STRIDE = 1 << 16
MAX_COORD = 10_000
DELTAS = tuple(dq * STRIDE + dr for dq, dr in STEPS)

_decoded = {}


def encode(q, r):
    """The integer code of cell ``(q, r)``."""
    return q * STRIDE + r


def decode(code):
    """The ``(q, r)`` tuple of an integer cell code (memoised: the same tuple object each time)."""
    cell = _decoded.get(code)
    if cell is None:
        r = (code + STRIDE // 2) % STRIDE - STRIDE // 2
        cell = _decoded[code] = ((code - r) // STRIDE, r)
    return cell


def neighbours(cell):
    """The six neighbours of ``cell`` in direction order E, SE, SW, W, NW, NE."""
    q, r = cell
    return tuple((q + dq, r + dr) for dq, dr in STEPS)

"""Heights fitted to a disc count: the players know their reserves, the photo does not.

A stack's height is what a photo misreads most (one disc from straight above is under 2 pixels of
parallax). The discs not in the reserves are all on the table, so when the players count their
reserves the heights must add up to 16 minus those: of the readings that do, the one the stack
networks found likeliest is chosen (each stack's ``height_chances``). Only a reading whose heights
do not add up changes; on the dev renders this leaves more photos with every height right.
"""
from __future__ import annotations

import math

from rules.position import COLOURS, DISCS_PER_COLOUR

from .errors import VisionError

FITTED_CONFIDENCE = 0.5     # at most, of a stack whose height the count changed: the user should look
UNLIKELY = 1e-4             # the chance taken for a height the network gave (rounded) 0


class FitError(VisionError):
    """The reserves cannot be met by the stacks read (too few or too many discs, or colours)."""


def fit_heights(position: dict, reserves: dict) -> tuple[dict, list]:
    """(the position with its stacks' heights fitted to ``reserves``, the changed stacks as
    ``[{"at": [q, r], "read": h, "height": h2}]``, with ``"unread": n`` where n side colours were
    read beyond the discs of that colour on the table and are now left unread). Stacks that carry
    ``height_chances`` (vision's chances of heights 1, 2, ...) may change height; the others
    (corrected by hand) keep theirs. A stack made taller gets a disc of unknown colour under its
    top, one made lower loses the disc under its top (as the page's − and + do). Changed stacks are
    flagged (confidence at most FITTED_CONFIDENCE); the reserves are written into the position, with
    ``"reserves_counted": true`` (its unsure heights are then a disc moved between stacks,
    rules.dances_a_disc_moved, not a disc more or less).

    >>> stacks = [{"q": 0, "r": 0, "discs": ["white"], "height_chances": [0.6, 0.4]},
    ...           {"q": 1, "r": 0, "discs": ["black"], "height_chances": [0.9, 0.1]}]
    >>> fitted, changes = fit_heights({"stacks": stacks}, {"white": 6, "black": 7})
    >>> [s["discs"] for s in fitted["stacks"]], changes
    ([[None, 'white'], ['black']], [{'at': [0, 0], 'read': 1, 'height': 2}])
    """
    wanted = _discs_on_table(reserves)
    stacks = list(position.get("stacks") or [])
    chances = {k: c for k, s in enumerate(stacks) if (c := _chances(s))}   # the stacks free to change
    fixed = sum(len(s["discs"]) for k, s in enumerate(stacks) if k not in chances)
    heights = _likeliest_heights(list(chances.values()), wanted - fixed)
    if heights is None:
        lowest = fixed + len(chances)
        highest = fixed + sum(map(len, chances.values()))
        raise FitError(f"with {reserves['white']} white and {reserves['black']} black discs in reserve, "
                       f"{_discs(wanted)} on the table, but the {len(stacks)} stacks read hold "
                       f"{'at least ' + str(lowest) if wanted < lowest else 'at most ' + str(highest)}: "
                       "check the reserves, or add or remove the stacks that are wrong")
    fitted = [{**s, "discs": list(s["discs"])} for s in stacks]
    changed = {}
    for k, height in zip(chances, heights):
        read = len(fitted[k]["discs"])
        if height != read:
            discs = fitted[k]["discs"]
            if height > read:
                discs[-1:-1] = [None] * (height - read)
            else:
                del discs[len(discs) - 1 - (read - height):-1]
            changed[k] = {"at": [fitted[k]["q"], fitted[k]["r"]], "read": read, "height": height}
    for colour in COLOURS:
        changed.update(_unread_side_colours(fitted, colour, DISCS_PER_COLOUR - reserves[colour], changed))
    for k in changed:
        fitted[k].update(height=len(fitted[k]["discs"]),
                         confidence=min(fitted[k].get("confidence", 1.0), FITTED_CONFIDENCE))
    changes = [changed[k] for k in sorted(changed)]
    return {**position, "stacks": fitted, "reserves": dict(reserves), "reserves_counted": True}, changes


def _unread_side_colours(stacks: list, colour: str, on_table: int, changed: dict) -> dict:
    """The changes that leave unread the side colours of ``colour`` read beyond the ``on_table``
    discs of it (a side's colour is read less surely than a top's), lowest first, in the least sure
    stacks first; FitError when the tops alone are more."""
    out = {}
    known = sum(s["discs"].count(colour) for s in stacks)
    tops = sum(s["discs"][-1] == colour for s in stacks)
    if tops > on_table:
        raise FitError(f"{tops} stacks have a {colour} top, but with {DISCS_PER_COLOUR - on_table} {colour} "
                       f"discs in reserve {_discs(on_table)} on the table: check the reserves or the stacks' colours"
                       + _least_sure_tops(stacks, colour, tops - on_table))
    for k in sorted(range(len(stacks)), key=lambda k: stacks[k].get("confidence", 1.0)):
        discs = stacks[k]["discs"]
        for d in range(len(discs) - 1):
            if known > on_table and discs[d] == colour:
                discs[d] = None
                known -= 1
                change = out.setdefault(k, dict(changed.get(k) or {"at": [stacks[k]["q"], stacks[k]["r"]],
                                                                   "read": len(discs), "height": len(discs)}))
                change["unread"] = change.get("unread", 0) + 1
    return out


def _least_sure_tops(stacks: list, colour: str, n: int) -> str:
    """Where to look first: the ``n`` stacks with a ``colour`` top read least surely (``top_confidence``,
    else ``confidence``: the page sends no top's own); stacks corrected by hand carry neither."""
    sure = lambda s: s.get("top_confidence", s.get("confidence"))
    doubtful = sorted((c, s["q"], s["r"]) for s in stacks
                      if s["discs"][-1] == colour and isinstance(c := sure(s), (int, float)) and c < 1)
    if not doubtful:
        return ""
    return " (the least sure of them: " + "; ".join(f"{q},{r}" for _, q, r in doubtful[:n]) + ")"


def _discs(n: int) -> str:
    return "1 disc is" if n == 1 else f"{n} discs are"


def _discs_on_table(reserves) -> int:
    if not isinstance(reserves, dict) or set(reserves) != set(COLOURS):
        raise FitError('reserves must give the discs of "white" and of "black" off the table')
    for colour in COLOURS:
        n = reserves[colour]
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= DISCS_PER_COLOUR:
            raise FitError(f"the {colour} reserve must be a whole number 0..{DISCS_PER_COLOUR}, not {n!r}")
    return 2 * DISCS_PER_COLOUR - sum(reserves.values())


def _chances(stack: dict) -> list | None:
    chances = stack.get("height_chances")
    if not isinstance(chances, list) or not chances:
        return None
    return [max(float(p), UNLIKELY) if isinstance(p, (int, float)) else UNLIKELY for p in chances]


def _likeliest_heights(chances: list, total: int) -> list | None:
    """The heights (1..len(chances[k]) each) adding up to ``total`` whose chances multiply to
    the most, or None if none do: a dynamic programme over the stacks and the discs so far."""
    best = {0: (0.0, [])}
    for p in chances:
        step = {}
        for so_far, (log_chance, heights) in best.items():
            for height in range(1, len(p) + 1):
                discs = so_far + height
                if discs > total:
                    break
                value = log_chance + math.log(p[height - 1])
                if discs not in step or value > step[discs][0]:
                    step[discs] = (value, heights + [height])
        best = step
    return best[total][1] if total in best else None

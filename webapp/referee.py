"""The referee's answer: vision reads a photo, rules say what is forced and what the score is.

This module is the only place where the web app calls ``vision`` and ``rules``.
"""

import ctypes
import math

import rules
import vision
from flask import current_app

from .errors import InputError, sentence

COLOURS = rules.COLOURS
MAX_ITEMS = 100   # tiles or stacks in a position sent to us
OVERLAY_RING = 3  # cells this far from the World get pixel centres: room to correct and to outline
UNSURE_BELOW = vision.STACK_CONFIDENT   # a stack read with less confidence is unsure (marked on the page)


def _malloc_trim():
    """glibc's malloc_trim, or None where the C library has none (or the process's symbols cannot
    be loaded)."""
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, TypeError, AttributeError):
        return None


_MALLOC_TRIM = _malloc_trim()


def return_freed_memory():
    """Give the memory a photo's reading has freed back to the system. glibc keeps what each
    request thread freed for that thread to reuse, so a server whose threads take turns reading
    photos grows to about twice the memory of one that hands it back (BENCHMARKS.md, "Web app");
    without glibc nothing is done."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


def parse_position(obj):
    """Position JSON -> rules.Position, or InputError 422 naming what is wrong."""
    if not isinstance(obj, dict):
        raise InputError("A position must be a JSON object (exxit-position/1).", "bad_position", 422)
    for field in ("tiles", "stacks"):   # a set has 39 tiles: refuse huge lists before parsing them
        if isinstance(obj.get(field), list) and len(obj[field]) > MAX_ITEMS:
            raise InputError(f"Invalid position: {len(obj[field])} {field} (a set has 39 tiles).",
                             "bad_position", 422)
    try:
        return rules.position_from_json(obj)
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise InputError(f"Invalid position: {exc}", "bad_position", 422)


def _preview(pos, move, colour):
    """The position after ``move`` with its score and the opponent's forced reply, if computable."""
    try:
        after = rules.apply_move(pos.with_to_move(colour), move)
    except (rules.IllegalMoveError, rules.PositionError) as exc:
        return {"unknown": str(exc)}
    replies = [] if after.is_game_over() else rules.forced_dances(after, after.to_move)
    return {
        "position": rules.position_to_json(after),
        "score": rules.score(after),
        "game_over": after.is_game_over(),
        "next_side": after.to_move,
        "next_dances": [_dance_json(d) for d in replies],
    }


def _build_moves(pos, colour):
    """The moves ``colour`` may make when it has no forced dance (enlarge, place, pass)."""
    return [{**rules.move_to_json(move), "text": move.text} for move in rules.legal_moves(pos.with_to_move(colour))]


def _priority_note(pos, colour, forced):
    """One line when the perimeter priority (RULES.md 7.4) removed some of ``colour``'s dances."""
    if not forced or not forced[0].perimeter:
        return None
    dropped = len(rules.all_dances(pos, colour)) - len(forced)
    if not dropped:
        return None
    return (f"Perimeter priority: a dance that drops discs off the World must come first, "
            f"so {dropped} other dance{'s' if dropped > 1 else ''} "
            f"{'are' if dropped > 1 else 'is'} not allowed.")


def _dance_json(dance):
    """A dance as FORMATS.md writes it, with its notation (``text``) for the page."""
    return {**rules.dance_to_json(dance), "text": dance.text}


def _unsure_heights(position_json, pos):
    """The stacks read with low confidence (under UNSURE_BELOW) whose height decides the answer,
    and the forced dances they would then give: each with a disc more or less
    (rules.dances_a_disc_off), or, when the players counted their reserves (``reserves_counted``:
    the heights keep their sum), a disc of one on another (rules.dances_a_disc_moved: ``to``)."""
    unsure = [(s["q"], s["r"]) for s in position_json.get("stacks") or []
              if isinstance(s.get("confidence"), (int, float)) and s["confidence"] < UNSURE_BELOW]
    dances_json = lambda dances: {c: [_dance_json(d) for d in dances[c]] for c in COLOURS}
    if position_json.get("reserves_counted") is True:
        return [{"at": list(a), "read": len(pos.stacks[a]), "height": len(pos.stacks[a]) - 1,
                 "to": {"at": list(b), "read": len(pos.stacks[b]), "height": len(pos.stacks[b]) + 1},
                 "forced_dances": dances_json(dances)}
                for a, b, dances in rules.dances_a_disc_moved(pos, unsure)]
    return [{"at": list(cell), "read": len(pos.stacks[cell]), "height": height,
             "forced_dances": dances_json(dances)}
            for cell, height, dances in rules.dances_a_disc_off(pos, unsure)]


def answer(position_json):
    """The rules analysis of FORMATS.md for a position, enriched for the page.

    Every dance gets ``text`` (move notation) and ``after`` (a preview); per colour,
    ``priority`` explains a decisive perimeter priority and ``build_moves`` lists the moves when no
    dance is forced; ``winner`` is who leads now (who wins when ``game_over``), or "draw";
    ``unsure_heights`` names the doubtful stacks a disc more or less on which would change the
    forced dances, and what they would then be.
    """
    pos = parse_position(position_json)
    result = rules.analyze(pos)
    result["priority"] = {}
    result["build_moves"] = {}
    for colour in COLOURS:
        forced = rules.forced_dances(pos, colour)
        result["forced_dances"][colour] = [{**_dance_json(d), "after": _preview(pos, d, colour)} for d in forced]
        result["priority"][colour] = _priority_note(pos, colour, forced)
        result["build_moves"][colour] = [] if forced else _build_moves(pos, colour)
    result["winner"] = rules.winner(result["score"]) or "draw"
    result["unsure_heights"] = _unsure_heights(position_json, pos)
    return result


def fit_to_reserves(body):
    """``{"position", "reserves"}`` -> ``{"position", "changes"}``: the stacks' heights fitted to the
    discs the players count in their reserves (vision.fit_heights), as a position that can occur;
    InputError 400 for a malformed body, 422 when the reserves cannot be met."""
    if not isinstance(body, dict) or not isinstance(body.get("position"), dict):
        raise InputError('Send {"position": POSITION, "reserves": {"white": W, "black": B}}.', "bad_body", 400)
    position = body["position"]
    pos = parse_position({**position, "reserves": None})    # well formed, whatever its reserves
    stacks = [{**s, "discs": list(pos.stacks[(s["q"], s["r"])])} for s in position.get("stacks") or []]
    try:
        fitted, changes = vision.fit_heights({**position, "stacks": stacks}, body.get("reserves"))
    except vision.FitError as exc:
        raise InputError(sentence(str(exc)), "reserves_not_met", 422)
    parse_position(fitted)
    return {"position": fitted, "changes": changes}


def has_forced_dance(position_json):
    """Whether either side has a forced dance in a position (False if it cannot occur)."""
    try:
        pos = rules.position_from_json(position_json)
    except (ValueError, TypeError, KeyError, AttributeError):
        return False
    return any(rules.forced_dances(pos, colour) for colour in COLOURS)


def answer_or_problem(position_json):
    """(answer, None), or (None, message) when the position cannot occur (a misread photo)."""
    try:
        return answer(position_json), None
    except InputError as error:
        return None, error.message.removeprefix("Invalid position: ")


def _profile():
    name = current_app.config["VISION_PROFILE"]
    return None if name is None else vision.load_profile(name)


def _lens():
    camera = current_app.config["VISION_CAMERA"]
    return None if camera is None else vision.load_lens(camera)


def camera_photo_size():
    """(width, height) of the photos the configured camera file was measured on, None without one:
    the page's live camera asks for frames of that shape, which the lens fits."""
    lens = _lens()
    return None if lens is None else lens.image_size


def no_world_error(reason, which="this photo"):
    """The 422 for a photo without an EXXIT World: what vision saw, and how to take a better one."""
    return InputError(f"No EXXIT World found in {which} ({reason}). Take the photo from a "
                      "player's seat with the whole World in view, in good light.", "no_world", 422)


def _read(bgr, others_bgr=()):
    """Vision's reading of a photo, combined with other photos of the same table (second, third,
    ...) when given: (reading JSON, the reading itself); vision's errors as 4xx."""
    reading = _analyze(bgr, "this photo")
    for k, other in enumerate(others_bgr, start=2):
        which = vision.photo_name(k)
        try:
            reading = vision.combine_readings(reading, _analyze(other, which), which)
        except vision.DifferentWorldError as exc:
            raise InputError(f"{sentence(str(exc))} Photograph the same table from another side.",
                             "different_world", 422)
    return reading.to_json(), reading


def _analyze(bgr, which):
    try:
        return vision.analyze_photo(bgr, profile=_profile(), lens=_lens())
    except vision.NoWorldFoundError as exc:
        raise no_world_error(str(exc).removeprefix("no EXXIT World found: "), which)
    except vision.UnreadableImageError as exc:
        raise InputError(sentence(str(exc)), "unreadable_image", 400)
    except vision.VisionError as exc:
        raise InputError(sentence(str(exc)), "unreadable_photo", 422)
    except Exception:  # a photo vision cannot cope with must not become a 500
        current_app.logger.exception("vision failed on a photo")
        raise InputError(f"{sentence(which + ' could not be read')} Try another angle or better light.",
                         "vision_failed", 422)


def _cells_near(cells, ring):
    near = set(cells)
    frontier = set(cells)
    for _ in range(ring):
        frontier = {n for cell in frontier for n in rules.neighbours(cell)} - near
        near |= frontier
    return near


def _key(cell):
    return f"{cell[0]},{cell[1]}"


def _pixels(cells, to_pixel):
    """{"q,r": [x, y]} for the cells whose pixel is finite (a cell far off may project nowhere)."""
    found = {}
    for cell in sorted(cells):
        x, y = (float(v) for v in to_pixel(cell))
        if math.isfinite(x) and math.isfinite(y):
            found[_key(cell)] = [round(x, 1), round(y, 1)]
    return found


def photo_overlay(reading, width, height):
    """Pixel geometry for drawing on the photo: cell centres near the World and around every cell a
    warning names (a tile set aside further out, to mark), and stack tops."""
    stacks = set(reading.stack_discs)
    cells = _cells_near(set(reading.tile_colours) | stacks, OVERLAY_RING) | _cells_near(reading.named_cells, 1)
    return {
        "width": width,
        "height": height,
        "cells": _pixels(cells, reading.cell_to_pixel),
        "tops": _pixels(stacks, reading.stack_top_pixel),
    }


def read_photo(photo, to_move=None, others=()):
    """Photo (and other photos of the same table, from other sides) -> (reading JSON, overlay,
    position JSON); at most CONCURRENT_ANALYSES at once."""
    try:
        with current_app.extensions["analysis_slots"]:
            reading_json, reading = _read(photo.bgr, [other.bgr for other in others])
        if not reading_json["tiles"]:
            raise no_world_error("no tile was recognised")
        overlay = photo_overlay(reading, photo.width, photo.height)
    finally:
        reading = None                  # its images are freed before the memory is handed back
        return_freed_memory()
    position = reading_position(reading_json)
    if to_move is not None:
        position["to_move"] = to_move
    return reading_json, overlay, position


def reading_position(reading_json):
    """The position a reading describes (vision's JSON without its image block and notes).

    A photo shows no reserves: the rules count them from the discs on the table.
    """
    return {k: v for k, v in reading_json.items() if k not in ("image", "reserves", "warnings", "timing")}

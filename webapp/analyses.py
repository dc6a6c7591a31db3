"""A photo analysis from upload to storage: decode, read, answer, store (for pages and API)."""

from flask import current_app, url_for

from . import db, referee
from .errors import InputError
from .photos import decode_photo

SIDES = {"white": "white", "black": "black", "unknown": None, "": None}


def side_to_move(value):
    """The optional ``to_move`` form field: white, black or unknown (also empty)."""
    if value is None:
        return None
    side = value.strip().lower()
    if side not in SIDES:
        raise InputError(f"to_move must be white, black or unknown, not {value!r}.", "bad_to_move")
    return SIDES[side]


def analyse_upload(source, data, to_move):
    """Decode, read, analyse and store a photo; return the stored record's JSON for clients."""
    config = current_app.config
    photo = decode_photo(data, config["MAX_IMAGE_PIXELS"], config["ANALYSIS_MAX_SIDE"])
    reading, overlay, position = referee.read_photo(photo, to_move)
    analysis, problem = referee.answer_or_problem(position)
    # stored even when the reading is impossible: the page lets the user correct it
    analysis_id = db.insert_analysis(source, photo.jpeg, reading, overlay, position)
    link = url_for("pages.result", analysis_id=analysis_id, _external=True)
    if problem is not None:
        raise InputError(f"The photo reads as an impossible position ({problem}); "
                         f"open {link} to correct the reading.", "impossible_reading", 422,
                         id=analysis_id, link=link)
    return {"id": analysis_id, "link": link, "position": position, "analysis": analysis}


def stored_analysis(analysis_id):
    """A stored analysis with its current answer (``analysis`` or ``problem``) and the position its
    reading describes; None if there is no such analysis."""
    record = db.load_analysis(analysis_id)
    if record is not None:
        record["analysis"], record["problem"] = referee.answer_or_problem(record["position"])
        record["reading_position"] = referee.reading_position(record["reading"])
    return record

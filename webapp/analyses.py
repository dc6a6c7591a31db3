"""A photo analysis from upload to storage: decode, read, answer, store (for pages and API)."""

from flask import current_app, url_for

from . import db, referee
from .errors import InputError
from .photos import decode_photo

SECOND_PHOTO = "second-photo:"     # the source of an analysis that read a stored analysis's photos with one more
SIDES = {"white": "white", "black": "black", "unknown": None, "": None}


def side_to_move(value):
    """The optional ``to_move`` form field: white, black or unknown (also empty)."""
    if value is None:
        return None
    side = value.strip().lower()
    if side not in SIDES:
        raise InputError(f"to_move must be white, black or unknown, not {value!r}.", "bad_to_move")
    return SIDES[side]


def analyse_upload(source, data, to_move, other_data=()):
    """Decode, read, analyse and store a photo (with other photos of the same table from other
    sides, read together: vision.combine_readings); return the stored record's JSON for clients."""
    config = current_app.config
    photo = decode_photo(data, config["MAX_IMAGE_PIXELS"], config["ANALYSIS_MAX_SIDE"])
    others = [decode_photo(d, config["MAX_IMAGE_PIXELS"], config["ANALYSIS_MAX_SIDE"]) for d in other_data]
    reading, overlay, position = referee.read_photo(photo, to_move, others)
    analysis, problem = referee.answer_or_problem(position)
    # stored even when the reading is impossible: the page lets the user correct it
    analysis_id = db.insert_analysis(source, photo.jpeg, reading, overlay, position, [o.jpeg for o in others])
    link = url_for("pages.result", analysis_id=analysis_id, _external=True)
    if problem is not None:
        raise InputError(f"The photo reads as an impossible position ({problem}); "
                         f"open {link} to correct the reading.", "impossible_reading", 422,
                         id=analysis_id, link=link)
    return {"id": analysis_id, "link": link, "position": position, "analysis": analysis}


def add_photo(analysis_id, data):
    """A new analysis of a stored analysis's photos (its own and those it read with it) read together
    with one more photo of the same table (the stored one stays as it is, corrections and all);
    None if there is no such analysis."""
    record = db.load_analysis(analysis_id)
    if record is None:
        return None
    others = db.load_other_photos(analysis_id)
    most = current_app.config["ANALYSIS_MAX_PHOTOS"]
    if 1 + len(others) >= most:
        raise InputError(f"This analysis already reads {1 + len(others)} photos of the table, the most one "
                         f"reads ({most}).", "too_many_photos", 422)
    return analyse_upload(f"{SECOND_PHOTO}{first_analysis(record) or analysis_id}", db.load_photo(analysis_id),
                          record["position"].get("to_move"), [*others, data])


def first_analysis(record):
    """The id of the analysis of the first photo alone, of a record that read it with others, or None."""
    source = record["source"]
    return source.removeprefix(SECOND_PHOTO) if source.startswith(SECOND_PHOTO) else None


def photos_read(record, kept):
    """How many photos of the table a stored analysis read, of which `kept` (db.count_photos) are
    stored: one read with a second photo before the other photos were kept counts two."""
    return max(kept, 2) if first_analysis(record) else kept


def stored_analysis(analysis_id):
    """A stored analysis with its current answer (``analysis`` or ``problem``) and the position its
    reading describes; None if there is no such analysis."""
    record = db.load_analysis(analysis_id)
    if record is not None:
        record["analysis"], record["problem"] = referee.answer_or_problem(record["position"])
        record["reading_position"] = referee.reading_position(record["reading"])
    return record

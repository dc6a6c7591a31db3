"""The JSON API under /api (FORMATS.md "Web API"); errors are {"error", "code"} with a 4xx."""

from flask import Blueprint, current_app, jsonify, request, url_for

from . import db, openapi, referee
from .errors import InputError
from .photos import decode_photo

bp = Blueprint("api", __name__, url_prefix="/api")

SIDES = {"white": "white", "black": "black", "unknown": None, "": None}
MAX_CORRECTIONS = 2000


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


def json_body():
    body = request.get_json(silent=True)
    if body is None:
        raise InputError("The request body must be JSON (Content-Type: application/json).",
                         "bad_json", 400)
    return body


@bp.post("/analyze")
def analyze_photo():
    upload = request.files.get("photo")
    if upload is None:
        raise InputError("Send the photo as the multipart file field 'photo'.", "missing_photo", 400)
    to_move = side_to_move(request.form.get("to_move"))
    return jsonify(analyse_upload("upload", upload.read(), to_move))


@bp.post("/rules/analyze")
def analyze_position():
    return jsonify(referee.answer(json_body()))


@bp.get("/analyses/<analysis_id>")
def get_analysis(analysis_id):
    record = db.load_analysis(analysis_id)
    if record is None:
        raise InputError("No analysis with this id.", "not_found", 404)
    record["analysis"], record["problem"] = referee.answer_or_problem(record["position"])
    record["photo"] = url_for("pages.photo", analysis_id=analysis_id)
    record["link"] = url_for("pages.result", analysis_id=analysis_id, _external=True)
    return jsonify(record)


@bp.put("/analyses/<analysis_id>/position")
def save_position(analysis_id):
    """Store a corrected position and the list of corrections that made it."""
    body = json_body()
    if not isinstance(body, dict) or "position" not in body:
        raise InputError("Send {\"position\": POSITION, \"corrections\": [...]}.", "bad_body", 400)
    corrections = body.get("corrections", [])
    if not isinstance(corrections, list) or len(corrections) > MAX_CORRECTIONS:
        raise InputError(f"corrections must be a list of at most {MAX_CORRECTIONS} entries.",
                         "bad_body", 400)
    analysis = referee.answer(body["position"])
    if not db.save_corrections(analysis_id, body["position"], corrections):
        raise InputError("No analysis with this id.", "not_found", 404)
    return jsonify(analysis=analysis)


@bp.get("/openapi.json")
def openapi_document():
    return jsonify(openapi.document())

"""The JSON API under /api (FORMATS.md "Web API"); errors are {"error", "code"} with a 4xx."""

from flask import Blueprint, jsonify, request, url_for

from . import db, openapi, referee
from .analyses import add_photo, analyse_upload, side_to_move, stored_analysis
from .errors import InputError

bp = Blueprint("api", __name__, url_prefix="/api")

MAX_CORRECTIONS = 2000


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


@bp.post("/fit-heights")
def fit_heights():
    return jsonify(referee.fit_to_reserves(json_body()))


@bp.get("/analyses/<analysis_id>")
def get_analysis(analysis_id):
    record = stored_analysis(analysis_id)
    if record is None:
        raise InputError("No analysis with this id.", "not_found", 404)
    record["photo"] = url_for("pages.photo", analysis_id=analysis_id)
    record["link"] = url_for("pages.result", analysis_id=analysis_id, _external=True)
    return jsonify(record)


@bp.post("/analyses/<analysis_id>/second-photo")
def second_photo(analysis_id):
    """A new analysis: the stored photo read together with another photo of the same table."""
    upload = request.files.get("photo")
    if upload is None:
        raise InputError("Send the second photo as the multipart file field 'photo'.", "missing_photo", 400)
    record = add_photo(analysis_id, upload.read())
    if record is None:
        raise InputError("No analysis with this id.", "not_found", 404)
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

"""The pages people see: start page with upload, camera and sample gallery; the result page."""

import json
import os
import re
import threading
from pathlib import Path

from flask import (Blueprint, abort, current_app, redirect, render_template, request, send_file,
                   url_for)
from PIL import Image
from vision import photo_name

from . import db, referee
from .analyses import add_photo, analyse_upload, first_analysis, photos_read, side_to_move, stored_analysis
from .errors import InputError

bp = Blueprint("pages", __name__)

SAMPLE_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")
THUMB_SIZE = (360, 270)
RECENT = 8
SAMPLES_SHOWN = 8   # the rest of the gallery is folded, so that a phone reaches the recent analyses
NUMBER_WORDS = {2: "two", 3: "three", 4: "four", 5: "five"}


def _sample_dir():
    return Path(current_app.config["SAMPLE_DIR"])


def _sample_entry(jpg):
    """A gallery entry: name, a caption from the truth file's meta, and whether its true position
    has a forced dance (a newcomer sees one first)."""
    entry = {"name": jpg.stem, "caption": jpg.stem.replace("_", " "), "dance": False}
    try:
        truth = json.loads(jpg.with_suffix(".json").read_text())
        meta = truth.get("meta", {})
        tilt = meta.get("tilt_deg")
        parts = [meta.get("edition"), meta.get("phase"),
                 None if tilt is None else f"camera tilt {float(tilt):.0f}°"]
        entry["caption"] = " · ".join(str(p) for p in parts if p) or entry["caption"]
        entry["dance"] = referee.has_forced_dance(truth["position"])
    except (OSError, ValueError, AttributeError, TypeError, KeyError):
        pass   # a photo without (valid) truth is still a sample
    return entry


def list_samples():
    """The sample photos, those with a forced dance first."""
    samples = [_sample_entry(jpg) for jpg in sorted(_sample_dir().glob("*.jpg"))]
    return sorted(samples, key=lambda entry: not entry["dance"])


def _sample_path(name):
    path = _sample_dir() / f"{name}.jpg"
    if not SAMPLE_NAME.match(name) or not path.is_file():
        abort(404, description="No sample photo of this name.")
    return path


def recent():
    """The latest analyses for the start page, each with a one-line answer."""
    items = []
    for record in db.recent_analyses(RECENT):
        analysis, problem = referee.answer_or_problem(record["position"])
        if analysis is None:
            summary = "needs correcting"
        else:
            dances = [d["text"] for c in referee.COLOURS for d in analysis["forced_dances"][c]]
            summary = (", ".join(dances) or "no forced dance") + \
                f"; White {analysis['score']['white']} · Black {analysis['score']['black']}"
        photos = photos_read(record, db.count_photos(record["id"]))
        source = record["source"].removeprefix("sample:") if photos == 1 else \
            "with a second photo" if photos == 2 else f"with {photos - 1} more photos"
        items.append({"id": record["id"], "when": record["created"][11:16], "source": source,
                      "summary": summary})
    return items


def _render_index(error=None, status=200):
    samples = list_samples()
    return render_template("index.html", samples=samples[:SAMPLES_SHOWN],
                           more_samples=samples[SAMPLES_SHOWN:], recent=recent(), error=error,
                           camera_size=referee.camera_photo_size()), status


@bp.get("/")
def index():
    return _render_index()


@bp.post("/upload")
def upload():
    """The form fallback of the start page (the script posts to /api/analyze instead)."""
    upload = request.files.get("photo")
    try:
        if upload is None or not upload.filename:
            raise InputError("Choose a photo first.", "missing_photo", 400)
        record = analyse_upload("upload", upload.read(), side_to_move(request.form.get("to_move")))
    except InputError as error:
        return _after_failure(error)
    return redirect(url_for("pages.result", analysis_id=record["id"]), 303)


def _after_failure(error):
    """An impossible reading was stored: its page lets the user correct it; else the start page."""
    if "id" in error.details:
        return redirect(url_for("pages.result", analysis_id=error.details["id"]), 303)
    return _render_index(error, error.status)


@bp.post("/samples/<name>")
def analyse_sample(name):
    path = _sample_path(name)
    try:
        record = analyse_upload(f"sample:{name}", path.read_bytes(),
                                side_to_move(request.form.get("to_move")))
    except InputError as error:
        # the user did not take this photo: say which sample vision could not read
        error.message = f"Sample photo {name}: {error.message}"
        return _after_failure(error)
    return redirect(url_for("pages.result", analysis_id=record["id"]), 303)


@bp.get("/samples/<name>.jpg")
def sample_photo(name):
    return send_file(_sample_path(name), mimetype="image/jpeg", max_age=3600)


@bp.get("/samples/<name>/thumb.jpg")
def sample_thumb(name):
    """A small copy for the gallery, made once and kept in the instance folder."""
    source = _sample_path(name)
    thumb = Path(current_app.instance_path) / "thumbs" / f"{name}.jpg"
    if not thumb.exists() or thumb.stat().st_mtime < source.stat().st_mtime:
        thumb.parent.mkdir(exist_ok=True)
        with Image.open(source) as image:
            image.draft("RGB", THUMB_SIZE)
            image = image.convert("RGB")
            image.thumbnail(THUMB_SIZE)
            partial = thumb.with_suffix(f".{os.getpid()}-{threading.get_ident()}.part")
            image.save(partial, "JPEG", quality=82)
        os.replace(partial, thumb)
    return send_file(thumb, mimetype="image/jpeg", max_age=3600)


@bp.get("/a/<analysis_id>")
def result(analysis_id):
    return _render_result(analysis_id)


def _render_result(analysis_id, error=None, status=200):
    record = stored_analysis(analysis_id)
    if record is None:
        abort(404, description="No analysis with this link: it may have been made on another server.")
    # the photos another one is read with: an analysis from before they were kept has only its own
    kept = db.count_photos(analysis_id)
    photos = photos_read(record, kept)
    return render_template("result.html", record=record, unsure_below=referee.UNSURE_BELOW, error=error,
                           first_analysis=first_analysis(record), photos=NUMBER_WORDS.get(photos, str(photos)),
                           next_photo=photo_name(kept + 1).removeprefix("the "),
                           read_label="Read both photos" if kept == 1 else
                           f"Read all {NUMBER_WORDS.get(kept + 1, kept + 1)} photos",
                           another_photo=kept < current_app.config["ANALYSIS_MAX_PHOTOS"],
                           photo_url=url_for("pages.photo", analysis_id=analysis_id)), status


@bp.post("/a/<analysis_id>/second-photo")
def second_photo(analysis_id):
    """The result page's form: this analysis's photo read with another photo of the same table."""
    upload = request.files.get("photo")
    try:
        if upload is None or not upload.filename:
            raise InputError("Choose the second photo first.", "missing_photo", 400)
        record = add_photo(analysis_id, upload.read())
    except InputError as error:
        if "id" in error.details:
            return redirect(url_for("pages.result", analysis_id=error.details["id"]), 303)
        return _render_result(analysis_id, error, error.status)
    if record is None:
        abort(404, description="No analysis with this link.")
    return redirect(url_for("pages.result", analysis_id=record["id"]), 303)


@bp.get("/a/<analysis_id>/photo.jpg")
def photo(analysis_id):
    data = db.load_photo(analysis_id)
    if data is None:
        abort(404, description="No analysis with this link.")
    response = current_app.response_class(data, mimetype="image/jpeg")
    response.cache_control.max_age = 86400
    response.cache_control.public = True
    return response

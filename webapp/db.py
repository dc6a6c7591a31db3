"""SQLite storage of analyses in the instance folder (one connection per request)."""

import json
import secrets
import sqlite3
from datetime import datetime, timezone
from importlib import resources

from flask import current_app, g


def get_db():
    if "db" not in g:
        g.db = sqlite3.connect(current_app.config["DATABASE"], timeout=30)
        g.db.row_factory = sqlite3.Row
    return g.db


def close_db(_exc=None):
    db = g.pop("db", None)
    if db is not None:
        db.close()


def init_db(path):
    """Create the tables if they are missing; WAL lets readers work while one request writes."""
    schema = resources.files(__package__).joinpath("schema.sql").read_text()
    with sqlite3.connect(path, timeout=30) as db:
        db.execute("PRAGMA journal_mode=WAL")
        db.executescript(schema)
    db.close()


def init_app(app):
    init_db(app.config["DATABASE"])
    app.teardown_appcontext(close_db)


def _now():
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def insert_analysis(source, photo_jpeg, reading, overlay, position, other_photos=()):
    """Store a new analysis, with the JPEGs of the other photos of the table it read with its own
    (second, third, ...), in one transaction and return its id."""
    analysis_id = secrets.token_urlsafe(9)
    now = _now()
    db = get_db()
    with db:
        db.execute(
            "INSERT INTO analysis (id, created, updated, source, photo, reading, overlay, position)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (analysis_id, now, now, source, photo_jpeg, json.dumps(reading), json.dumps(overlay),
             json.dumps(position)),
        )
        db.executemany("INSERT INTO other_photo (analysis_id, k, photo) VALUES (?, ?, ?)",
                       [(analysis_id, k, jpeg) for k, jpeg in enumerate(other_photos, start=2)])
    return analysis_id


def load_analysis(analysis_id):
    """The stored analysis as a dict (JSON fields decoded, no photo), or None."""
    row = get_db().execute(
        "SELECT id, created, updated, source, reading, overlay, position, corrections"
        " FROM analysis WHERE id = ?", (analysis_id,)).fetchone()
    if row is None:
        return None
    record = dict(row)
    for field in ("reading", "overlay", "position", "corrections"):
        record[field] = json.loads(record[field])
    return record


def load_photo(analysis_id):
    row = get_db().execute("SELECT photo FROM analysis WHERE id = ?", (analysis_id,)).fetchone()
    return None if row is None else bytes(row["photo"])


def load_other_photos(analysis_id):
    """The JPEGs of the other photos an analysis read with its own, second first."""
    rows = get_db().execute("SELECT photo FROM other_photo WHERE analysis_id = ? ORDER BY k",
                            (analysis_id,)).fetchall()
    return [bytes(row["photo"]) for row in rows]


def count_photos(analysis_id):
    """How many photos of the table an analysis read: its own and the others."""
    row = get_db().execute("SELECT COUNT(*) FROM other_photo WHERE analysis_id = ?", (analysis_id,)).fetchone()
    return 1 + row[0]


def save_corrections(analysis_id, position, corrections):
    """Replace the current position and the list of corrections; False if no such analysis."""
    db = get_db()
    with db:
        cursor = db.execute(
            "UPDATE analysis SET position = ?, corrections = ?, updated = ? WHERE id = ?",
            (json.dumps(position), json.dumps(corrections), _now(), analysis_id),
        )
    return cursor.rowcount == 1


def recent_analyses(limit):
    """The newest analyses, newest first: id, created, source, position (decoded)."""
    rows = get_db().execute(
        "SELECT id, created, source, position FROM analysis ORDER BY created DESC, rowid DESC LIMIT ?",
        (limit,)).fetchall()
    return [dict(row, position=json.loads(row["position"])) for row in rows]

"""Exxit Referee web app: photo in, forced dance and island score out.

Built like Flask's tutorial: ``create_app()`` makes the application, the pages and the JSON API
are blueprints, configuration comes from the factory, ``instance/config.py`` and the test config.
"""

import os
import threading
from pathlib import Path

from flask import Flask

REPO_ROOT = Path(__file__).resolve().parent.parent


def create_app(test_config=None):
    """Make the application. ``test_config`` (a mapping) replaces ``instance/config.py``."""
    app = Flask(__name__, instance_relative_config=True)
    app.config.from_mapping(
        DATABASE=os.path.join(app.instance_path, "webapp.sqlite"),
        SAMPLE_DIR=str(REPO_ROOT / "sample_images"),
        TLS_FOLDER=os.path.join(app.instance_path, "tls"),
        MAX_CONTENT_LENGTH=25 * 1024 * 1024,
        MAX_IMAGE_PIXELS=40_000_000,
        ANALYSIS_MAX_SIDE=2400,
        ANALYSIS_MAX_PHOTOS=4,          # of one table, read together (each one more takes a photo's time)
        CONCURRENT_ANALYSES=2,
        VISION_PROFILE=None,
        VISION_CAMERA=None,
    )
    if test_config is None:
        app.config.from_pyfile("config.py", silent=True)
    else:
        app.config.from_mapping(test_config)
    os.makedirs(app.instance_path, exist_ok=True)
    app.json.sort_keys = False

    # Vision is CPU- and memory-hungry: at most this many photos are read at once.
    app.extensions["analysis_slots"] = threading.BoundedSemaphore(app.config["CONCURRENT_ANALYSES"])

    from . import api, db, errors, pages

    db.init_app(app)
    errors.init_app(app)
    app.register_blueprint(pages.bp)
    app.register_blueprint(api.bp)
    return app

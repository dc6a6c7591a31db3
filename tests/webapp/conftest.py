"""Fixtures of the web app tests, as in Flask's tutorial: ``app`` and ``client``, plus a stored
analysis made without vision (a drawn photo of a known position) for the storage and page tests."""

import pytest

from webapp import create_app
from webapp_examples import SAMPLE_DIR, store_example


@pytest.fixture
def app(tmp_path):
    return create_app({"TESTING": True, "DATABASE": str(tmp_path / "webapp.sqlite"),
                       "SAMPLE_DIR": str(SAMPLE_DIR), "TLS_FOLDER": str(tmp_path / "tls")})


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def stored(app):
    return store_example(app)

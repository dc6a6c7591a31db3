"""Fixtures of the web app tests, as in Flask's tutorial: ``app`` and ``client``."""

import pytest

from webapp import create_app


@pytest.fixture
def app(tmp_path):
    return create_app({"TESTING": True, "DATABASE": str(tmp_path / "webapp.sqlite")})


@pytest.fixture
def client(app):
    return app.test_client()

"""One error type for everything a user can get wrong, shown as JSON to the API and as a page to people.

Every failure ends as a 4xx with a one-line message; no traceback ever reaches a client.
"""

from flask import jsonify, render_template, request
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge


class InputError(ValueError):
    """Bad input: ``message`` for the user, ``code`` for programs, ``status`` the HTTP status."""

    def __init__(self, message, code, status=400, **details):
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status
        self.details = details   # extra JSON fields, e.g. the link of a stored analysis


def sentence(message):
    """A one-line message of vision's (lower case, no full stop) as a sentence for the user."""
    return f"{message[:1].upper()}{message[1:]}."


def too_large_error(app):
    limit_mb = app.config["MAX_CONTENT_LENGTH"] // (1024 * 1024)
    return InputError(
        f"The upload is larger than {limit_mb} MB. Take a smaller photo or let the page shrink it.",
        "too_large", 413)


def _wants_json():
    return request.path.startswith("/api/")


def respond(error):
    """The response for an InputError: JSON under /api/, else the page it came from."""
    if _wants_json():
        return jsonify(error=error.message, code=error.code, **error.details), error.status
    return render_template("error.html", message=error.message, code=error.code), error.status


def init_app(app):
    app.register_error_handler(InputError, respond)

    @app.errorhandler(RequestEntityTooLarge)
    def _too_large(_exc):
        return respond(too_large_error(app))

    @app.errorhandler(HTTPException)
    def _http(exc):
        code = (exc.name or "error").lower().replace(" ", "_")
        return respond(InputError(exc.description or exc.name, code, exc.code or 400))

    @app.errorhandler(Exception)
    def _unexpected(exc):
        app.logger.exception("unexpected error on %s", request.path)
        return respond(InputError("Something went wrong on the server; the error is logged.",
                                  "internal", 500))

"""The Flask app: one page (``static/``) and a small JSON API over :class:`~grinch_env.web.session.Session`.

==============================  ==========================================================
``GET  /``                      the page
``GET  /api/games``             games, table sizes, built-in agents, checkpoints found, game logs in ``log_dir``
``POST /api/watch``             ``{game, players, agents, seed?, options?}`` -> a watched game's view
``POST /api/play``              ``{game, players, seat, opponents, seed?, options?}`` -> a played game's view
``POST /api/replay``            ``{log: <JSON text>, game?}`` or ``{path, game?}`` -> a replay's view
``GET  /api/s/<id>``            the view (``?seat=k``: a watched or replayed game seen from seat k)
``POST /api/s/<id>/step``       ``{action?}``: the human's move, or the next agent's / log entry's
``POST /api/s/<id>/seek``       ``{position}``: a replay after that many log entries
``GET  /api/s/<id>/table.png``  the game's picture of the table for the viewer (404 without one)
``GET  /api/s/<id>/log``        the game so far as a JSON log (replayable here)
==============================  ==========================================================

Errors are ``{"error": message}`` with status 400 (bad input) or 404 (no such game).
"""

from __future__ import annotations

import os
import re
import secrets
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from flask import Flask, Response, jsonify, request, send_from_directory

from grinch_env.web._imports import list_logs
from grinch_env.web.session import DEFAULT_GAME, Session, catalogue

STATIC = Path(__file__).with_name("static")
MAX_SESSIONS = 64
"""Games kept in memory; the oldest is dropped when a new one starts beyond this."""


class NotFoundError(LookupError):
    pass


def find_checkpoints(root: str | os.PathLike) -> list[dict[str, str]]:
    """Return ``{"path", "game"}`` for each run directory under ``root`` holding a ``best.pt`` (its ``config.yaml`` names the game)."""
    found = []
    for best in sorted(Path(root).glob("**/best.pt")):
        run = best.parent
        config = run / "config.yaml"
        game = "grinch"
        if config.exists():
            match = re.search(r"^game:\s*(\w+)", config.read_text(errors="replace"), re.MULTILINE)
            game = match.group(1) if match else game
        found.append({"path": str(run), "game": game})
    return found


def create_app(checkpoints: str | os.PathLike = "checkpoints", log_dir: str | os.PathLike | None = None) -> Flask:
    """Return the app; ``checkpoints`` is the directory whose runs the page suggests as agents, ``log_dir`` one whose game logs it lists
    (a tournament's ``--log-dir``: :func:`grinch_env.evaluation.logs.list_logs`)."""
    app = Flask(__name__, static_folder=None)
    sessions: OrderedDict[str, Session] = OrderedDict()
    sessions_lock = threading.Lock()  # the server answers requests in threads

    def store(session: Session) -> Response:
        key = secrets.token_hex(8)
        with sessions_lock:
            sessions[key] = session
            while len(sessions) > MAX_SESSIONS:
                sessions.popitem(last=False)
        return reply(key, session)

    def get(key: str) -> Session:
        try:
            with sessions_lock:
                return sessions[key]
        except KeyError:
            raise NotFoundError(f"no game {key!r} here (the server keeps the latest {MAX_SESSIONS} games and forgets them on restart)") from None

    def reply(key: str, session: Session, seat: Any = None) -> Response:
        return jsonify({"id": key, **session.view(seat)})

    def body() -> dict[str, Any]:
        data = request.get_json(silent=True)
        if not isinstance(data, dict):
            raise ValueError("send a JSON object as the request body")
        return data

    @app.errorhandler(ValueError)
    def bad_input(exc: ValueError) -> tuple[Response, int]:
        return jsonify({"error": str(exc)}), 400

    @app.errorhandler(NotFoundError)
    def not_found(exc: NotFoundError) -> tuple[Response, int]:
        return jsonify({"error": str(exc)}), 404

    @app.get("/")
    def page() -> Response:
        return send_from_directory(STATIC, "index.html")

    @app.get("/static/<path:name>")
    def static_file(name: str) -> Response:
        return send_from_directory(STATIC, name)

    @app.get("/api/games")
    def games() -> Response:
        logs = [] if log_dir is None else list_logs(log_dir)
        return jsonify({"games": catalogue(), "default": DEFAULT_GAME, "checkpoints": find_checkpoints(checkpoints), "logs": logs})

    @app.post("/api/watch")
    def watch() -> Response:
        d = body()
        return store(Session.watch(d.get("game", "grinch"), d.get("players"), d.get("agents", ""), d.get("seed"), d.get("options")))

    @app.post("/api/play")
    def play() -> Response:
        d = body()
        return store(Session.play(d.get("game", "grinch"), d.get("players"), d.get("seat"), d.get("opponents", ""), d.get("seed"), d.get("options")))

    @app.post("/api/replay")
    def replay() -> Response:
        d = body()
        text, path = d.get("log"), d.get("path")
        if path:
            try:
                text = Path(path).expanduser().read_bytes()
            except OSError as exc:
                raise ValueError(f"cannot read the log file {path!r}: {exc.strerror or exc}") from None
        if not text:
            raise ValueError("choose a game log file (JSON) or give its path")
        return store(Session.replay(text, d.get("game")))

    @app.get("/api/s/<key>")
    def show(key: str) -> Response:
        session = get(key)
        with session.lock:
            return reply(key, session, request.args.get("seat"))

    def change(key: str, method: str, field: str) -> Response:
        """Call ``session.<method>(body[field])`` under the session's lock; reply with the new state from ``body["seat"]``."""
        session, d = get(key), body()
        with session.lock:
            getattr(session, method)(d.get(field))
            return reply(key, session, d.get("seat"))

    @app.post("/api/s/<key>/step")
    def step(key: str) -> Response:
        return change(key, "step", "action")

    @app.post("/api/s/<key>/seek")
    def seek(key: str) -> Response:
        return change(key, "seek", "position")

    @app.get("/api/s/<key>/table.png")
    def table(key: str) -> Response:
        session = get(key)
        with session.lock:
            png = session.png(request.args.get("seat"))
        if png is None:
            raise NotFoundError(f"{session.spec.title} has no picture of the table in this version (grinch_env.{session.spec.name}.render)")
        return Response(png, mimetype="image/png", headers={"Cache-Control": "no-store"})

    @app.get("/api/s/<key>/log")
    def log(key: str) -> Response:
        session = get(key)
        name = f"{session.spec.name}_{session.mode}_{key}.json"
        with session.lock:
            text = session.log_json()
        return Response(text, mimetype="application/json", headers={"Content-Disposition": f"attachment; filename={name}"})

    return app

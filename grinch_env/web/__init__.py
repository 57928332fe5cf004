"""Watch, replay and play both games in a browser: ``python -m grinch_env.web`` (the ``[web]`` extra, Flask).

The server listens on 127.0.0.1 only unless ``--host`` says otherwise, and
prints its address.  The page (``static/``) talks to the JSON API of
:mod:`grinch_env.web.app`; the games themselves are :class:`~grinch_env.web.session.Session`
objects: watched (agents in every seat, step by step or live), replayed from a
JSON game log, or played with a human in one seat, who sees only what that seat
may see.  ``docs/web.md`` shows the pages.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence

from grinch_env.web.session import Session

__all__ = ["Session", "create_app", "main"]


def create_app(checkpoints: str = "checkpoints", log_dir: str | None = None):  # noqa: ANN201 - Flask is imported only here, for the [web] extra
    """Return the Flask app (see :func:`grinch_env.web.app.create_app`)."""
    from grinch_env.web.app import create_app as _create

    return _create(checkpoints, log_dir)


def main(argv: Sequence[str] | None = None) -> int:
    """Serve the page until interrupted; return the exit status."""
    parser = argparse.ArgumentParser(prog="python -m grinch_env.web", description="Watch, replay and play Grinch Grow Your Heart and Gnoming A Round in a browser.")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only; 0.0.0.0 opens it to the network)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one, printed at start)")
    parser.add_argument("--checkpoints", default="checkpoints", help="directory whose runs the page offers as agents (default checkpoints)")
    parser.add_argument("--log-dir", default=None, help="directory of game logs the Replay tab lists (a tournament's --log-dir, by its index.json)")
    args = parser.parse_args(argv)
    if args.log_dir is not None and not os.path.isdir(args.log_dir):
        parser.error(f"--log-dir must be an existing directory of game logs, got {args.log_dir!r}")
    try:
        from werkzeug.serving import make_server
    except ImportError:
        parser.error("the web page needs Flask: pip install 'grinch_env[web]'")
    try:
        server = make_server(args.host, args.port, create_app(args.checkpoints, args.log_dir), threaded=True)
    except OSError as exc:
        parser.error(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}")
    print(f"serving on http://{args.host}:{server.server_port}/ (Ctrl-C stops)", flush=True)
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print("warning: the page is reachable from the network; it loads any checkpoint path it is given, and checkpoints can run code", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0

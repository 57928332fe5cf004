"""grinch_env: a PettingZoo benchmark for the card games *Grinch Grow Your Heart* and *Gnoming A Round*.

``grinch_env.env(...)`` / ``grinch_env.raw_env(...)`` create the Grinch AEC
environment (its documentation page is :mod:`grinch_env.grinch.env`);
``grinch_env.gnoming.env(...)`` the Gnoming one.  Each game is one subpackage
(:mod:`grinch_env.grinch`, :mod:`grinch_env.gnoming`) behind the small game
interface of :mod:`grinch_env.games`, which the tournaments, evaluation, play
and training use for both.  Also exported: the batched engines
(:class:`VectorGrinch`, :class:`VectorGnoming`), :func:`make_agent` and the
Grinch encoding constants (:data:`OBS_SIZE`, :data:`NUM_ACTIONS`).
"""

from importlib import import_module
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from grinch_env.agents import make_agent
from grinch_env.games import GAMES, get_game
from grinch_env.grinch.encoding import OBS_SIZE
from grinch_env.grinch.env import env, raw_env
from grinch_env.grinch.game import NUM_ACTIONS, Game, IllegalActionError, terminal_rewards

try:
    __version__ = version("grinch_env")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"
ENV_VERSION = GAMES["grinch"].env_version

# Imported on first use: the batched engines (numpy/numba) and the second game.
_LAZY = {"VectorGrinch": "grinch_env.grinch.vector", "VectorGnoming": "grinch_env.gnoming.vector", "gnoming": "grinch_env.gnoming"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        module = import_module(_LAZY[name])
        return module if name == "gnoming" else getattr(module, name)
    raise AttributeError(f"module 'grinch_env' has no attribute {name!r}")


# Both games in PettingZoo's registry (grinch_env/grinch-v0, grinch_env/gnoming-v0) and Gymnasium's (grinch_env/registry.py).
from grinch_env.registry import register_envs as _register_envs  # noqa: E402

_register_envs()

__all__ = [
    "ENV_VERSION", "GAMES", "NUM_ACTIONS", "OBS_SIZE", "Game", "IllegalActionError", "VectorGnoming", "VectorGrinch", "__version__",
    "env", "get_game", "make_agent", "raw_env", "terminal_rewards",
]

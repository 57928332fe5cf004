"""The package's shape: both game folders hold the same modules (docs/architecture.md)."""

from pathlib import Path

import grinch_env
from grinch_env.games import GAMES

PACKAGE = Path(grinch_env.__file__).parent

# The only modules one game has and the other has not, and why (docs/architecture.md, "One layout per game").
ONLY_IN = {
    "grinch": {
        "_vector_reference": "the scalar-loop engine that VectorGrinch's numpy transitions are checked against (tests/test_vector.py); "
                             "Gnoming's batched engine is checked against the scalar Game directly",
        "gym_env": "the single-agent Gymnasium wrapper, Grinch only until it becomes game-generic (docs/architecture.md)",
    },
    "gnoming": {},
}


def module_names(folder: Path) -> set[str]:
    """Return the module and subpackage names directly in ``folder`` (``agents`` for a package, ``game`` for game.py)."""
    names = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
    return names | {p.name for p in folder.iterdir() if p.is_dir() and (p / "__init__.py").exists()}


def test_every_game_folder_lists_the_same_module_names():
    folders = {name: module_names(PACKAGE / spec.package.rpartition(".")[2]) for name, spec in GAMES.items()}
    common = set.intersection(*folders.values())
    for name, names in folders.items():
        # An exception may go away (a module made game-generic); a new one-game module must be listed with its reason.
        assert names - common <= set(ONLY_IN[name]), f"{name}: modules not in every game folder: {sorted(names - common - set(ONLY_IN[name]))}"
    # The roles every game provides (the game interface's harness, the rules, the engines, the CLI).
    assert {"cards", "scoring", "game", "encoding", "env", "vector", "_vector_numba", "agents", "features", "play", "replay", "harness"} <= common


def test_every_game_has_an_agents_package_with_the_same_entry_points():
    for spec in GAMES.values():
        folder = PACKAGE / spec.package.rpartition(".")[2] / "agents"
        assert (folder / "__init__.py").exists() and {"base", "simple", "search"} <= module_names(folder), spec.name
        assert {"random", "greedy", "search"} <= set(spec.agent_classes()), spec.name


def test_both_games_name_their_reward_modes_alike():
    assert {spec.reward_modes for spec in GAMES.values()} == {("win", "margin")}

"""The package's shape: both game folders hold the same modules (docs/architecture.md)."""

from pathlib import Path

import numpy as np
import pytest

import grinch_env
from grinch_env.games import GAMES

PACKAGE = Path(grinch_env.__file__).parent

# The only modules one game has and the other has not, and why (docs/architecture.md, "One layout per game").
ONLY_IN = {
    "grinch": {
        "_vector_reference": "the scalar-loop engine that VectorGrinch's numpy transitions are checked against (tests/test_vector.py); "
                             "Gnoming's batched engine is checked against the scalar Game directly",
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
    assert {"cards", "scoring", "game", "encoding", "env", "vector", "_vector_numba", "agents", "play", "replay", "harness"} <= common


def test_every_game_has_an_agents_package_with_the_same_entry_points():
    for spec in GAMES.values():
        folder = PACKAGE / spec.package.rpartition(".")[2] / "agents"
        assert (folder / "__init__.py").exists() and {"base", "simple", "search"} <= module_names(folder), spec.name
        assert {"random", "greedy", "search"} <= set(spec.agent_classes()), spec.name


def test_both_games_name_their_reward_modes_alike():
    assert {spec.reward_modes for spec in GAMES.values()} == {("win", "margin")}


# ---------------------------------------------------------------- the import graph
# Layers, lowest first: a module may import its own layer and the ones below, never one above (docs/architecture.md).
# Patterns are fnmatch patterns over dotted module names ("<game>" is any game folder); the first that matches wins.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("registry", ("grinch_env.games",)),
    ("rules", ("grinch_env.<game>.cards", "grinch_env.<game>.scoring", "grinch_env.<game>.game")),
    ("encoding", ("grinch_env.<game>.encoding", "grinch_env.<game>.tokens", "grinch_env.tokens")),
    ("env/agents", (
        "grinch_env.aec", "grinch_env.agent_base", "grinch_env.vector_base", "grinch_env.rendering",
        "grinch_env.<game>.env", "grinch_env.<game>.vector", "grinch_env.<game>._vector_numba", "grinch_env.<game>._vector_reference",
        "grinch_env.<game>.replay", "grinch_env.<game>.features", "grinch_env.<game>.render", "grinch_env.<game>.agents",
        "grinch_env.<game>.agents.*",
    )),
    ("harness/evaluation", (
        "grinch_env", "grinch_env.__main__", "grinch_env.agents", "grinch_env.play_base", "grinch_env.registry", "grinch_env.gym_env", "grinch_env.video",
        "grinch_env.<game>", "grinch_env.<game>.harness", "grinch_env.<game>.play",
        "grinch_env.evaluation", "grinch_env.evaluation.*", "grinch_env.integrations", "grinch_env.integrations.*",
        "grinch_env.web", "grinch_env.web.*", "grinch_env.parallel",
    )),
    ("training", ("training", "training.*")),
]
ROOT = PACKAGE.parent


def all_modules() -> dict[str, Path]:
    """Return every module of grinch_env and training by dotted name (a package by its own name)."""
    out = {}
    for top in ("grinch_env", "training"):
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


def layer_of(module: str) -> int:
    """Return the index in :data:`LAYERS` of ``module``, or fail naming it (a new module needs a layer)."""
    from fnmatch import fnmatchcase

    games = [spec.package.rpartition(".")[2] for spec in GAMES.values()]
    for index, (_, patterns) in enumerate(LAYERS):
        for pattern in patterns:
            for game in games:
                if fnmatchcase(module, pattern.replace("<game>", game)):
                    return index
    raise AssertionError(f"{module} is in no layer: add it to LAYERS in tests/test_architecture.py and to docs/architecture.md")


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> set[tuple[str, int]]:
    """Return ``(imported module, line)`` for every import in ``module``'s source, function-local ones included.

    ``from a.b import c`` counts as importing ``a.b.c`` when that is a module, else ``a.b``;
    ``importlib.import_module("a.b")`` with a literal name counts too.
    """
    import ast

    def known(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    is_package = path.name == "__init__.py"
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module if is_package else module.rpartition(".")[0]
                for _ in range(node.level - 1):
                    package = package.rpartition(".")[0]
                base = f"{package}.{base}" if base else package
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module" \
                and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            targets = [node.args[0].value]
        for target in targets:
            name = known(target)
            if name is not None and name != module:
                found.add((name, node.lineno))
    return found


def import_graph() -> dict[str, set[tuple[str, int]]]:
    modules = all_modules()
    return {module: imports_of(module, path, modules) for module, path in modules.items()}


def test_every_module_has_a_layer():
    for module in all_modules():
        layer_of(module)


def test_no_import_crosses_a_layer_upward():
    upward = [
        f"{module} (layer {LAYERS[layer_of(module)][0]}) imports {target} (layer {LAYERS[layer_of(target)][0]}) at line {line}"
        for module, targets in import_graph().items() for target, line in sorted(targets) if layer_of(target) > layer_of(module)
    ]
    assert upward == []


def test_the_import_graph_has_no_circle():
    from graphlib import CycleError, TopologicalSorter

    # A package's own __init__ importing its submodules, and those importing siblings through it, is Python's package
    # mechanism, not a circle between modules: edges between a package and the modules inside it are left out.
    def inside(a: str, b: str) -> bool:
        return a.startswith(b + ".") or b.startswith(a + ".")

    graph = {module: {t for t, _ in targets if not inside(module, t)} for module, targets in import_graph().items()}
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as exc:
        raise AssertionError(f"import circle: {' -> '.join(exc.args[1])}") from None


def test_the_graph_sees_function_local_and_relative_imports():
    # A hand-made module: its imports are found wherever they stand.
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.py"
        path.write_text("import grinch_env.games\n\ndef f():\n    from grinch_env.grinch import game\n    from . import scoring\n")
        modules = {"grinch_env.games": path, "grinch_env.grinch": path, "grinch_env.grinch.game": path, "grinch_env.grinch.scoring": path}
        assert imports_of("grinch_env.grinch.cards", path, modules) == {("grinch_env.games", 1), ("grinch_env.grinch.game", 4), ("grinch_env.grinch.scoring", 5)}
    assert layer_of("grinch_env.gnoming.game") < layer_of("grinch_env.gnoming.encoding") < layer_of("grinch_env.gnoming.env") < layer_of("grinch_env.evaluation.evaluate") < layer_of("training.train")


def test_no_import_hooks_or_alias_modules():
    import sys

    import training  # noqa: F401 - importing both packages must install nothing

    assert not (PACKAGE / "_aliases.py").exists() and "grinch_env._aliases" not in sys.modules
    assert [f for f in sys.meta_path if type(f).__module__.split(".")[0] in ("grinch_env", "training")] == []
    for old in ("grinch_env.game", "grinch_env.env_module", "grinch_env.agents.expectimax", "training.tournament", "training.evaluate"):
        assert old not in all_modules()


def test_the_architecture_page_names_files_and_tests_that_exist():
    import re

    text = (ROOT / "docs" / "architecture.md").read_text()
    tests = re.findall(r"tests/(test_\w+\.py)::(\w+)", text)
    assert len(tests) >= 10
    for file, name in tests:
        assert re.search(rf"^def {name}\(", (ROOT / "tests" / file).read_text(), re.M), f"docs/architecture.md names tests/{file}::{name}, which does not exist"
    paths = set(re.findall(r"`((?:grinch_env|training|tests)/[\w/]+\.py)", text))
    assert len(paths) >= 10
    assert [p for p in sorted(paths) if not (ROOT / p).exists()] == []
    for layer, _ in LAYERS:
        assert layer in text, f"docs/architecture.md does not show the layer {layer!r}"


def private_game_accesses(source: str) -> list[str]:
    """Return ``"line: name._attr"`` for each ``_private`` attribute read on a Game in ``source``.

    A Game is a function parameter annotated ``Game`` (``game: Game``, ``g: "Game"``), any name ``game``, and a
    name assigned a Game (``g = Game(...)``, ``g = game``) inside the same function.
    """
    import ast

    found = []
    for func in ast.walk(ast.parse(source)):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        args = func.args.posonlyargs + func.args.args + func.args.kwonlyargs
        games = {"game"} | {a.arg for a in args if a.annotation is not None and "Game" in ast.unparse(a.annotation)}
        for node in ast.walk(func):
            if isinstance(node, ast.Assign) and isinstance(node.value, (ast.Name, ast.Call)):
                value = node.value.func if isinstance(node.value, ast.Call) else node.value
                if isinstance(value, ast.Name) and (value.id == "Game" or value.id in games):
                    games |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        for node in ast.walk(func):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in games
                    and node.attr.startswith("_") and not node.attr.startswith("__")):
                found.append(f"{node.lineno}: {node.value.id}.{node.attr}")
    return found


def test_the_private_access_check_finds_a_private_game_read():
    source = (
        "def f(game, seat):\n    return game._can_draw()\n"
        "def h(state: Game):\n    g = state\n    return g._piles, state.piles\n"
        "def k(x):\n    return x._private\n"
    )
    assert private_game_accesses(source) == ["2: game._can_draw", "5: g._piles"]


def test_no_encoding_module_reads_a_private_game_attribute():
    # The encoders read a Game through its public interface (legal_mask, legal_actions, public state such as the
    # Grinch's read-only Game.pile_log), issue #22: every module of the encoding layer, both games.
    checked = []
    for module, path in all_modules().items():
        if LAYERS[layer_of(module)][0] == "encoding":
            assert private_game_accesses(path.read_text()) == [], f"{path.relative_to(ROOT)} reads private Game attributes"
            checked.append(module)
    assert {"grinch_env.grinch.encoding", "grinch_env.gnoming.encoding", "grinch_env.grinch.tokens", "grinch_env.gnoming.tokens"} <= set(checked)


@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_wrapper_and_raw_env_step_through_one_method(game, monkeypatch):
    # One step path (issue #22): ClassicWrapper's fast loop and raw_env.step both apply an action through
    # GameEnv._step_alive (Game.step, then the env's bookkeeping), so one seeded game gives one log either way.
    from grinch_env.aec import GameEnv

    spec = GAMES[game]
    calls = []
    step_alive = GameEnv._step_alive

    def counted(self, agent, action):
        calls.append((agent, action))
        step_alive(self, agent, action)

    monkeypatch.setattr(GameEnv, "_step_alive", counted)
    logs = []
    for make in (spec.harness.env, spec.harness.raw_env):
        calls.clear()
        env = make()
        env.reset(seed=3)
        rng = np.random.default_rng(3)
        for _ in env.agent_iter():
            obs, _, termination, truncation, _ = env.last()
            env.step(None if termination or truncation else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        assert calls == env.unwrapped.action_log and len(calls) > 50
        logs.append((list(calls), dict(env.unwrapped._cumulative_rewards)))
    assert logs[0] == logs[1]

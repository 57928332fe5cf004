"""``make_agent("champion", game=G)``: each game's shipped learned agent (checkpoints/champion_<G>), at the table sizes its
checkpoint was trained for, from the repository, from another working directory, and from a wheel installed in a clean venv."""

import json
import os
import shutil
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

from grinch_env.agents import CHAMPION_PACKAGE, champion_dir, champion_table_sizes, make_agent
from grinch_env.games import GAMES, get_game

ROOT = Path(__file__).resolve().parents[1]
TORCH = "torch==2.13.0"


def sizes_of(game):
    return champion_table_sizes(game)


def play_some(agent, game, n, seed=0, turns=40):
    """Let ``agent`` play every seat of a fresh env for up to ``turns`` turns; return how many had a real choice."""
    env = get_game(game).env(num_players=n)
    env.reset(seed=seed)
    choices = 0
    for _ in range(turns):
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            break
        mask = np.asarray(obs["action_mask"])
        action = agent.act(obs["observation"], mask)
        assert isinstance(action, int) and mask[action] == 1, (game, n, action)
        choices += int(mask.sum() > 1)
        env.step(action)
    return choices


@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_champion_plays_legal_moves_at_every_size_its_checkpoint_supports(game):
    assert champion_dir(game) == ROOT / "checkpoints" / f"champion_{game}"
    sizes = sizes_of(game)
    assert sizes and set(sizes) <= set(get_game(game).player_counts())
    for n in sizes:
        agent = make_agent("champion", game=game, num_players=n, seed=n)
        assert agent.name == "champion" and getattr(agent, "game", "grinch") == game
        assert play_some(agent, game, n, seed=n) > 0


@pytest.mark.parametrize("game", sorted(GAMES))
def test_an_unsupported_size_says_which_sizes_the_champion_plays(game):
    sizes = sizes_of(game)
    n = next((k for k in get_game(game).player_counts() if k not in sizes), get_game(game).max_players + 1)
    with pytest.raises(ValueError) as err:
        make_agent("champion", game=game, num_players=n)
    assert str(err.value).startswith(f"the {get_game(game).title} champion (make_agent('champion', game={game!r}), ")
    assert f"plays num_players in {sizes}, not {n}: its checkpoint was trained at those table sizes only" in str(err.value)


def test_champion_options_pass_through_to_the_afterstate_loader():
    agent = make_agent("champion:play=value", game="grinch", num_players=3)
    assert agent.name == "champion:play=value" and agent.play == "value"
    assert play_some(agent, "grinch", 3) > 0
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['bogus'\]; it takes "):
        make_agent("champion:bogus=1", game="gnoming")


def test_a_missing_path_is_no_checkpoint_and_an_unknown_name_is_unknown():
    for spec in ("checkpoints/nope", "checkpoints/nope:play=value"):
        with pytest.raises(ValueError) as err:
            make_agent(spec, game="grinch", num_players=4)
        text = str(err.value)
        assert text.startswith("no checkpoint at checkpoints/nope: it does not exist (from ") and "unknown agent" not in text
        assert "a run directory of python -m training.train holding latest.pt, a .pt file, an SB3 model .zip" in text
        assert "'champion' (the shipped learned agent) or a Grinch Grow Your Heart agent name: ['expectimax', 'greedy', 'random', 'search']" in text
    with pytest.raises(ValueError) as err:
        make_agent("nope", game="gnoming")
    assert str(err.value).startswith("unknown agent 'nope' for Gnoming A Round: use one of ['greedy', 'random', 'search'] (")
    assert "'champion' (the shipped learned agent, e.g. champion:play=value) or an existing checkpoint path" in str(err.value)


def test_the_harness_and_the_web_page_offer_the_champion():
    from grinch_env.evaluation.evaluate import evaluate
    from grinch_env.evaluation.league import default_agents

    n = sizes_of("gnoming")[0]
    result = evaluate(["champion", "greedy"], n, n, game="gnoming")
    assert set(result.per_agent) == {"champion", "greedy"}
    assert default_agents("grinch", 3)[-1] == "champion"
    try:
        from grinch_env.web.session import catalogue
    except ImportError as exc:  # the [web] extra
        pytest.skip(f"no web page here: {exc}")
    assert all(entry["champion"] is True for entry in catalogue().values())


CHECK = """
import json, sys
from grinch_env.agents import champion_dir, champion_table_sizes, make_agent
from grinch_env.games import get_game
out = {}
for game in ("grinch", "gnoming"):
    n = champion_table_sizes(game)[0]
    agent = make_agent("champion", game=game, num_players=n, seed=1)
    env = get_game(game).env(num_players=n)
    env.reset(seed=1)
    obs = env.last()[0]
    action = agent.act(obs["observation"], obs["action_mask"])
    assert obs["action_mask"][action] == 1
    out[game] = {"dir": str(champion_dir(game)), "name": agent.name, "sizes": champion_table_sizes(game), "action": action}
import grinch_env
out["package"] = grinch_env.__file__
print(json.dumps(out))
"""


def run_check(python, cwd, env=None, isolated=False):
    run = subprocess.run([str(python), *(["-I"] if isolated else []), "-c", CHECK], cwd=cwd, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "OMP_NUM_THREADS": "1", **(env or {})})
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.splitlines()[-1])


def test_the_champions_load_from_another_working_directory(tmp_path):
    try:
        metadata.distribution("grinch_env")  # installed (editable): found from anywhere
        env = {}
    except metadata.PackageNotFoundError:  # a bare checkout: only through the path
        env = {"PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    out = run_check(sys.executable, tmp_path, env)
    assert Path(out["package"]).resolve() == ROOT / "grinch_env" / "__init__.py"
    for game in ("grinch", "gnoming"):
        assert out[game]["dir"] == str(ROOT / "checkpoints" / f"champion_{game}") and out[game]["name"] == "champion"
        assert out[game]["sizes"] == sizes_of(game)


def test_the_package_list_holds_every_package_folder():
    # pyproject.toml lists the packages (grinch_env.champions is checkpoints/, not a folder of grinch_env/): none may be missing.
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    from setuptools import find_namespace_packages

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    found = set(find_namespace_packages(where=str(ROOT), include=["grinch_env*", "training*"]))
    champions = {CHAMPION_PACKAGE} | {f"{CHAMPION_PACKAGE}.champion_{game}{sub}" for game in GAMES for sub in ("", ".report")}
    assert set(config["packages"]) == found | champions and len(config["packages"]) == len(set(config["packages"]))
    assert config["package-dir"] == {CHAMPION_PACKAGE: "checkpoints"}
    data = config["package-data"]
    assert all({"latest.pt", "config.yaml"} <= set(data[f"{CHAMPION_PACKAGE}.champion_{game}"]) for game in GAMES)


def source_copy(dest):
    """Copy what git would commit (tracked and not-ignored files that exist) to ``dest``: a build sees no local leftovers."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT, capture_output=True, check=True).stdout
    for rel in filter(None, listed.decode().split("\0")):
        src = ROOT / rel
        if src.is_file() and not rel.startswith(("tests/", "docs/", "benchmarks/")):
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


def build_wheel(src, out):
    try:
        import build  # noqa: F401 - python -m build, without network
        cmd = [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out)]
    except ImportError:
        cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--disable-pip-version-check", "-q", "-w", str(out), "."]
    run = subprocess.run(cmd, cwd=src, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    (wheel,) = out.glob("grinch_env-*.whl")
    return wheel


def test_a_wheel_in_a_clean_venv_plays_both_champions_from_an_empty_folder(tmp_path):
    src, out, empty = tmp_path / "src", tmp_path / "dist", tmp_path / "empty"
    for d in (src, out, empty):
        d.mkdir()
    source_copy(src)
    wheel = build_wheel(src, out)
    names = set(zipfile.ZipFile(wheel).namelist())
    for game in ("grinch", "gnoming"):
        assert {f"grinch_env/champions/champion_{game}/{f}" for f in ("latest.pt", "config.yaml", "report/summary.json")} <= names
    shipped = {p.relative_to(src).as_posix() for top in ("grinch_env", "training") for p in (src / top).rglob("*.py")}
    assert shipped - names == set()
    assert not any(n.startswith("checkpoints/") or (n.endswith(".png") and "champion" in n) for n in names)

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)  # clean: no system site-packages
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-input"]
    for args in ([TORCH], [f"{wheel}[champion]"]):  # torch first, then the wheel and its declared runtime dependencies
        run = subprocess.run(pip + args, capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stderr[-3000:]
    result = run_check(python, empty, {"PYTHONPATH": ""}, isolated=True)
    site = Path(result["package"]).parent
    assert venv in site.parents and ROOT not in site.parents
    for game in ("grinch", "gnoming"):
        assert result[game]["dir"] == str(site / "champions" / f"champion_{game}") and result[game]["name"] == "champion"
        assert result[game]["sizes"] == sizes_of(game)
    assert os.listdir(empty) == []

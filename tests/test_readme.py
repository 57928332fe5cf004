"""Every command in README.md and docs/ runs as printed: each parses (the module exists, its CLI accepts the flags), the cheap ones run.

Commands are the lines of ``bash`` code blocks and the inline spans that
start a command (``python -m ...``, ``python benchmarks/...``, a console
script).  Parsing calls the command's own ``main`` with ``parse_args``
patched to stop right after a successful parse, so nothing is trained or
written.  The README's Python examples are run too, the README stays a short guide (at most 250 lines), the key
table of docs/training.md is the trainer's config schema, and docs/ holds pages, not scripts.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import runpy
import shlex
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
import yaml

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
SCRIPTS = PYPROJECT["project"]["scripts"]
EXTRAS = set(PYPROJECT["project"]["optional-dependencies"])
INLINE = re.compile(r"`((?:python3? (?:-m \w|benchmarks/|tests/)|(?:" + "|".join(map(re.escape, SCRIPTS)) + r") )[^`]*)`")
README_LINES = 250  # the README is a user guide; the detail lives in docs/


def _run_name(config: Path) -> str:
    """The run directory's name of a training config: ``checkpoint.run_name``, by default the file's stem."""
    data = yaml.safe_load(config.read_text()) or {}
    return str((data.get("checkpoint") or {}).get("run_name") or config.stem)


# Run directories a printed command makes for a later one: a config's run directory or a ``--set
# checkpoint.run_name=NAME`` on a page.  Anything else under checkpoints/ must be in the clean clone (CI's), not only in
# this checkout's scratch runs.
RUN_NAMES = {_run_name(config) for config in (ROOT / "configs").glob("*.yaml")}
RUN_NAMES |= {m for page in PAGES for m in re.findall(r"run_name=(\w+)", page.read_text())}
MADE_BY_AN_EARLIER_COMMAND = {f"checkpoints/{name}" for name in RUN_NAMES}
# Cheap enough to run as printed, with no input (a terminal game then leaves at its first prompt).
CHEAP = {"grinch_env", "grinch_env.grinch.play", "grinch_env.gnoming.play"}


def page_commands(path: Path) -> list[str]:
    """Return the commands of one page: each ``bash`` block's lines (continuations joined), then its inline command spans."""
    text = path.read_text()
    found = []
    for block in re.findall(r"^```bash\n(.*?)^```", text, re.S | re.M):
        for line in block.replace("\\\n", " ").splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                found.append(line.strip())
    prose = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    found += [m.group(1) for m in INLINE.finditer(prose.replace("\n", " "))]
    return found


def simple_commands(line: str) -> list[list[str]]:
    """Return the simple commands of a shell line (split at ``&&``, ``;`` and ``|``; comments and ``VAR=value`` prefixes dropped).

    ``for v in a b; do CMD; done`` gives ``CMD`` once per value, ``$v`` replaced.
    """
    loop = re.fullmatch(r"for (\w+) in ([^;]+); do (.*); done", line.strip())
    if loop:
        var, values, body = loop.groups()
        return [argv for value in values.split() for argv in simple_commands(body.replace(f"${var}", value))]
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    out: list[list[str]] = [[]]
    for token in lexer:
        if token in ("&&", ";", "|", "||"):
            out.append([])
        elif out[-1] or not re.fullmatch(r"[A-Z_]+=\S*", token):
            out[-1].append(token)
    return [argv for argv in out if argv]


ALL = sorted({(str(page.relative_to(ROOT)), cmd) for page in PAGES for cmd in page_commands(page)})


class _ParsedError(Exception):
    pass


def _stop_after_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    real = argparse.ArgumentParser.parse_args

    def parse_args(self, args=None, namespace=None):  # noqa: ANN001, ANN202 - argparse's signature
        real(self, args, namespace)  # exits 2 with the parser's message on a bad flag
        raise _ParsedError

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse_args)


def check_paths(args: list[str]) -> None:
    """Fail for a repository path in ``args`` that does not exist (configs, checkpoints, benchmarks, tests, docs)."""
    for arg in args:
        for piece in re.split(r"[,=:]", arg):  # ":" ends an agent spec's path (PATH:search=1,...)
            if re.match(r"(configs|checkpoints|benchmarks|tests|docs)/", piece) and "/".join(piece.split("/")[:2]) not in MADE_BY_AN_EARLIER_COMMAND:
                assert (ROOT / piece).exists(), f"{piece} does not exist"


def check_parses(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Check that one simple command exists and that its command-line parser accepts its arguments."""
    name, args = argv[0], argv[1:]
    check_paths(args)
    if name in ("pip", "pip3"):
        for extra in re.findall(r"\.\[([\w,]+)\]", " ".join(args)):
            assert set(extra.split(",")) <= EXTRAS, f"unknown extra in {extra!r}: the extras are {sorted(EXTRAS)}"
        return
    if name in ("cp", "mkdir", "tar", "git", "pytest", "ray", "apt-get") or args[:2] == ["-m", "pytest"]:
        # file copies and unpacking (sources checked above), git, the test runner, Ray's CLI, Debian packages
        return
    if name in SCRIPTS:
        module, _, function = SCRIPTS[name].partition(":")
        run = lambda: getattr(__import__(module, fromlist=[function]), function)(args)  # noqa: E731
    else:
        assert name in ("python", "python3") and args, f"unknown command {name!r}"
        if args[0] == "-m":
            module, args = args[1], args[2:]
            run = lambda: runpy.run_module(module, run_name="__main__", alter_sys=True)  # noqa: E731
        else:
            script, args = args[0], args[1:]
            assert (ROOT / script).is_file(), f"{script} does not exist"
            run = lambda: runpy.run_path(str(ROOT / script), run_name="__main__")  # noqa: E731
    _stop_after_parse(monkeypatch)
    monkeypatch.setattr(sys, "argv", [name, *args])
    err = io.StringIO()
    try:
        with redirect_stdout(io.StringIO()), redirect_stderr(err):
            run()
    except _ParsedError:
        return
    except SystemExit as exc:
        assert exc.code in (0, None), f"{' '.join(argv)}: {err.getvalue().strip()}"
        return
    raise AssertionError(f"{' '.join(argv)} ran without parsing a command line")


@pytest.mark.filterwarnings("ignore:.*found in sys.modules:RuntimeWarning")  # runpy re-running an imported module
@pytest.mark.parametrize(("page", "line"), ALL)
def test_every_command_parses(page, line, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))  # python -m benchmarks.* and the scripts run from the repository root
    monkeypatch.chdir(ROOT)
    for argv in simple_commands(line):
        check_parses(argv, monkeypatch)


def test_the_pages_hold_the_commands_that_matter():
    assert len(ALL) >= 60
    readme = [re.sub(r"\s+#.*$", "", line) for line in page_commands(ROOT / "README.md")]  # without trailing comments
    # the quick start: command 1 (install, train the quick-start config, its report), its Gnoming line, command 2 (the tests)
    assert readme[:3] == [
        'pip install torch==2.13.0 && pip install -e ".[train]" && python -m training.train --config configs/grinch.yaml',
        "python -m training.train --config configs/gnoming.yaml",
        'apt-get update && apt-get install -y chromium chromium-driver && pip install torch==2.13.0 && pip install -e ".[dev,ray]" && python3 -m pytest',
    ]
    # command 2 installs what CI installs and ends with CI's own test command (.ci/run's last line)
    ci = (ROOT / ".ci" / "run").read_text()
    ci_lines = [line.strip() for line in ci.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert "torch==2.13.0" in ci and '-e ".[dev,ray]"' in ci and "chromium chromium-driver" in ci
    assert simple_commands(readme[2])[-1] == simple_commands(ci_lines[-1])[-1] == ["python3", "-m", "pytest"]
    # the one trainer and the league are on the front page
    for needle in ("python -m training.train --resume", "python -m training.train --report", "python -m grinch_env.evaluation.league"):
        assert any(line.startswith(needle) for line in readme), needle


def test_the_readme_is_a_short_guide():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= README_LINES, f"README.md has {len(lines)} lines; at most {README_LINES} (move detail to docs/)"


def test_docs_hold_pages_not_scripts():
    scripts = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.py"))
    assert scripts == [], f"Python files under docs/ (a study's script belongs in benchmarks/ or the package): {scripts}"


def schema_keys() -> set[str]:
    """Every dotted key of the trainer's config schema (training.config.TrainConfig), sections included."""
    import typing

    from pydantic import BaseModel

    from training.config import TrainConfig

    def section(annotation):  # noqa: ANN001, ANN202 - a pydantic annotation
        for candidate in (annotation, *typing.get_args(annotation)):
            if isinstance(candidate, type) and issubclass(candidate, BaseModel):
                return candidate
        return None

    keys: set[str] = set()

    def walk(model, prefix):  # noqa: ANN001, ANN202
        for name, field in model.model_fields.items():
            keys.add(prefix + name)
            sub = section(field.annotation)
            if sub is not None:
                walk(sub, f"{prefix}{name}.")

    walk(TrainConfig, "")
    return keys


def test_the_training_page_lists_every_config_key_and_no_other():
    text = (ROOT / "docs" / "training.md").read_text()
    table = text.split("\n## Every key\n", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"^\| `([\w.]+)` \|", table, re.M))
    keys = schema_keys()
    assert sorted(keys - listed) == [], "keys of training.config.TrainConfig missing from docs/training.md's key table"
    assert sorted(listed - keys) == [], "docs/training.md lists keys the trainer's config does not have"


def test_code_blocks_say_their_language():
    # A command in an unlabelled block would escape the checks above.
    for page in PAGES:
        fences = re.findall(r"^```(\w*)$", page.read_text(), re.M)
        openings = fences[0::2]
        assert "" not in openings, f"{page.relative_to(ROOT)}: a code block without a language (bash, python, yaml, text)"


def test_the_parse_check_catches_a_wrong_flag_and_a_missing_module(monkeypatch):
    monkeypatch.chdir(ROOT)
    with pytest.raises(AssertionError, match="unrecognized arguments: --no-such-flag"):
        check_parses(["python", "-m", "grinch_env.evaluation", "--agents", "greedy,random", "--no-such-flag"], monkeypatch)
    with pytest.raises(ImportError):
        check_parses(["python", "-m", "grinch_env.no_such_module"], monkeypatch)
    with pytest.raises(AssertionError, match="configs/nope.yaml does not exist"):
        check_parses(["python", "-m", "training.train", "--config", "configs/nope.yaml"], monkeypatch)
    assert simple_commands("OMP_NUM_THREADS=1 python -m a --x 1 && pytest  # comment") == [["python", "-m", "a", "--x", "1"], ["pytest"]]
    assert simple_commands("for p in 8 32; do python -m m --n $p; done") == [["python", "-m", "m", "--n", "8"], ["python", "-m", "m", "--n", "32"]]


CHEAP_LINES = sorted({line for _, line in ALL for argv in simple_commands(line) if argv[:2] == ["python", "-m"] and argv[2] in CHEAP})


@pytest.mark.parametrize("line", CHEAP_LINES)
def test_cheap_commands_run(line, tmp_path):
    assert len(CHEAP_LINES) >= 3
    # Run in a scratch folder that sees the repository's inputs, so what a command writes (a video) stays out of the tree.
    for name in ("checkpoints", "configs"):
        (tmp_path / name).symlink_to(ROOT / name)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    for argv in simple_commands(line):
        done = subprocess.run([sys.executable, *argv[1:]], cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.strip()


README_BLOCKS = re.findall(r"^```python\n(.*?)^```", (ROOT / "README.md").read_text(), re.S | re.M)


def test_the_readme_has_its_four_python_examples():
    assert len(README_BLOCKS) == 4


@pytest.mark.parametrize("index", range(len(README_BLOCKS)))
def test_the_readme_python_examples_run(index, monkeypatch):
    monkeypatch.chdir(ROOT)  # the champion example loads checkpoints/ from the repository
    out = io.StringIO()
    with redirect_stdout(out):
        exec(compile(README_BLOCKS[index], "README.md", "exec"), {})
    text = out.getvalue()
    if index < 2:  # the two AEC loops print the final table
        assert "total" in text or "pad" in text
    elif index == 2:  # the registry example: a 5-player Gnoming frame (1408 wide, 880 high), the 1046-float observation, 9 legal first moves
        assert text == "(880, 1408, 3) uint8 (1046,) 9\n"
    else:  # the agents example: champion against greedy, each seat's agent and final total
        assert "greedy" in text and "player_0" in text

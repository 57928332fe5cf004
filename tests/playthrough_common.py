"""What both games' saved-playthrough tests share: where the files live, the digests, the check and the regenerate command."""

from __future__ import annotations

import argparse
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent / "playthroughs"


def digest(*items: Any) -> str:
    """Return 16 hex digits of SHA-1 over ``items`` (arrays by their bytes, anything else as sorted JSON)."""
    h = hashlib.sha1()
    for x in items:
        h.update(x.tobytes() if isinstance(x, np.ndarray) else json.dumps(x, sort_keys=True).encode())
    return h.hexdigest()[:16]


def everyone_digest(env: Any) -> str:
    """Return the digest of every seat's observation and mask, in seat order."""
    return digest(*[x for o in (env.observe(a) for a in env.possible_agents) for x in (o["observation"], o["action_mask"])])


def record_random_game(env: Any, spec: dict, title: str, script: str, decide: Callable[[int, str, int], str]) -> tuple[list[str], dict[str, float]]:
    """Play a seeded random game on ``env`` and return ``(lines, rewards)``: the file's header, then one line per decision.

    ``decide(i, agent, action)`` returns decision ``i``'s line and steps the env with ``action``.
    """
    env.reset(seed=spec["seed"])
    rng = np.random.default_rng(spec["seed"] + 1000)
    lines = [
        f"# A seeded random game of {title}, replayed by {script}.",
        f"# Regenerate only after an intended change: python {script} --regenerate",
        "spec " + json.dumps(spec, sort_keys=True),
    ]
    rewards = {}
    for i, agent in enumerate(env.agent_iter()):
        obs, reward, termination, truncation, _ = env.last()
        if termination or truncation:
            rewards[agent] = reward
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        lines.append(decide(i, agent, int(legal[rng.integers(len(legal))])))
    return lines, rewards


def check_saved(name: str, games: dict[str, dict], record: Callable[[dict], str], replay: Callable[[str], None], script: str) -> None:
    """Replay the saved file ``name`` line by line, and check that recording its spec again writes the same text."""
    path = HERE / name
    assert path.exists(), f"{path} is missing: run python {script} --regenerate"
    text = path.read_text()
    replay(text)
    assert text == record(games[name])  # and the same seeds still play the same game


def main(argv: list[str] | None, description: str, games: dict[str, dict], record: Callable[[dict], str], replay: Callable[[str], None]) -> None:
    """Check the saved playthroughs of ``games``, or with ``--regenerate`` write them again."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--regenerate", action="store_true", help="rewrite the files (after an intended change)")
    args = parser.parse_args(argv)
    HERE.mkdir(exist_ok=True)
    for name, spec in sorted(games.items()):
        path = HERE / name
        if args.regenerate:
            path.write_text(record(spec))
            print(f"wrote {path}")
        else:
            replay(path.read_text())
            print(f"ok {path}")

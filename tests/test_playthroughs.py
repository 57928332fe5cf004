"""Saved playthroughs: full seeded games recorded in ``tests/playthroughs/`` and replayed as regression tests.

Each file holds the env arguments and the reset seed, then one line per
decision: the agent, its action, its legal actions, a digest of its
observation and mask, and a digest of every seat's observation and mask;
then the final totals and rewards.  A change of the rules, the encoding or
the seeding shows up as the first line that differs.

Regenerate (only after an intended change, and say so in the commit)::

    python tests/test_playthroughs.py --regenerate
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from playthrough_common import HERE, check_saved, digest, everyone_digest, main, record_random_game

import grinch_env

GAMES = {
    "p2_seed1.txt": {"num_players": 2, "seed": 1},
    "p4_seed2.txt": {"num_players": 4, "seed": 2},
    "p4_seed4_margin_first_grinch2.txt": {"num_players": 4, "seed": 4, "reward_mode": "margin", "first_grinch": 2},
    "p6_seed3.txt": {"num_players": 6, "seed": 3},
}



def step_line(env, agent: str, action: int) -> str:
    obs = env.observe(agent)
    legal = ",".join(str(a) for a in np.flatnonzero(obs["action_mask"]))
    return f"{agent} {action} legal={legal} obs={digest(obs['observation'], obs['action_mask'])} all={everyone_digest(env)}"


def record(spec: dict) -> str:
    """Return the text of a random seeded game played with ``spec``."""
    kwargs = {k: v for k, v in spec.items() if k != "seed"}
    env = grinch_env.raw_env(**kwargs)

    def decide(i: int, agent: str, action: int) -> str:
        line = f"{i} " + step_line(env, agent, action)
        env.step(action)
        return line

    lines, rewards = record_random_game(env, spec, "grinch_env", "tests/test_playthroughs.py", decide)
    lines.append("totals " + " ".join(str(t) for t in env.game.totals))
    lines.append("rewards " + " ".join(repr(rewards[a]) for a in env.possible_agents))
    return "\n".join(lines) + "\n"


def replay(text: str) -> None:
    """Replay a recorded game and assert every recorded line."""
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    spec = json.loads(lines[0].removeprefix("spec "))
    kwargs = {k: v for k, v in spec.items() if k != "seed"}
    env = grinch_env.raw_env(**kwargs)
    env.reset(seed=spec["seed"])
    steps = lines[1:-2]
    assert steps, "no decisions recorded"
    for line in steps:
        i, agent, action = line.split()[:3]
        assert env.agent_selection == agent, f"line {i}: {env.agent_selection} is to act, the file says {agent}"
        assert f"{i} " + step_line(env, agent, int(action)) == line, f"first difference at decision {i}"
        env.step(int(action))
    assert env.game.done
    assert lines[-2] == "totals " + " ".join(str(t) for t in env.game.totals)
    rewards = [env._cumulative_rewards[a] for a in env.possible_agents]
    assert lines[-1] == "rewards " + " ".join(repr(r) for r in rewards)


@pytest.mark.parametrize("name", sorted(GAMES))
def test_saved_playthrough_replays_exactly(name):
    check_saved(name, GAMES, record, replay, "tests/test_playthroughs.py")


def test_replay_detects_a_change():
    text = (HERE / "p2_seed1.txt").read_text()
    lines = text.splitlines()
    k = next(i for i, line in enumerate(lines) if line.startswith("5 "))
    head, obs = lines[k].rsplit(" obs=", 1)
    lines[k] = head + " obs=" + ("0" * 16) + obs[16:]
    with pytest.raises(AssertionError, match="first difference at decision 5"):
        replay("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(None, "Write or check the saved playthroughs in tests/playthroughs/.", GAMES, record, replay)

"""Saved Gnoming playthroughs: seeded random games recorded in ``tests/playthroughs/gnoming_*.txt``, replayed exactly.

Each file holds the env arguments and the reset seed, then one line per
decision: the index, the agent, its action, the phase, its legal actions, the
automatic decisions the engine then played, a digest of the actor's
observation and mask, a digest of every seat's observation and mask, and a
digest of the true state (``game_state()``); then every round's scores, the
totals and the rewards.  A change of the rules, the encoding or the seeding
shows up as the first line that differs.

Regenerate (only after an intended change, and say so in the commit)::

    python tests/test_gnoming_playthroughs.py --regenerate
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from playthrough_common import HERE, check_saved, digest, everyone_digest, main, record_random_game

import grinch_env.gnoming as gn

GAMES = {
    "gnoming_p3_seed1.txt": {"num_players": 3, "seed": 1},
    "gnoming_p4_seed2_free_fixed.txt": {"num_players": 4, "seed": 2, "discard_take": "free", "start_rotation": "fixed", "first_player": 3},
    "gnoming_p5_seed3_margin_single.txt": {"num_players": 5, "seed": 3, "reward_mode": "margin", "mulligan_lines": "single"},
    "gnoming_p7_seed4_cap10.txt": {"num_players": 7, "seed": 4, "max_turns_per_player": 10},
}



def step_line(env, agent: str, action: int) -> str:
    """Return the line of one decision (before it is stepped)."""
    obs = env.observe(agent)
    legal = ",".join(str(a) for a in np.flatnonzero(obs["action_mask"]))
    return (
        f"{agent} {action} phase={env.game.phase.value} legal={legal} "
        f"obs={digest(obs['observation'], obs['action_mask'])} "
        f"all={everyone_digest(env)} "
        f"state={digest(env.game_state())}"
    )


def record(spec: dict) -> str:
    """Return the text of a random seeded game played with ``spec`` (the function that writes the files)."""
    kwargs = {k: v for k, v in spec.items() if k != "seed"}
    env = gn.raw_env(**kwargs)

    def decide(i: int, agent: str, action: int) -> str:
        line = f"{i} " + step_line(env, agent, action)
        before = len(env.game.auto_log)
        env.step(action)
        auto = ",".join(f"{s}:{a}" for s, a in env.game.auto_log[before:])
        return line + f" auto={auto or '-'}"

    lines, rewards = record_random_game(env, spec, "Gnoming A Round", "tests/test_gnoming_playthroughs.py", decide)
    for r, scores in enumerate(env.game.round_scores):
        lines.append(f"round {r} " + " ".join(str(s) for s in scores))
    lines.append("totals " + " ".join(str(t) for t in env.game.totals))
    lines.append("rewards " + " ".join(repr(rewards[a]) for a in env.possible_agents))
    return "\n".join(lines) + "\n"


def replay(text: str) -> None:
    """Replay a recorded game and assert every recorded line."""
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    spec = json.loads(lines[0].removeprefix("spec "))
    kwargs = {k: v for k, v in spec.items() if k != "seed"}
    env = gn.raw_env(**kwargs)
    env.reset(seed=spec["seed"])
    steps = [line for line in lines[1:] if line.split()[0].isdigit()]
    assert len(steps) > 100, "too few decisions recorded"
    rewards = {}
    for line in steps:
        i, agent, action = line.split()[:3]
        assert env.agent_selection == agent, f"line {i}: {env.agent_selection} is to act, the file says {agent}"
        expected = f"{i} " + step_line(env, agent, int(action))
        assert line.startswith(expected + " auto="), f"first difference at decision {i}"
        before = len(env.game.auto_log)
        env.step(int(action))
        auto = ",".join(f"{s}:{a}" for s, a in env.game.auto_log[before:])
        assert line.endswith(f" auto={auto or '-'}"), f"first difference at decision {i} (automatic decisions)"
        if env.game.done:
            rewards = {a: env._cumulative_rewards[a] for a in env.possible_agents}
    assert env.game.done
    tail = [line for line in lines[1:] if not line.split()[0].isdigit()]
    assert tail[:3] == [f"round {r} " + " ".join(str(s) for s in scores) for r, scores in enumerate(env.game.round_scores)]
    assert tail[3] == "totals " + " ".join(str(t) for t in env.game.totals)
    assert tail[4] == "rewards " + " ".join(repr(rewards[a]) for a in env.possible_agents)


@pytest.mark.parametrize("name", sorted(GAMES))
def test_saved_playthrough_replays_exactly(name):
    check_saved(name, GAMES, record, replay, "tests/test_gnoming_playthroughs.py")


def test_replay_detects_a_change():
    text = (HERE / "gnoming_p3_seed1.txt").read_text()
    lines = text.splitlines()
    k = next(i for i, line in enumerate(lines) if line.startswith("7 "))
    head, rest = lines[k].split(" state=", 1)
    lines[k] = head + " state=" + ("0" * 16) + rest[16:]
    with pytest.raises(AssertionError, match="first difference at decision 7"):
        replay("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(None, "Write or check the saved Gnoming playthroughs in tests/playthroughs/.", GAMES, record, replay)

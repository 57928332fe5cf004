"""``python -m grinch_env``: play and print one seeded game between random agents.

Example::

    python -m grinch_env --players 4 --seed 7

Prints the table (every hand shown) when each round's scoring begins, the
rows each player scores, and the final totals and rewards.  The same seed
gives the same game.
"""

from __future__ import annotations

import argparse

import numpy as np

from grinch_env.grinch.env import REWARD_MODES, raw_env
from grinch_env.grinch.game import MAX_PLAYERS, MIN_PLAYERS, PHASE_SCORE, action_name


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Return the parsed command line."""
    parser = argparse.ArgumentParser(prog="python -m grinch_env", description="Play one seeded game of Grinch Grow Your Heart between random agents.")
    parser.add_argument("--players", type=int, default=4, choices=range(MIN_PLAYERS, MAX_PLAYERS + 1), help="table size (default 4)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the deals and of the random agents (default 0)")
    parser.add_argument("--bonus-layout", default="standard", choices=("standard", "none"), help="bonus cards (default standard)")
    parser.add_argument("--first-grinch", type=int, default=0, help="seat of the first Grinch (default 0)")
    parser.add_argument("--num-rounds", type=int, default=None, help="rounds to play (default: the rules' number)")
    parser.add_argument("--reward-mode", default="win", choices=REWARD_MODES, help="terminal reward (default win)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Play the game the command line describes, print it, and return the exit status 0."""
    args = parse_args(argv)
    try:
        env = raw_env(
            num_players=args.players,
            bonus_layout=args.bonus_layout,
            first_grinch=args.first_grinch,
            num_rounds=args.num_rounds,
            reward_mode=args.reward_mode,
            render_mode="ansi",
        )
    except ValueError as err:
        raise SystemExit(f"python -m grinch_env: error: {err}") from None
    env.reset(seed=args.seed)
    rng = np.random.default_rng(args.seed)
    game = env.game
    print(f"Grinch Grow Your Heart: {args.players} players, {game.num_rounds} rounds, seed {args.seed}, random agents")
    shown_round = -1
    rewards: dict[str, float] = {}
    for agent in env.agent_iter():
        obs, reward, termination, truncation, _info = env.last()
        if termination or truncation:
            rewards[agent] = reward
            env.step(None)
            continue
        if game.phase == PHASE_SCORE and shown_round != game.round:
            shown_round = game.round
            print(f"\n=== end of round {game.round + 1}/{game.num_rounds}: scoring (Grinch: seat {game.grinch}) ===")
            print(env.render())
        legal = np.flatnonzero(obs["action_mask"])
        action = int(legal[rng.integers(len(legal))])
        if game.phase == PHASE_SCORE:
            seat = env.agent_name_mapping[agent]
            print(f"  {agent} {action_name(action)}: {game.hand_value(seat, action - 55)} points")
        env.step(action)
    print("\n=== final scores ===")
    totals = game.totals
    state = env.game_state()
    for seat, agent in enumerate(env.possible_agents):
        pad = " ".join("." if v is None else str(v) for v in state["score_sheet"][seat])
        print(f"{agent}: pad [{pad}]  total {totals[seat]}")
    winners = game.winners()
    print("winner" + ("s" if len(winners) > 1 else "") + ": " + ", ".join(env.possible_agents[w] for w in winners))
    print("rewards: " + ", ".join(f"{a} {rewards[a]:+.3f}" for a in env.possible_agents))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""``python -m grinch_env``: play and print one seeded game between random agents.

Example::

    python -m grinch_env --players 4 --seed 7
    python -m grinch_env --game gnoming --players 5 --seed 7

Prints every move as ``python -m grinch_env.grinch.play`` describes it, with every
hand shown (the deal, each Who's two automatic draws, the Grinch's draws and
the card each draw took, every discard, the row each player scores), the
score pads with labelled columns after each round, and the final totals and
rewards.  The same seed gives the same game.  ``--game gnoming`` watches a
game of *Gnoming A Round* the same way, every layout shown as a 3x3 grid.
"""

from __future__ import annotations

import argparse

import numpy as np

from grinch_env.games import get_game
from grinch_env.grinch.cards import card_name
from grinch_env.grinch.env import raw_env
from grinch_env.grinch.game import DEAL_SIZE, DRAW_PILE_ACTION, PHASE_DISCARD, PHASE_SCORE, REWARD_MODES, SCORE_BASE, Game
from grinch_env.grinch.play import describe_action
from grinch_env.grinch.scoring import ROW_NAMES


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Return the parsed command line."""
    parser = argparse.ArgumentParser(prog="python -m grinch_env", description="Play one seeded game of Grinch Grow Your Heart between random agents.")
    parser.add_argument("--game", choices=("grinch", "gnoming"), default="grinch", help="the game (default grinch)")
    parser.add_argument("--players", type=int, default=4, help="table size (grinch 2..6, gnoming 3..7; default 4)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the deals and of the random agents (default 0)")
    parser.add_argument("--bonus-layout", default="standard", choices=("standard", "none"), help="bonus cards (default standard)")
    parser.add_argument("--first-grinch", type=int, default=0, help="seat of the first Grinch (default 0)")
    parser.add_argument("--num-rounds", type=int, default=None, help="rounds to play (default: the rules' number)")
    parser.add_argument("--reward-mode", default="win", choices=REWARD_MODES, help="terminal reward (default win)")
    args = parser.parse_args(argv)
    spec = get_game(args.game)
    if args.players not in spec.player_counts():
        parser.error(f"argument --players: {args.players} is not a table size of {spec.title}: choose from {spec.min_players}..{spec.max_players}")
    return args


def main(argv: list[str] | None = None) -> int:
    """Play the game the command line describes, print it, and return the exit status 0."""
    args = parse_args(argv)
    if args.game == "gnoming":
        return _watch_gnoming(args)
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
    n = game.num_players
    print(f"Grinch Grow Your Heart: {n} players, {game.num_rounds} rounds, seed {args.seed}, random agents (every hand shown)")
    shown = (-1, None)  # the (round, turn) announced last
    held: list[list[int]] = []  # each hand after its owner's last move, to announce a Who's automatic draws
    rewards: dict[str, float] = {}
    for agent in env.agent_iter():
        obs, reward, termination, truncation, _info = env.last()
        if termination or truncation:
            rewards[agent] = reward
            env.step(None)
            continue
        if shown[0] != game.round:
            held = [hand[:DEAL_SIZE] for hand in game.hands]  # the first Who has drawn already: announce it below
            print(f"\n=== round {game.round + 1}/{game.num_rounds}: seat {game.grinch} is the Grinch; draw pile {len(game.draw_pile) + sum(len(h) - DEAL_SIZE for h in game.hands)} cards ===")
            print("dealt: " + " | ".join(f"seat {p} ({_role(game, p)}) {_cards(held[p])}" for p in range(n)))
        if shown != (game.round, game.turn):
            shown = (game.round, game.turn)
            print("-- scoring --" if game.phase == PHASE_SCORE else f"-- turn {game.turn} --")
        legal = np.flatnonzero(obs["action_mask"])
        action = int(legal[rng.integers(len(legal))])
        p = env.agent_name_mapping[agent]
        new = [c for c in game.hands[p] if c not in held[p]]
        if game.phase == PHASE_DISCARD and p != game.grinch and new:
            print(f"  seat {p} (Who) draws {_cards(new)} from the draw pile")
        line = describe_action(game, p, action, [_role(game, q) for q in range(n)])
        if action >= SCORE_BASE:
            line += f" with {_cards(sorted(game.hands[p]))}"
        env.step(action)
        if action == DRAW_PILE_ACTION:
            line += f": {card_name(game.hands[p][-1])}"
        print("  " + line)
        held[p] = list(game.hands[p])  # not the others': a discard can start the next Who's turn, whose draws come next
        if action >= SCORE_BASE and game.round != shown[0] and not game.done:  # a round is over (the last one's pads come below)
            print(pad_table(game))
    print("\n=== final scores ===")
    print(pad_table(game))
    winners = game.winners()
    print("winner" + ("s" if len(winners) > 1 else "") + ": " + ", ".join(env.possible_agents[w] for w in winners))
    print("rewards: " + ", ".join(f"{a} {rewards[a]:+.3f}" for a in env.possible_agents))
    return 0


def _role(game: Game, seat: int) -> str:
    return "Grinch" if seat == game.grinch else "Who"


def _cards(cards: list[int]) -> str:
    return " ".join(card_name(c) for c in cards)


def pad_table(game: Game) -> str:
    """Return every player's score pad as a table with a column per row of the pad ("." unused) and the total."""
    head = ["player"] + list(ROW_NAMES) + ["total"]
    rows = [[f"player_{p}"] + ["." if v is None else str(v) for v in game.score_sheet[p]] + [str(game.totals[p])] for p in range(game.num_players)]
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    return "\n".join("  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(r, widths))) for r in [head, *rows])



def _watch_gnoming(args: argparse.Namespace) -> int:
    """Print a seeded game of Gnoming A Round between random agents (the terminal game's watch mode)."""
    import sys

    from grinch_env.gnoming.play import play

    if args.players not in range(3, 8):
        raise SystemExit(f"python -m grinch_env: error: Gnoming A Round is played by 3..7 players, got {args.players}")
    play(args.players, ["random"], args.seed, None, sys.stdin, sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

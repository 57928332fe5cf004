"""``python -m grinch_env``: play and print one seeded game between random agents (or ``--agents``), optionally as a video.

Example::

    python -m grinch_env --players 4 --seed 7
    python -m grinch_env --game gnoming --players 5 --seed 7
    python -m grinch_env --players 4 --agents champion,greedy --video grinch.mp4

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
    parser.add_argument("--agents", default=None, help="comma-separated agent specs by seat, repeated to fill the table (random, greedy, "
                        "expectimax:samples=N, search, champion (the shipped learned agent), a run directory such as checkpoints/grinch; default: random moves)")
    parser.add_argument("--video", default=None, metavar="PATH", help="also write a video of the game (.mp4 or .gif; needs grinch_env[render])")
    parser.add_argument("--video-seat", type=int, default=None, help="the video shows this seat's view (default: the spectator's, every card)")
    parser.add_argument("--video-seconds", type=float, default=30.0, help="the game's length in the video (default 30; the final table is held 3 s more)")
    args = parser.parse_args(argv)
    spec = get_game(args.game)
    if args.players not in spec.player_counts():
        parser.error(f"argument --players: {args.players} is not a table size of {spec.title}: choose from {spec.min_players}..{spec.max_players}")
    try:
        if args.video is not None:
            from grinch_env.video import check_video_path, fps_for

            check_video_path(args.video)
            fps_for(1, args.video_seconds)
            if args.video_seat is not None and not 0 <= args.video_seat < args.players:
                raise ValueError(f"--video-seat must be a seat in 0..{args.players - 1}, got {args.video_seat}")
        args.agent_specs = _agent_specs(args.agents, args.players)
    except ValueError as err:
        parser.error(str(err))
    return args


def _agent_specs(text: str | None, num_players: int) -> list[str] | None:
    """Return one agent spec per seat from ``--agents`` (repeated in order to fill the table), or ``None`` for random moves."""
    if text is None:
        return None
    from grinch_env.agents import split_specs

    specs = split_specs(text)
    if not specs:
        raise ValueError("--agents needs at least one agent spec, e.g. --agents greedy,random")
    if len(specs) > num_players:
        raise ValueError(f"--agents gives {len(specs)} agents for a {num_players}-player table")
    return [specs[p % len(specs)] for p in range(num_players)]


def _build_agents(specs: list[str], seed: int, game: str, **game_options: object) -> list[object]:
    """Return the agents of ``specs`` by seat, seat ``p`` reset with the ``p``-th number of ``SeedSequence(seed)``."""
    from grinch_env.agents import make_agent

    seeds = np.random.SeedSequence(seed).generate_state(len(specs))
    try:
        return [make_agent(spec, seed=int(seeds[p]), num_players=len(specs), game=game, game_options=game_options) for p, spec in enumerate(specs)]
    except ValueError as err:
        raise SystemExit(f"python -m grinch_env: error: {err}") from None


def _write_video(args: argparse.Namespace, game_seed: int, decisions: list[tuple[int, int]], **game_options: object) -> None:
    """Write the ``--video`` of the game just printed and say where it is."""
    from grinch_env.video import write_game_video

    frames, fps = write_game_video(args.video, args.game, args.players, game_seed, decisions, args.video_seat, args.video_seconds, game_options)
    print(f"\nwrote {args.video}: {frames} frames at {fps:g} fps ({frames / fps:.1f} s)")


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
    agents = None if args.agent_specs is None else _build_agents(args.agent_specs, args.seed, "grinch", bonus_layout=args.bonus_layout)
    players = "random agents" if agents is None else "agents " + ", ".join(f"seat {p} {a.name}" for p, a in enumerate(agents))
    print(f"Grinch Grow Your Heart: {n} players, {game.num_rounds} rounds, seed {args.seed}, {players} (every hand shown)")
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
        p = env.agent_name_mapping[agent]
        action = int(legal[rng.integers(len(legal))]) if agents is None else int(agents[p].act(obs["observation"], obs["action_mask"]))
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
    if args.video is not None:
        decisions = [(env.agent_name_mapping[a], x) for a, x in env.action_log]
        _write_video(args, env.game_seed, decisions, bonus_layout=args.bonus_layout, first_grinch=args.first_grinch, num_rounds=args.num_rounds)
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
    specs = args.agent_specs or ["random"]
    game = play(args.players, specs, args.seed, None, sys.stdin, sys.stdout)
    if args.video is not None:
        from grinch_env.video import play_recorded

        n = args.players
        # The same agents and seeds as play()'s watch mode: its loop index i seats specs[(i - 1) % len] at (i - 1) % n,
        # reset with the seat's number of SeedSequence(seed), as _build_agents does.
        by_seat = {(i - 1) % n: specs[(i - 1) % len(specs)] for i in range(n)}
        agents = _build_agents([by_seat[p] for p in range(n)], args.seed, "gnoming")
        decisions = play_recorded("gnoming", n, agents, args.seed)
        _write_video(args, args.seed, decisions)
        if game.totals != _replayed_totals(n, args.seed, decisions):
            raise SystemExit("python -m grinch_env: error: the video's game differs from the printed one (an agent that is not deterministic?)")
    return 0


def _replayed_totals(num_players: int, seed: int, decisions: list[tuple[int, int]]) -> list[int]:
    from grinch_env.gnoming.game import Game as GnomingGame

    game = GnomingGame(num_players, rng=seed)
    for _, action in decisions:
        game.step(action)
    return list(game.totals)


if __name__ == "__main__":
    raise SystemExit(main())

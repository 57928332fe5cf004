"""Play *Grinch Grow Your Heart* in the terminal against built-in agents or checkpoints.

Usage::

    python -m grinch_env.play --players 4 --opponents expectimax,greedy,checkpoints/run1 [--seed S] [--seat K]

``--game gnoming`` plays *Gnoming A Round* instead
(:mod:`grinch_env.gnoming.play`, which takes the same options).

The opponents fill the other seats in order from your left (a shorter list is
repeated).  At the prompt type a move's number from the list, or its name:
``d W3`` (discard; ``W3'`` is the other copy), ``draw pile``, ``draw 2`` (the
top of the discard pile 2 seats to your left, ``draw 0`` your own), ``score
Match``; ``help`` lists the moves again, ``quit`` or end-of-input (Ctrl-D)
leaves.  Opponents see only their own observation, like every agent.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TextIO

import numpy as np

from grinch_env.agents import make_agent, split_specs
from grinch_env.grinch.cards import RANK, SUIT, card_name, parse_card
from grinch_env.grinch.encoding import action_mask, encode
from grinch_env.grinch.game import (
    DRAW_DISCARD_BASE,
    DRAW_PILE_ACTION,
    MAX_PLAYERS,
    MIN_PLAYERS,
    PHASE_DISCARD,
    PHASE_DRAW,
    SCORE_BASE,
    Game,
    check_num_players,
)
from grinch_env.grinch.scoring import NUM_ROWS, ROW_NAMES, bonus_points, row_scores


class QuitError(Exception):
    """The player asked to leave (``quit`` or end of input)."""


def move_label(game: Game, action: int) -> tuple[str, str]:
    """Return ``(description, what to type)`` for one of the human's legal actions."""
    n, me = game.num_players, game.current
    if action < DRAW_PILE_ACTION:
        return f"discard {card_name(action)}", f"d {card_name(action)}"
    if action == DRAW_PILE_ACTION:
        return f"draw the draw pile's top ({len(game.draw_pile)} cards)", "draw pile"
    if action < SCORE_BASE:
        j = action - DRAW_DISCARD_BASE
        seat = (me + j) % n
        owner = "your own pile" if j == 0 else f"seat {seat}'s pile ({j} to your left)"
        return f"draw {card_name(game.piles[seat][-1])} from {owner}", f"draw {j}"
    row = action - SCORE_BASE
    hand = game.hands[me]
    value, bonus = row_scores(hand)[row], bonus_points(hand, game.layout)
    return f"score {ROW_NAMES[row]}: {value} + bonus {bonus} = {value + bonus}", f"score {ROW_NAMES[row]}"


def parse_move(text: str, game: Game, legal: Sequence[int]) -> int | None:
    """Return the legal action that ``text`` names (a number from the list or a move's name), or ``None``."""
    words = text.strip().lower().split()
    if not words:
        return None
    if len(words) == 1 and words[0].isdigit():
        i = int(words[0])
        return legal[i - 1] if 1 <= i <= len(legal) else None
    head, rest = words[0], words[1:]
    if head in ("d", "discard") and len(rest) == 1 or len(words) == 1 and head[0] in "wnop" and head[1:2].isdigit():
        return _discard(rest[0] if rest else head, game, legal)
    if head in ("draw", "dr") and rest:
        if rest[0] in ("pile", "deck", "p"):
            action = DRAW_PILE_ACTION
        elif rest[0].isdigit():
            action = DRAW_DISCARD_BASE + int(rest[0])
        else:
            return None
        return action if action in legal else None
    if head in ("s", "score") and len(rest) == 1:
        matches = [k for k, name in enumerate(ROW_NAMES) if name.lower().startswith(rest[0])]
        if len(matches) == 1 and SCORE_BASE + matches[0] in legal:
            return SCORE_BASE + matches[0]
    return None


def _discard(name: str, game: Game, legal: Sequence[int]) -> int | None:
    try:
        card = parse_card(name)
    except ValueError:
        return None
    if card in legal:
        return card
    # "W3" also names the other copy when only that one is in hand.
    same = [c for c in legal if c < DRAW_PILE_ACTION and SUIT[c] == SUIT[card] and RANK[c] == RANK[card]]
    return same[0] if len(same) == 1 and not name.strip().endswith("'") else None


def describe_action(game: Game, seat: int, action: int, names: Sequence[str]) -> str:
    """Return the public description of ``seat``'s ``action`` (call before applying it)."""
    who = f"seat {seat} ({names[seat]})"
    if action < DRAW_PILE_ACTION:
        return f"{who} discards {card_name(action)}"
    if action == DRAW_PILE_ACTION:
        return f"{who} draws from the draw pile"
    if action < SCORE_BASE:
        src = (seat + action - DRAW_DISCARD_BASE) % game.num_players
        owner = "its own pile" if src == seat else f"seat {src}'s pile"
        return f"{who} takes {card_name(game.piles[src][-1])} from {owner}"
    row = action - SCORE_BASE
    return f"{who} scores {ROW_NAMES[row]} for {game.hand_value(seat, row)}"


def render_for(game: Game, seat: int, names: Sequence[str]) -> str:
    """Return the table as ``seat`` may see it, with pads, piles (top last) and the hand's row values."""
    lines = ["", "=" * 72, game.render(seat=seat)]
    lines.append("players: " + ", ".join(f"seat {p} = {names[p]}" for p in range(game.num_players)))
    lines.append("pads (" + " ".join(ROW_NAMES) + "); piles listed bottom to top")
    hand = sorted(game.hands[seat])
    lines.append(f"YOUR HAND: {' '.join(card_name(c) for c in hand)}   ({'Grinch' if game.grinch == seat else 'Who'})")
    values = row_scores(hand)
    bonus = bonus_points(hand, game.layout)
    pad = game.score_sheet[seat]
    cells = [f"{ROW_NAMES[k]} {values[k] + bonus}" for k in range(NUM_ROWS) if pad[k] is None]
    lines.append(f"row values of the cards in hand (bonus {bonus} included), unused rows: " + ", ".join(cells))
    return "\n".join(lines)


def prompt_move(game: Game, seat: int, names: Sequence[str], stdin: TextIO, stdout: TextIO) -> int:
    """Return the human's chosen legal action; re-asks on bad input, raises :class:`QuitError` on EOF or ``quit``."""
    legal = game.legal_actions()
    print(render_for(game, seat, names), file=stdout)
    phase = {PHASE_DISCARD: "discard a card", PHASE_DRAW: f"draw ({game.draws_made + 1} of 2)"}.get(game.phase, "score a row")
    _print_moves(game, legal, stdout, f"Your move: {phase}")
    while True:
        print("> ", end="", file=stdout, flush=True)
        line = stdin.readline()
        if not line:
            raise QuitError
        text = line.strip()
        if text.lower() in ("q", "quit", "exit"):
            raise QuitError
        if text.lower() in ("h", "help", "?", ""):
            _print_moves(game, legal, stdout, "Legal moves")
            continue
        action = parse_move(text, game, legal)
        if action is not None:
            return action
        _print_moves(game, legal, stdout, f"{text!r} is not a legal move now. Legal moves")


def _print_moves(game: Game, legal: Sequence[int], stdout: TextIO, title: str) -> None:
    print(f"{title}:", file=stdout)
    for i, a in enumerate(legal, 1):
        desc, typed = move_label(game, a)
        print(f"  {i:>2}) {desc:<52} [{typed}]", file=stdout)


def play(num_players: int, opponents: Sequence[str], seed: int | None, seat: int, stdin: TextIO, stdout: TextIO) -> Game:
    """Play one game with the human at ``seat``; return the game (finished unless the player quit)."""
    n = check_num_players(num_players)
    if not 0 <= seat < n:
        raise ValueError(f"--seat must be in 0..{n - 1} for {n} players, got {seat}")
    if not opponents:
        raise ValueError("give at least one opponent, e.g. --opponents expectimax,greedy")
    if len(opponents) > n - 1:
        raise ValueError(f"{len(opponents)} opponents given but a {n}-player table has {n - 1} other seats")
    seeds = np.random.SeedSequence(seed).generate_state(n)
    agents: dict[int, object] = {}
    names = ["you"] * n
    for i in range(1, n):
        p = (seat + i) % n
        agents[p] = make_agent(opponents[(i - 1) % len(opponents)], seed=int(seeds[p]), num_players=n)
        names[p] = agents[p].name
    game = Game(n, rng=seed)
    print(f"Grinch Grow Your Heart: {n} players, you are seat {seat}; seat {game.grinch} is the first Grinch. Type 'help' for moves.", file=stdout)
    last_round = 0
    held: list[int] = []  # the human's hand after their last move, to announce a Who's automatic draws
    try:
        while not game.done:
            p = game.current
            if p == seat:
                new = [c for c in game.hands[seat] if c not in held]
                if held and game.phase == PHASE_DISCARD and game.grinch != seat and new:
                    print(f"you drew {' '.join(card_name(c) for c in new)}", file=stdout)
                action = prompt_move(game, seat, names, stdin, stdout)
            else:
                action = agents[p].act(encode(game, p), action_mask(game, p))
            print(describe_action(game, p, action, names), file=stdout)
            game.step(action)
            if p == seat and action == DRAW_PILE_ACTION:
                print(f"you drew {card_name(game.hands[seat][-1])}", file=stdout)
            if p == seat:
                held = [] if action >= SCORE_BASE else list(game.hands[seat])  # a new round deals a fresh hand
            if game.round != last_round or game.done:
                last_round = game.round
                print("-- round over; totals: " + ", ".join(f"seat {q} {game.totals[q]}" for q in range(n)), file=stdout)
    except QuitError:
        print("\nGame left. Bye!", file=stdout)
        return game
    winners = game.winners()
    print("Final totals: " + ", ".join(f"seat {q} ({names[q]}) {game.totals[q]}" for q in range(n)), file=stdout)
    print("You win!" if seat in winners and len(winners) == 1 else
          "You share the win!" if seat in winners else f"Winner: {', '.join(f'seat {w} ({names[w]})' for w in winners)}", file=stdout)
    return game


def main(argv: Sequence[str] | None = None, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    # --game picks the game; every other option belongs to that game's own parser.
    chooser = argparse.ArgumentParser(add_help=False)
    chooser.add_argument("--game", choices=("grinch", "gnoming"), default="grinch")
    chosen, rest = chooser.parse_known_args(argv)
    if chosen.game == "gnoming":
        from grinch_env.gnoming.play import main as gnoming_main

        return gnoming_main(rest, stdin, stdout)
    argv = rest
    parser = argparse.ArgumentParser(prog="python -m grinch_env.play", description="Play Grinch Grow Your Heart in the terminal.")
    parser.add_argument("--game", choices=("grinch", "gnoming"), default="grinch", help="the game (default grinch; gnoming: Gnoming A Round)")
    parser.add_argument("--players", type=int, default=4, help=f"table size {MIN_PLAYERS}..{MAX_PLAYERS} (default 4)")
    parser.add_argument("--opponents", default="expectimax", help="comma-separated agent names or checkpoint paths, from your left")
    parser.add_argument("--seed", type=int, default=None, help="deal and agent seed (default: random)")
    parser.add_argument("--seat", type=int, default=0, help="your seat (default 0, the first Grinch)")
    parser.add_argument("--trust-checkpoint", action="store_true", help="load SB3 .zip and RLlib checkpoints among the agents: they are unpickled, which can run code, so only for files you trust "
                        "(or add trust=1 to that agent's spec: PATH.zip:trust=1); our .pt checkpoints need no opt-in")
    args = parser.parse_args(argv)
    if args.trust_checkpoint:
        from grinch_env.agents import trust_checkpoints

        trust_checkpoints()
    try:
        play(args.players, split_specs(args.opponents), args.seed, args.seat,
             stdin or sys.stdin, stdout or sys.stdout)
    except ValueError as exc:
        parser.error(str(exc))
    return 0


if __name__ == "__main__":
    sys.exit(main())

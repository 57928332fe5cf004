"""Play *Grinch Grow Your Heart* in the terminal against built-in agents or checkpoints.

Usage::

    python -m grinch_env.grinch.play --players 4 --opponents expectimax,greedy,checkpoints/run1 [--seed S] [--seat K]

(``grinch-play`` is the same command; ``grinch-play --game gnoming`` plays
*Gnoming A Round*, :mod:`grinch_env.gnoming.play`, with the same options.
The prompt loop, seating and result are :mod:`grinch_env.play_base`'s.)

The opponents fill the other seats in order from your left (a shorter list is
repeated).  At the prompt type a move's number from the list, or its name:
``d W3`` (discard; ``W3'`` is the other copy), ``draw pile``, ``draw 2`` (the
top of the discard pile 2 seats to your left, ``draw 0`` your own), ``score
Match``; ``help`` lists the moves again, ``quit`` or end-of-input (Ctrl-D)
leaves.  Opponents see only their own observation, like every agent.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TextIO

from grinch_env.grinch.cards import RANK, SUIT, card_name, parse_card
from grinch_env.grinch.encoding import action_mask, encode
from grinch_env.grinch.game import (
    DRAW_DISCARD_BASE,
    DRAW_PILE_ACTION,
    PHASE_DISCARD,
    PHASE_DRAW,
    SCORE_BASE,
    Game,
    action_parts,
    check_num_players,
)
from grinch_env.grinch.scoring import NUM_ROWS, ROW_NAMES, bonus_points, row_scores
from grinch_env.play_base import QuitError, print_result, run_cli, seat_opponents, split_move
from grinch_env.play_base import prompt_move as _prompt

MOVE_WIDTH = 52  # the move descriptions' column


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
    numbered, words = split_move(text, legal)
    if numbered is not None or not words:
        return numbered
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
    kind, arg = action_parts(action, seat, game.num_players)
    if kind == "take":
        owner = "its own pile" if arg == seat else f"seat {arg}'s pile"
        return f"{who} takes {card_name(game.piles[arg][-1])} from {owner}"
    if kind == "score":
        return f"{who} scores {ROW_NAMES[arg]} for {game.hand_value(seat, arg)}"
    return f"{who} discards {card_name(arg)}" if kind == "discard" else f"{who} draws from the draw pile"


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
    phase = {PHASE_DISCARD: "discard a card", PHASE_DRAW: f"draw ({game.draws_made + 1} of 2)"}.get(game.phase, "score a row")
    return _prompt(game, render_for(game, seat, names), f"Your move: {phase}", move_label, parse_move, stdin, stdout, MOVE_WIDTH)


def play(num_players: int, opponents: Sequence[str], seed: int | None, seat: int, stdin: TextIO, stdout: TextIO) -> Game:
    """Play one game with the human at ``seat``; return the game (finished unless the player quit)."""
    n = check_num_players(num_players)
    agents, names = seat_opponents("grinch", n, opponents, seed, seat, example="expectimax,greedy")
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
    print_result(game, names, seat, stdout)
    return game


def main(argv: Sequence[str] | None = None, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    """Run the terminal game; return the exit status (argument errors exit through ``argparse``)."""
    return run_cli("grinch", play, argv, stdin, stdout, opponents="expectimax",
                   opponents_help="comma-separated agent names (random, greedy, expectimax, search, champion: the shipped learned agent) or checkpoint paths, from your left", seat_help="your seat (default 0, the first Grinch)")


if __name__ == "__main__":
    sys.exit(main())

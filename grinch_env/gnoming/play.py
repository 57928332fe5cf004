"""Play *Gnoming A Round* in the terminal against the built-in agents.

Usage::

    python -m grinch_env.gnoming.play --players 4 --opponents search,greedy [--seed S] [--seat K]
    grinch-play --game gnoming --players 4 --opponents search,greedy    # the same

The opponents fill the other seats in order from your left (a shorter list is
repeated).  Every layout is shown as a 3x3 grid (slots 0..8 row by row,
face-down cards as ``??``), with both discard piles, the draw pile, the held
card and the scores.  At the prompt type a move's number from the list, or its
name: ``draw``, ``take A`` / ``take B``, ``slot 4`` (place, bounce or turn up
slot 4; ``4`` alone is the list's 4th move), ``discard A`` / ``discard B``
(also "stop bouncing"), ``pass``; ``help`` lists the moves again, ``quit`` or
end-of-input (Ctrl-D) leaves.  Opponents see only their own observation, like
every agent.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TextIO

from grinch_env.gnoming.cards import HAZARD, SHORT_NAMES
from grinch_env.gnoming.encoding import action_mask, encode
from grinch_env.gnoming.game import DISCARD_A, DISCARD_B, DRAW, PASS, TAKE_A, TAKE_B, Game
from grinch_env.play_base import QuitError, print_result, run_cli, seat_opponents, split_move
from grinch_env.play_base import prompt_move as _prompt

PILE_NAMES = ("A", "B")
GRID_WIDTH = 24
MOVE_WIDTH = 58  # the move descriptions' column


def card(k: int) -> str:
    """Return a card's short name without padding (``3``, ``-2``, ``H`` for the Hazard, ``M`` for the Mulligan)."""
    return SHORT_NAMES[k].strip()


def _phase(game: Game) -> str:
    return getattr(game.phase, "value", game.phase)


def _slot_card(game: Game, seat: int, slot: int) -> str:
    return card(game.layouts[seat][slot]) if game.face_up[seat][slot] else "??"


def move_label(game: Game, action: int) -> tuple[str, str]:
    """Return ``(description, what to type)`` for one of the human's legal actions."""
    phase, seat = _phase(game), game.current
    if action < 9:
        if phase in ("reveal", "hazard"):
            return f"turn up slot {action}", f"slot {action}"
        verb = "bounce" if phase == "bounce" else "place"
        return f"{verb} {card(game.held)} into slot {action} (now {_slot_card(game, seat, action)})", f"slot {action}"
    if action == DRAW:
        return f"draw the draw pile's top ({len(game.draw_pile)} cards)", "draw"
    if action in (TAKE_A, TAKE_B):
        i = action - TAKE_A
        return f"take {card(game.piles[i][-1])} from pile {PILE_NAMES[i]}", f"take {PILE_NAMES[i]}"
    if action in (DISCARD_A, DISCARD_B):
        i = action - DISCARD_A
        if game.held == HAZARD:
            return "discard the Hazard (it leaves the round; the others may turn up a card)", "discard A"
        stop = "stop bouncing: " if phase == "bounce" else ""
        return f"{stop}discard {card(game.held)} onto pile {PILE_NAMES[i]}", f"discard {PILE_NAMES[i]}"
    return "pass (turn up nothing)", "pass"


def parse_move(text: str, game: Game, legal: Sequence[int]) -> int | None:
    """Return the legal action that ``text`` names (a number from the list or a move's name), or ``None``."""
    numbered, words = split_move(text, legal)
    if numbered is not None or not words:
        return numbered
    head, rest = words[0], words[1:]
    action = None
    if head in ("slot", "s", "place", "p", "flip", "bounce", "b") and len(rest) == 1 and rest[0].isdigit():
        action = int(rest[0]) if int(rest[0]) < 9 else None
    elif head in ("draw", "dr") and not rest:
        action = DRAW
    elif head in ("take", "t") and len(rest) == 1 and rest[0] in ("a", "b"):
        action = TAKE_A + "ab".index(rest[0])
    elif head in ("discard", "d", "stop") and len(rest) == 1 and rest[0] in ("a", "b"):
        action = DISCARD_A + "ab".index(rest[0])
    elif head == "pass" and not rest:
        action = PASS
    return action if action in legal else None


def _grid(game: Game, seat: int) -> list[str]:
    return [" ".join(f"{_slot_card(game, seat, 3 * r + c):>3}" for c in range(3)) for r in range(3)]


def render_for(game: Game, names: Sequence[str]) -> str:
    """Return the public table: every layout as a 3x3 grid, the piles, the held card and the scores."""
    n = game.num_players
    stage = "reveal" if _phase(game) == "reveal" else f"turn of seat {game.turn_player} ({names[game.turn_player]})"
    lines = ["", "=" * 72, f"Round {game.round + 1} of {game.num_rounds}, {stage}; * = to act"]
    for start in range(0, n, 3):
        seats = range(start, min(n, start + 3))
        heads = []
        for s in seats:
            mark = " *" if s == game.current else ""
            out = " (out)" if game.went_out == s else ""
            heads.append(f"seat {s} {names[s]}{out}{mark}"[:GRID_WIDTH].ljust(GRID_WIDTH))
        lines.append("".join(heads).rstrip())
        grids = [_grid(game, s) for s in seats]
        for r in range(3):
            lines.append("".join(g[r].ljust(GRID_WIDTH) for g in grids).rstrip())
    for i, pile in enumerate(game.piles):
        shown = " ".join(card(k) for k in pile[-6:])
        more = "... " if len(pile) > 6 else ""
        lines.append(f"pile {PILE_NAMES[i]} ({len(pile)} cards, top last): {more}{shown}" if pile else f"pile {PILE_NAMES[i]}: empty")
    reshuffled = ", reshuffled" if getattr(game, "reshuffled", False) else ""
    lines.append(f"draw pile: {len(game.draw_pile)} cards{reshuffled}")
    if game.held is not None:
        lines.append(f"held card: {card(game.held)}")
    rounds = " | ".join(f"round {r + 1}: " + " ".join(str(x) for x in scores) for r, scores in enumerate(game.round_scores))
    lines.append("totals: " + ", ".join(f"seat {s} {game.totals[s]}" for s in range(n)) + (f"   ({rounds})" if rounds else ""))
    return "\n".join(lines)


def prompt_move(game: Game, names: Sequence[str], stdin: TextIO, stdout: TextIO) -> int:
    """Return the human's chosen legal action; re-asks on bad input, raises :class:`QuitError` on EOF or ``quit``."""
    return _prompt(game, render_for(game, names), f"Your move ({_PHASE_TITLES[_phase(game)]})", move_label, parse_move, stdin, stdout, MOVE_WIDTH)


_PHASE_TITLES = {"reveal": "turn up one of your cards", "draw": "draw a card", "play": "place or discard the held card",
                 "bounce": "bounce the turned-up card or stop", "discard": "choose a discard pile",
                 "hazard": "a Hazard was discarded: turn up a card or pass"}


_AUTOMATIC = {DISCARD_A: "discard onto pile A", DISCARD_B: "discard onto pile B", DRAW: "draw", PASS: "pass"}


def describe_action(game: Game, seat: int, action: int, names: Sequence[str]) -> str:
    """Return the public description of ``seat``'s ``action`` (call before applying it)."""
    who = f"seat {seat} ({names[seat]})"
    desc, _ = move_label(game, action)
    return f"{who}: {desc}"


def play(num_players: int, opponents: Sequence[str], seed: int | None, seat: int | None, stdin: TextIO, stdout: TextIO) -> Game:
    """Play one game with the human at ``seat``; return the game (finished unless the player quit).

    ``seat=None`` watches a game between the agents (every seat an opponent;
    each layout is shown as a grid at the start and after every round).
    """
    agents, names = seat_opponents("gnoming", num_players, opponents, seed, seat, example="search,greedy")
    n = num_players
    watching = seat is None
    if watching:
        seat = -1
    game = Game(n, rng=seed)
    if watching:
        print(f"Gnoming A Round: {n} players ({', '.join(names)}), seed {seed}; lowest total after 3 rounds wins.", file=stdout)
        print(render_for(game, names), file=stdout)
    else:
        print(f"Gnoming A Round: {n} players, you are seat {seat}; lowest total after 3 rounds wins. Type 'help' for moves.", file=stdout)
    last_round = game.round
    try:
        while not game.done:
            p = game.current
            if p == seat:
                action = prompt_move(game, names, stdin, stdout)
            else:
                action = agents[p].act(encode(game, p), action_mask(game, p))
            print(describe_action(game, p, action, names), file=stdout)
            drew = action == DRAW
            forced = len(game.auto_log)
            game.step(action)
            if drew and game.held is not None and game.round == last_round:
                print(f"  ... and draws {card(game.held)}", file=stdout)
            for q, a in game.auto_log[forced:]:
                print(f"seat {q} ({names[q]}): {_AUTOMATIC.get(a, 'slot ' + str(a))} (the only legal move)", file=stdout)
            if game.round != last_round or game.done:
                scores = game.round_scores[last_round]
                last_round = game.round
                print(f"-- round {len(game.round_scores)} over; scores: " + ", ".join(f"seat {q} {scores[q]}" for q in range(n))
                      + "; totals: " + ", ".join(f"seat {q} {game.totals[q]}" for q in range(n)), file=stdout)
                if watching and not game.done:
                    print(render_for(game, names), file=stdout)
    except QuitError:
        print("\nGame left. Bye!", file=stdout)
        return game
    print_result(game, names, None if watching else seat, stdout)
    return game


def main(argv: Sequence[str] | None = None, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    """Run the terminal game; return the exit status (argument errors exit through ``argparse``)."""
    return run_cli("gnoming", play, argv, stdin, stdout, opponents="search",
                   opponents_help="comma-separated agent specs (random, greedy, search, champion: the shipped learned agent) or checkpoint paths, from your left",
                   seat_help="your seat (default 0, the first player)")


if __name__ == "__main__":
    sys.exit(main())

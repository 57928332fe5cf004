"""A picture of a *Gnoming A Round* table: :func:`draw_table` returns ``uint8[H, W, 3]``.

Every seat's 3x3 layout, the two discard piles (bottom to top, every card
public), the draw pile, the held card and where it came from, the removed
Hazards, and a score table (each round's score and the total; the lowest
total wins); a header with the round, phase, whose turn it is, the turn
counter against the cap and the last action.

Nobody may see a face-down card, its owner included (RULES_GNOMING.md §5), so
a seat's view draws every face-down card's back, and every seat's view is the
same picture but for the "you" mark.  The spectator view (``seat=None``)
shows the face-down cards too, each with a "face down" band, and says so.
"""

from __future__ import annotations

import numpy as np

from grinch_env import rendering as ui  # the shared colours, CardFace and check_seat
from grinch_env.gnoming.cards import HAZARD, IS_NEGATIVE, MULLIGAN, NUM_KINDS, VALUES
from grinch_env.gnoming.game import (
    BOUNCE,
    DISCARD,
    DONE,
    DRAW_PHASE,
    HAZARD_PHASE,
    NUM_ACTIONS,
    NUM_SLOTS,
    PLAY,
    REVEAL,
    REVEAL_PICKS,
    Game,
    action_name,
)
from grinch_env.rendering import (
    badge,
    canvas,
    draw_card,
    draw_pile,
    draw_stack,
    draw_table_grid,
    fit_text,
    panel,
    text,
    to_array,
    view_banner,
)

POSITIVE_COLOR = (196, 84, 24)  # points against you
NEGATIVE_COLOR = (28, 120, 64)  # points for you
HAZARD_COLOR = (200, 30, 40)
MULLIGAN_COLOR = (120, 60, 170)
FILLED = (110, 210, 255)  # slots filled this turn
GNOME_RED = (230, 80, 70)

WIDTH = 1408
HEADER_HEIGHT = 124
CARD_W, CARD_H = 66, 90
GAP = 6
GRID_W, GRID_H = 3 * CARD_W + 2 * GAP, 3 * CARD_H + 2 * GAP
PANEL_H = GRID_H + 86
SEATS_RIGHT = 1080  # seat panels left of this; piles and scores right of it
SIDE_X = SEATS_RIGHT + 14
PILE_SHOWN = 12  # a discard pile's top cards drawn (fanned; the rest is counted)

LEGEND = (
    "orange cards add their points, green ones subtract;",
    "H Hazard: +10, never matches; M Mulligan: wild.",
    "slots: row 0..2 top to bottom, col 0..2 left to right;",
    "blue frame: a slot filled this turn.",
)
_ACTION_WORDS = {9: "DRAW from the draw pile", 10: "TAKE the top of pile A", 11: "TAKE the top of pile B",
                 12: "DISCARD onto pile A", 13: "DISCARD onto pile B", 14: "PASS"}


def card_face(kind: int, hidden: bool = False) -> ui.CardFace:
    """Return the face of a card of ``kind``: its value (``H`` Hazard, ``M`` Mulligan); ``hidden`` marks a face-down card."""
    if not 0 <= kind < NUM_KINDS:
        raise ValueError(f"a Gnoming card kind is an int in 0..{NUM_KINDS - 1}, got {kind!r}")
    if kind == HAZARD:
        return ui.CardFace("H", HAZARD_COLOR, "Hazard", icon="hazard", footer="+10", hidden=hidden)
    if kind == MULLIGAN:
        return ui.CardFace("M", MULLIGAN_COLOR, "Mulligan", icon="mulligan", footer="wild", hidden=hidden)
    value = VALUES[kind]
    label = str(value)
    return ui.CardFace(label, NEGATIVE_COLOR if IS_NEGATIVE[kind] else POSITIVE_COLOR, "", center=label, hidden=hidden)


def action_text(num_players: int, seat: int, action: int) -> str:
    """Return what ``seat``'s ``action`` did in words (``"player_2: slot 4 (row 1, col 1)"``, ``"player_0: DISCARD onto pile A"``)."""
    if not 0 <= action < NUM_ACTIONS:
        raise ValueError(f"a Gnoming action is an int in 0..{NUM_ACTIONS - 1}, got {action!r}")
    return f"player_{seat}: {_ACTION_WORDS.get(action) or action_name(action)}"


def _status(game: Game) -> str:
    if game.phase is DONE:
        best = min(game.totals)
        winners = [f"player_{p}" for p in game.winners()]
        return f"Game over after {game.num_rounds} rounds: {' and '.join(winners)} {'win' if len(winners) > 1 else 'wins'} ({best}; lowest total wins)"
    who = f"player_{game.current}"
    doing = {
        REVEAL: f"{who} turns up a card ({game.reveal_picks % REVEAL_PICKS + 1} of {REVEAL_PICKS})",
        DRAW_PHASE: f"{who} draws",
        PLAY: f"{who} plays the held card",
        BOUNCE: f"{who} places the bounced card",
        DISCARD: f"{who} discards",
        HAZARD_PHASE: f"{who} answers the Hazard (turn a card up or pass)",
    }[game.phase]
    return f"Round {game.round + 1}/{game.num_rounds}  |  turn {game.turns_this_round}/{game.turn_cap}  |  {doing}"


def _layout_faces(game: Game, owner: int, seat: int | None) -> list[ui.CardFace | None]:
    """Return ``owner``'s 9 slots as the viewer sees them: face-up cards, and face-down ones as backs (spectator: marked faces)."""
    out: list[ui.CardFace | None] = []
    for kind, up in zip(game.layouts[owner], game.face_up[owner]):
        if up:
            out.append(card_face(kind))
        else:
            out.append(card_face(kind, hidden=True) if seat is None else None)
    return out


def draw_table(game: Game, seat: int | None = None, last_action: str | None = None) -> np.ndarray:
    """Return a picture of ``game``'s table as ``uint8[H, W, 3]``: the spectator's (``seat=None``) or ``seat``'s view.

    ``last_action`` is written in the header (e.g. :func:`action_text`'s words).
    The same state, seat and last action always give the same bytes.
    """
    n = game.num_players
    seat = ui.check_seat(seat, n)
    cols = -(-n // 2)
    panel_w = (SEATS_RIGHT - 10) / cols
    seats_bottom = HEADER_HEIGHT + 2 * (PANEL_H + 10)
    side_bottom = HEADER_HEIGHT + 452 + 24 * (n + 1) + 16
    image, draw = canvas(WIDTH, max(seats_bottom, side_bottom))
    done = game.phase is DONE

    # Header.
    draw.rectangle((0, 0, image.width, HEADER_HEIGHT - 6), fill=(18, 60, 42))
    text(draw, (20, 12), "Gnoming A Round", 28, fill=GNOME_RED, bold=True)
    text(draw, (20 + 250, 20), f"{n} players  |  lowest total wins", 18, fill=ui.MUTED)
    text(draw, (20, 52), _status(game), 19, fill=ui.HIGHLIGHT if not done else ui.LIGHT, bold=True)
    w = view_banner(draw, 20, 84, seat, "face-down cards hidden from everyone", "face-down cards shown, marked 'face down'")
    text(draw, (20 + w + 16, 86), fit_text("Last action: " + (last_action or "none yet"), WIDTH - 60 - w, 16), 16, fill=ui.LIGHT)

    # The seats, in two rows.
    for p in range(n):
        row, col = divmod(p, cols)
        x0 = 10 + col * panel_w
        y0 = HEADER_HEIGHT + row * (PANEL_H + 10)
        active = p == game.current
        panel(draw, (x0 + 4, y0, x0 + panel_w - 4, y0 + PANEL_H), fill=ui.PANEL_ACTIVE if active else ui.PANEL, outline=ui.HIGHLIGHT if active else None)
        text(draw, (x0 + 16, y0 + 10), f"player_{p}", 19, fill=ui.LIGHT, bold=True)
        bx = x0 + 124
        for shown, label, color in (
            (seat == p, "you", (120, 200, 255)),
            (active, "to act", ui.HIGHLIGHT),
            (not done and p == game.turn_player and not active and game.phase is not REVEAL, "turn", (255, 240, 180)),
            (game.went_out == p, "went out", (255, 160, 160)),
            (game.went_out is not None and game.final_turns[p], "final turn", (230, 230, 230)),
        ):
            if shown and bx < x0 + panel_w - 40:
                bx += badge(draw, (bx, y0 + 11), label, color, size=12) + 4
        gx = x0 + (panel_w - GRID_W) / 2
        gy = y0 + 40
        faces = _layout_faces(game, p, seat)
        filled = game.filled if p == game.turn_player and not done else [False] * NUM_SLOTS
        for slot, face in enumerate(faces):
            r, c = divmod(slot, 3)
            draw_card(draw, gx + c * (CARD_W + GAP), gy + r * (CARD_H + GAP), CARD_W, CARD_H, face, highlight=FILLED if filled[slot] else None)
        down = sum(not u for u in game.face_up[p])
        scores = "  ".join(str(rs[p]) for rs in game.round_scores) or "-"
        text(draw, (x0 + 16, y0 + PANEL_H - 38), f"face down: {down}   rounds: {scores}", 14, fill=ui.MUTED)
        text(draw, (x0 + panel_w - 18, y0 + PANEL_H - 40), f"total {game.totals[p]}", 17, fill=ui.LIGHT, anchor="ra", bold=True)

    # Piles, draw pile, held card.
    y = HEADER_HEIGHT + 24
    for name, pile in zip("AB", game.piles):
        shown = pile[-PILE_SHOWN:]
        more = f", the top {len(shown)} shown" if len(shown) < len(pile) else ""
        draw_pile(draw, SIDE_X, y, CARD_W, CARD_H, [card_face(k) for k in shown], WIDTH - 20 - SIDE_X,
                  label=f"discard pile {name}: {len(pile)} card{'s' if len(pile) != 1 else ''}{more} (top on the right)")
        y += CARD_H + 34
    draw_stack(draw, SIDE_X, y, CARD_W, CARD_H, len(game.draw_pile),
               f"draw pile: {len(game.draw_pile)}" + (" (reshuffled)" if game.reshuffled else ""))
    hx = SIDE_X + 150
    text(draw, (hx, y - 4), "held card", 13, fill=ui.MUTED, anchor="ld")
    if game.held is None:
        draw.rounded_rectangle((hx, y, hx + CARD_W, y + CARD_H), radius=7, outline=ui.MUTED, width=2)
        text(draw, (hx + CARD_W / 2, y + CARD_H / 2), "none", 12, fill=ui.MUTED, anchor="mm")
    else:
        draw_card(draw, hx, y, CARD_W, CARD_H, card_face(game.held), highlight=ui.HIGHLIGHT)
        text(draw, (hx + CARD_W / 2, y + CARD_H + 8), f"from {game.held_source}", 13, fill=ui.LIGHT, anchor="ma")
    y += CARD_H + 40
    text(draw, (SIDE_X, y), f"Hazards out of the round: {len(game.removed)}", 14, fill=ui.LIGHT)
    y += 28

    # Score table.
    headers = ["player", "R1", "R2", "R3", "total"]
    rows = [[f"player_{p}"] + [str(game.round_scores[r][p]) if r < len(game.round_scores) else "-" for r in range(3)] + [str(game.totals[p])]
            for p in range(n)]
    best = min(game.totals) if done else None
    active_row = game.current if not done else next(p for p in range(n) if game.totals[p] == best)
    y += draw_table_grid(draw, SIDE_X, y, headers, rows, [96, 50, 50, 50, WIDTH - 10 - SIDE_X - 246], active_row=active_row) + 14
    for line in LEGEND:
        text(draw, (SIDE_X, y), line, 13, fill=ui.MUTED)
        y += 18
    return to_array(image)


__all__ = ["action_text", "card_face", "draw_table"]

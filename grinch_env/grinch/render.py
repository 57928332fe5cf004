"""A picture of a *Grinch Grow Your Heart* table: :func:`draw_table` returns ``uint8[H, W, 3]``.

One row per seat: the player, their role (Grinch or Who), their hand, their
discard pile (bottom to top, every card public) and their score pad; a
header with the round, turn and phase, whose turn it is, the last action and
the draw pile.  Bonus cards carry a gold band with their bonus.

A seat's view shows only what that seat may see (the encoder's information,
:mod:`grinch_env.grinch.encoding`): its own hand, and of every other hand the
cards publicly known to be in it (taken from a discard pile) face up and the
rest face down, in no telling order.  The spectator view (``seat=None``)
shows every hand and says so on the picture.
"""

from __future__ import annotations

import numpy as np

from grinch_env.grinch.cards import RANK, SUIT, SUIT_LETTERS, SUIT_NAMES, card_name
from grinch_env.grinch.game import (
    GRINCH_DRAWS,
    NUM_ACTIONS,
    PHASE_DISCARD,
    PHASE_DONE,
    PHASE_DRAW,
    TURNS_PER_ROUND,
    Game,
    action_parts,
)
from grinch_env.grinch.scoring import ROW_NAMES
from grinch_env.rendering import (
    HIGHLIGHT,
    INK,
    LIGHT,
    MUTED,
    PANEL,
    PANEL_ACTIVE,
    CardFace,
    badge,
    canvas,
    check_seat,
    draw_card,
    draw_pile,
    draw_stack,
    fit_text,
    font,
    panel,
    text,
    text_width,
    to_array,
    view_banner,
)

SUIT_COLORS = ((32, 128, 56), (128, 52, 160), (200, 40, 48), (28, 96, 184))  # Wreaths, Noise, Ornaments, Presents
SUIT_ICONS = ("wreath", "noise", "ornament", "present")
GRINCH_GREEN = (140, 200, 60)
WHO_PINK = (250, 170, 200)

WIDTH = 1408
HEADER_HEIGHT = 124
COLUMNS_TOP = HEADER_HEIGHT + 4
ROW_TOP = COLUMNS_TOP + 28
ROW_HEIGHT = 112
CARD_W, CARD_H = 60, 86
HAND_X, PILE_X, PAD_X = 186, 640, 924
PILE_WIDTH = 270
PAD_COLUMN, PAD_TOTAL = 57, 65


def card_face(game: Game, card: int) -> CardFace:
    """Return the face of ``card``: its rank, suit picture and name, and its bonus (if the layout gives it one)."""
    suit = SUIT[card]
    bonus = game.layout[card]
    footer = ""
    if bonus is not None:
        letter = SUIT_LETTERS[bonus.suit]
        footer = f"+{bonus.points} if {bonus.count} {letter}"  # the bonus holds with at least that many cards of that suit
    return CardFace(str(RANK[card]), SUIT_COLORS[suit], SUIT_NAMES[suit], SUIT_ICONS[suit], footer)


def action_text(num_players: int, seat: int, action: int) -> str:
    """Return what ``seat``'s ``action`` did, naming piles by their owner (``"player_1: draw from player_3's pile"``)."""
    if not 0 <= action < NUM_ACTIONS:
        raise ValueError(f"a Grinch action is an int in 0..{NUM_ACTIONS - 1}, got {action!r}")
    who = f"player_{seat}"
    kind, arg = action_parts(action, seat, num_players)
    if kind == "discard":
        return f"{who}: discard {card_name(arg)}"
    if kind == "score":
        return f"{who}: score the {ROW_NAMES[arg]} row"
    source = "the draw" if kind == "draw" else "own discard" if arg == seat else f"player_{arg}'s discard"
    return f"{who}: draw from {source} pile"


def visible_hand(game: Game, owner: int, seat: int | None) -> list[CardFace | None]:
    """Return ``owner``'s hand as ``seat`` sees it: sorted faces, or the known cards then backs (``None``) for another's hand."""
    if seat is None or seat == owner:
        return [card_face(game, c) for c in sorted(game.hands[owner])]
    known = sorted(game.known[owner])
    return [card_face(game, c) for c in known] + [None] * (len(game.hands[owner]) - len(known))


def _status(game: Game) -> str:
    n = game.num_players
    if game.phase == PHASE_DONE:
        best = max(game.totals)
        winners = [f"player_{p}" for p in range(n) if game.totals[p] == best]
        return f"Game over after {game.num_rounds} rounds: {' and '.join(winners)} {'win' if len(winners) > 1 else 'wins'} with {best} points"
    who = f"player_{game.current} ({'Grinch' if game.current == game.grinch else 'Who'})"
    if game.phase == PHASE_DRAW:
        doing = f"{who} draws ({game.draws_made + 1} of {GRINCH_DRAWS})"
    elif game.phase == PHASE_DISCARD:
        doing = f"{who} discards"
    else:
        doing = f"{who} scores a row"
    turn = f"turn {game.turn}/{TURNS_PER_ROUND}" if game.turn is not None else "scoring"
    return f"Round {game.round + 1}/{game.num_rounds}  |  {turn}  |  {doing}"


def draw_table(game: Game, seat: int | None = None, last_action: str | None = None) -> np.ndarray:
    """Return a picture of ``game``'s table as ``uint8[H, W, 3]``: the spectator's (``seat=None``) or ``seat``'s view.

    ``last_action`` is written in the header (e.g. :func:`action_text`'s words).
    The same state, seat and last action always give the same bytes.
    """
    n = game.num_players
    seat = check_seat(seat, n)
    height = ROW_TOP + n * ROW_HEIGHT + 8
    image, draw = canvas(WIDTH, height)
    done = game.phase == PHASE_DONE

    # Header: title, status, whose view, the last action, the draw pile.
    draw.rectangle((0, 0, image.width, HEADER_HEIGHT - 6), fill=(18, 60, 42))
    text(draw, (20, 12), "Grinch Grow Your Heart", 28, fill=GRINCH_GREEN, bold=True)
    text(draw, (20 + 340, 20), f"{n} players", 18, fill=MUTED)
    text(draw, (20, 52), _status(game), 19, fill=HIGHLIGHT if not done else LIGHT, bold=True)
    w = view_banner(draw, 20, 84, seat, "other hands face down, except cards known from discard piles", "every hand shown")
    text(draw, (20 + w + 16, 86), fit_text("Last action: " + (last_action or "none yet"), WIDTH - 260 - w, 16), 16, fill=LIGHT)
    draw_stack(draw, WIDTH - 120, 12, 50, 70, len(game.draw_pile), f"draw pile: {len(game.draw_pile)}")

    # Column titles.
    y = COLUMNS_TOP
    text(draw, (24, y + 2), "player", 14, fill=MUTED)
    text(draw, (HAND_X, y + 2), "hand", 14, fill=MUTED)
    text(draw, (PILE_X, y + 2), "discard pile (bottom to top)", 14, fill=MUTED)
    x = PAD_X
    for k, name in enumerate(ROW_NAMES):
        color = SUIT_COLORS[k] if k < 4 else (250, 248, 238)
        draw.rounded_rectangle((x + 2, y, x + PAD_COLUMN - 2, y + 22), radius=5, fill=color if k < 4 else (70, 70, 70))
        size = 11 if text_width(name, 11) <= PAD_COLUMN - 6 else 10  # "Ornaments" in the smaller size
        draw.text((x + PAD_COLUMN / 2, y + 11), fit_text(name, PAD_COLUMN - 2, size), font=font(size), fill=LIGHT, anchor="mm")
        x += PAD_COLUMN
    draw.rounded_rectangle((x + 2, y, x + PAD_TOTAL - 2, y + 22), radius=5, fill=(20, 20, 20))
    draw.text((x + PAD_TOTAL / 2, y + 11), "total", font=font(13), fill=LIGHT, anchor="mm")

    best = max(game.totals)
    for p in range(n):
        top = ROW_TOP + p * ROW_HEIGHT
        active = p == game.current
        panel(draw, (10, top, WIDTH - 10, top + ROW_HEIGHT - 8), fill=PANEL_ACTIVE if active else PANEL, outline=HIGHLIGHT if active else None)
        # Who this is.
        text(draw, (24, top + 10), f"player_{p}", 20, fill=LIGHT, bold=True)
        is_grinch = p == game.grinch and not done
        badge(draw, (24, top + 40), "GRINCH" if is_grinch else "Who", GRINCH_GREEN if is_grinch else WHO_PINK, size=13)
        if seat == p:
            badge(draw, (100, top + 40), "you", (120, 200, 255), size=13)
        if active:
            badge(draw, (24, top + 68), "to act", HIGHLIGHT, size=13)
        elif done and game.totals[p] == best:
            badge(draw, (24, top + 68), "winner", HIGHLIGHT, size=13)
        # The hand.
        cards = visible_hand(game, p, seat)
        cy = top + (ROW_HEIGHT - 8 - CARD_H) / 2
        if not cards:
            text(draw, (HAND_X, cy + CARD_H / 2 - 8), "(no cards)", 14, fill=MUTED)
        step = min(CARD_W + 4, (PILE_X - 20 - HAND_X - CARD_W) / max(1, len(cards) - 1))
        for i, face in enumerate(cards):
            draw_card(draw, HAND_X + i * step, cy, CARD_W, CARD_H, face)
        # The discard pile, every card public.
        draw_pile(draw, PILE_X, cy, CARD_W, CARD_H, [card_face(game, c) for c in game.piles[p]], PILE_WIDTH)
        # The score pad.
        x = PAD_X
        draw.rounded_rectangle((x, cy + 14, x + 7 * PAD_COLUMN + PAD_TOTAL, cy + CARD_H - 14), radius=6, fill=(250, 248, 238))
        mid = cy + CARD_H / 2
        for k, value in enumerate(game.score_sheet[p]):
            if k:
                draw.line([(x, cy + 18), (x, cy + CARD_H - 18)], fill=(200, 200, 190), width=1)
            draw.text((x + PAD_COLUMN / 2, mid), "-" if value is None else str(value), font=font(18),
                      fill=(170, 170, 160) if value is None else INK, anchor="mm")
            x += PAD_COLUMN
        draw.rectangle((x, cy + 14, x + PAD_TOTAL, cy + CARD_H - 14), fill=(255, 236, 160) if done and game.totals[p] == best else (232, 228, 210))
        draw.text((x + PAD_TOTAL / 2, mid), str(game.totals[p]), font=font(20), fill=INK, anchor="mm", stroke_width=1, stroke_fill=INK)
    return to_array(image)


__all__ = ["SUIT_COLORS", "action_text", "card_face", "draw_table", "visible_hand"]

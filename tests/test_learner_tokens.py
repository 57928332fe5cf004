"""The rules-level token encoders (grinch_env/<game>/tokens.py): exact contents, and no hidden information."""

from __future__ import annotations

import numpy as np
import pytest

from grinch_env.gnoming import tokens as gt
from grinch_env.gnoming.game import DISCARD_A, PLAY
from grinch_env.gnoming.game import Game as Gnoming
from grinch_env.grinch import tokens as rt
from grinch_env.grinch.game import DRAW_DISCARD_BASE, SCORE_BASE
from grinch_env.grinch.game import Game as Grinch
from grinch_env.grinch.scoring import bonus_points, resolve_layout, row_scores


def _play(game, steps: int, seed: int):
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        game.step(int(rng.choice(game.legal_actions())))
    return game


def test_both_games_share_the_column_layout():
    for name in ("TYPE", "CARD", "SEAT", "POS", "CARD2", "NUM_IDS", "NUM_DENSE", "TOKEN_DIM", "ACTION_DIM", "CARD_VOCAB"):
        assert getattr(gt, name) == getattr(rt, name)
    g = _play(Gnoming(3, rng=0), 30, 1)
    assert gt.state_tokens(g, 0).shape == (gt.N_TOKENS, gt.TOKEN_DIM) == (89, 36)
    r = _play(Grinch(2, rng=0), 5, 1)
    assert rt.state_tokens(r, 0).shape == (rt.N_TOKENS, rt.TOKEN_DIM) == (55, 36)
    assert rt.action_tokens(r, r.current).shape == (len(r.legal_actions()), rt.ACTION_DIM)


def test_gnoming_tokens_do_not_see_face_down_cards():
    game = _play(Gnoming(3, rng=5), 40, 2)
    other = game.clone()
    # swap two face-down cards of different kinds (in different layouts) and reverse the never-seen draw pile
    down = [(s, p) for s in range(3) for p in range(9) if not game.face_up[s][p]]
    (s1, p1), (s2, p2) = next((a, b) for a in down for b in down if game.layouts[a[0]][a[1]] != game.layouts[b[0]][b[1]])
    other.layouts[s1][p1], other.layouts[s2][p2] = game.layouts[s2][p2], game.layouts[s1][p1]
    other.draw_pile = other.draw_pile[::-1]
    assert other.layouts != game.layouts
    for seat in range(3):
        assert np.array_equal(gt.state_tokens(game, seat), gt.state_tokens(other, seat))
        assert np.array_equal(gt.action_tokens(game, seat), gt.action_tokens(other, seat))
    # control: turning that card up is visible
    other.face_up[s1][p1] = True
    assert not np.array_equal(gt.state_tokens(game, 0), gt.state_tokens(other, 0))


def test_grinch_tokens_do_not_see_other_hands_or_the_draw_pile():
    game = _play(Grinch(3, rng=7), 4, 3)
    seat = game.current
    victim = next(p for p in range(3) if p != seat and len(game.hands[p]) > len(game.known[p]))
    other = game.clone()
    hidden = next(c for c in other.hands[victim] if c not in other.known[victim])
    swap = other.draw_pile[0]
    other.hands[victim][other.hands[victim].index(hidden)] = swap
    other.draw_pile[0] = hidden
    other.draw_pile = other.draw_pile[::-1]
    assert np.array_equal(rt.state_tokens(game, seat), rt.state_tokens(other, seat))
    assert np.array_equal(rt.action_tokens(game, seat), rt.action_tokens(other, seat))
    # control: the victim itself sees the difference
    assert not np.array_equal(rt.state_tokens(game, victim), rt.state_tokens(other, victim))


def test_gnoming_place_token_describes_the_lines_it_touches():
    g = Gnoming(3, rng=0)
    five, neg = 2, 7  # kind 2 is the positive 5, kind 7 the -2
    g.layouts[0] = [five, five, 0, neg, 0, 0, 0, 0, 0]
    g.face_up[0] = [True, True, False, True, False, False, False, False, False]
    g.phase, g.current, g.turn_player, g.held, g.held_source = PLAY, 0, 0, five, "draw"
    g.version += 1  # legal actions are cached per version
    tokens = dict(zip(g.legal_actions(), gt.action_tokens(g, 0)))
    t = tokens[2]  # place the held 5 into slot 2: row 0 becomes 5 5 5, column 2 stays face down below
    d = gt.NUM_IDS
    assert (t[gt.TYPE], t[gt.CARD], t[gt.CARD2], t[gt.POS]) == (gt.A_PLACE, five + 1, gt.FACE_DOWN, 2)
    np.testing.assert_allclose(t[d:d + 5], [1 / 3, 1, 2 / 3, 0, 5 / 8])  # row 0 before: 1 face down, alive, 2 agree
    np.testing.assert_allclose(t[d + 5:d + 10], [1, 1, 0, 0, 0])  # column 2 before: all face down
    np.testing.assert_allclose(t[d + 10:d + 15], [0, 1, 1, 1, 5 / 8])  # row 0 after: matched 5s
    np.testing.assert_allclose(t[d + 15:d + 20], [2 / 3, 1, 1 / 3, 0, 5 / 8])  # column 2 after: one 5 up
    assert (t[d + 20], t[d + 21], t[d + 22]) == (1.0, pytest.approx(0.5), 0.0)  # displaces a face-down card; a 5 scores 5
    t = tokens[0]  # replace a 5 of row 0 by a 5: still two agreeing plus one face down
    assert t[gt.CARD2] == five + 1 and t[d + 22] == pytest.approx(0.5)
    t = tokens[4]  # slot 4: row 1 holds the -2, so it can never match
    np.testing.assert_allclose(t[d + 10:d + 15], [1 / 3, 0, 0, 0, 5 / 8])
    t = tokens[DISCARD_A]
    assert (t[gt.TYPE], t[gt.CARD], t[gt.CARD2]) == (gt.A_DISCARD, five + 1, g.piles[0][-1] + 1)


def test_grinch_action_tokens_are_the_scoring_rules_of_the_afterstate():
    layout = resolve_layout("standard")
    scales = rt._layout("standard").scales
    d = rt.NUM_IDS
    checked = used_and_scoring = 0
    for seed in range(12):
        game = _play(Grinch(3, rng=seed), int(np.random.default_rng(seed).integers(0, 40)), seed)
        if game.done:
            continue
        seat = game.current
        hand = game.hands[seat]
        for a, t in zip(game.legal_actions(), rt.action_tokens(game, seat)):
            if a < 48:
                after = [c for c in hand if c != a]
                assert t[rt.TYPE] == rt.A_DISCARD and t[rt.CARD] == a + 1
            elif DRAW_DISCARD_BASE <= a < SCORE_BASE:
                pile = game.piles[(seat + a - DRAW_DISCARD_BASE) % 3]
                after = hand + [pile[-1]]
                assert t[rt.CARD] == pile[-1] + 1 and t[rt.CARD2] == (pile[-2] + 1 if len(pile) > 1 else 0)
            elif a >= SCORE_BASE:
                row = a - SCORE_BASE
                points = row_scores(hand)[row] + bonus_points(hand, layout)
                assert t[rt.POS] == row and t[d + 8] == pytest.approx(points / scales.points)
                checked += 1
                continue
            else:
                after = hand  # the draw pile: before chance
            open_rows = np.array([v is None for v in game.score_sheet[seat]])  # v3: a used row reads 0
            np.testing.assert_allclose(t[d:d + 7], np.array(row_scores(after)) * open_rows / 30, atol=1e-6)
            assert t[d + 7] == pytest.approx(bonus_points(after, layout) / scales.bonus)
            checked += 1
            used_and_scoring += bool((np.array(row_scores(after)) * ~open_rows).any())
    assert checked > 40 and used_and_scoring > 5  # some afterstates would have scored in a used row


def test_hand_values_match_the_scoring_module():
    rng = np.random.default_rng(0)
    layout = resolve_layout("standard")
    hands = [list(rng.choice(48, rng.integers(0, 7), replace=False)) for _ in range(500)]
    onehot = np.zeros((len(hands), 48))
    for i, h in enumerate(hands):
        onehot[i, h] = 1
    rows, bonus = rt.hand_values(onehot)
    for i, h in enumerate(hands):
        assert tuple(rows[i].astype(int)) == row_scores(h)
        assert bonus[i] == bonus_points(h, layout)


def test_encode_batch_rejects_a_wrong_shape():
    with pytest.raises(ValueError, match=r"obs must have shape \[B, 1046\]"):
        gt.encode_batch(np.zeros((2, 1337)))
    with pytest.raises(ValueError, match=r"obs must have shape \[B, 1337\]"):
        rt.encode_batch(np.zeros(1337))


def test_gnoming_slot_and_seat_tokens_carry_printed_points_and_line_facts():
    g = Gnoming(3, rng=0)
    five, neg, hazard = 2, 7, 10  # kinds: the positive 5, the -2, the Hazard (+10)
    g.layouts[1] = [five, five, five, neg, hazard, 0, 0, 0, 0]
    g.face_up[1] = [True, True, True, True, True, False, False, False, False]
    g.version += 1
    st = gt.state_tokens(g, 0)  # seat 1 is relative seat 1 for the observer 0 at a table of 3
    d = gt.NUM_IDS
    slots = st[gt.L0 + 1 * 9:gt.L0 + 2 * 9]
    assert slots[0, gt.CARD] == five + 1 and slots[5, gt.CARD] == gt.FACE_DOWN
    np.testing.assert_allclose(slots[:, d + 1], [0.5, 0.5, 0.5, -0.2, 1.0, 0, 0, 0, 0])  # printed points / 10
    np.testing.assert_array_equal(slots[:, d + 2], [0, 0, 0, 0, 0, 1, 1, 1, 1])  # face down
    np.testing.assert_allclose(slots[0, d + 3:d + 8], [0, 1, 1, 1, 5 / 8])  # slot 0's row: three 5s, matched
    np.testing.assert_allclose(slots[0, d + 8:d + 13], [1 / 3, 0, 0, 0, 5 / 8])  # its column 5 / -2 / down: can never match
    np.testing.assert_allclose(slots[4, d + 3:d + 8], [1 / 3, 0, 0, 0, 0])  # row 1 holds the -2 and the Hazard
    seat = st[gt.S0 + 1]
    np.testing.assert_allclose(seat[d + 8:d + 11], [4 / 9, (5 + 5 + 5 - 2 + 10) / 50, 1 / 6])  # face down, face-up points, matched lines
    assert st[gt.S0 + 1 + 3, gt.TYPE] == gt.PAD and not st[gt.S0 + 4, d:].any()  # seat 4 is not at a table of 3
    kinds = st[gt.K0:]
    np.testing.assert_allclose(kinds[:, d + 4], [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, -0.1, -0.2, -0.3, -0.4, 1.0, 0.0])

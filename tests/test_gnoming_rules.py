"""Gnoming rules: scripted games from rigged decks with exact expected states (RULES_GNOMING.md §2-§4)."""

import numpy as np
import pytest
from gnoming_helpers import KIND, cards_in_play, ks, play, random_game, rigged

from grinch_env.gnoming.cards import HAZARD, MULLIGAN
from grinch_env.gnoming.encoding import NEVER_SEEN, RESHUFFLED_COUNTS, RESHUFFLED_FLAG, encode
from grinch_env.gnoming.game import (
    DISCARD_A,
    DISCARD_B,
    DRAW,
    PASS,
    TAKE_A,
    TAKE_B,
    Game,
    IllegalActionError,
    Phase,
    action_name,
)

H, M = HAZARD, MULLIGAN
K3, K4, K5, K6, K7, K8 = (KIND[v] for v in "345678")
LOW = "3 3 3 / 4 4 4 / 5 5 5"  # -12: three matched rows
HIGH = "8 7 6 / 5 4 3 / 8 7 6"  # 54: nothing matched
MID = "8 7 6 / 5 4 3 / -1 -2 -3"  # 27


def reveal_all(game: Game, slots=(0, 1)) -> None:
    """Every player turns up ``slots`` in the reveal."""
    for _ in range(game.num_players):
        play(game, *slots)


# ------------------------------------------------------------------ set-up
def test_setup_deals_turns_two_piles_and_starts_the_reveal():
    g = rigged(3, [HIGH, LOW, MID], "3 4")
    assert g.layouts == [ks(HIGH), ks(LOW), ks(MID)]
    assert g.face_up == [[False] * 9] * 3
    assert g.piles == [[K3], [K4]] and g.removed == [] and len(g.draw_pile) == 110 - 27 - 2 == 81
    assert (g.phase, g.current, g.round, g.round_first) == (Phase.REVEAL, 0, 0, 0)
    assert g.legal_actions() == list(range(9))
    assert cards_in_play(g) == 110


def test_a_hazard_turned_at_setup_leaves_the_round_and_the_next_card_is_turned():
    g = rigged(3, [HIGH, LOW, MID], "H 3 4")
    assert g.piles == [[K3], [K4]] and g.removed == [H] and len(g.draw_pile) == 80
    g = rigged(4, [HIGH, LOW, MID, LOW], "H H 5 H 6")
    assert g.piles == [[K5], [K6]] and g.removed == [H, H, H] and len(g.draw_pile) == 110 - 36 - 5
    # Nobody responds to a set-up Hazard: the reveal starts with the first player.
    assert (g.phase, g.current) == (Phase.REVEAL, 0)
    assert cards_in_play(g) == 110


def test_reveal_goes_left_two_picks_each_then_the_first_player_draws():
    g = rigged(3, [HIGH, LOW, MID], "3 4", first_player=1)
    order = []
    for slot in (4, 0, 8, 7, 2, 1):
        order.append(g.current)
        g.step(slot)
    assert order == [1, 1, 2, 2, 0, 0]
    assert [[p for p in range(9) if up[p]] for up in g.face_up] == [[1, 2], [0, 4], [7, 8]]
    assert (g.phase, g.current, g.turn_player, g.turns_this_round) == (Phase.DRAW, 1, 1, 0)
    assert g.legal_actions() == [DRAW, TAKE_A, TAKE_B]


def test_revealing_a_face_up_slot_is_refused_with_the_phase_and_legal_actions():
    g = rigged(3, [HIGH, LOW, MID], "3 4")
    g.step(4)
    with pytest.raises(IllegalActionError, match=r"illegal action 4 \(slot 4 \(row 1, col 1\)\) for seat 0 in phase 'reveal'; legal actions: \[0, 1, 2, 3, 5, 6, 7, 8\]"):
        g.step(4)
    with pytest.raises(IllegalActionError, match="phase 'reveal'"):
        g.step(DRAW)
    for bad in (None, 1.0, True, -1, 15, np.int64(99)):
        with pytest.raises(IllegalActionError):
            g.step(bad)
    assert action_name(DRAW) == "DRAW" and action_name(PASS) == "PASS" and action_name(99) == "invalid action 99"


# ------------------------------------------------------------------ a turn
def test_draw_and_discard_the_drawn_card_ends_the_turn_with_no_flip():
    g = rigged(3, [HIGH, LOW, MID], "3 4", draws="7")
    reveal_all(g)
    g.step(DRAW)
    assert (g.phase, g.held, g.held_source) == (Phase.PLAY, K7, "draw")
    assert g.legal_actions() == list(range(9)) + [DISCARD_A, DISCARD_B]
    g.step(DISCARD_B)
    assert g.piles == [[K3], [K4, K7]] and g.held is None
    assert g.face_up[0] == [True, True] + [False] * 7  # no Skyjo flip
    assert (g.phase, g.current, g.turns_this_round) == (Phase.DRAW, 1, 1)


def test_place_over_a_face_up_card_discards_it():
    g = rigged(3, [HIGH, LOW, MID], "3 4", draws="5")
    reveal_all(g)
    play(g, DRAW, 0)  # the 5 replaces the face-up 8 in slot 0
    assert (g.phase, g.held, g.held_source, g.filled[0]) == (Phase.DISCARD, K8, "displaced", True)
    assert g.legal_actions() == [DISCARD_A, DISCARD_B]
    g.step(DISCARD_A)
    assert g.layouts[0][0] == K5 and g.piles == [[K3, K8], [K4]] and g.current == 1


def test_bounce_chain_through_face_down_slots_ends_on_a_face_up_slot():
    # Seat 0: 6 8 5 / 3 6 4 / 7 -2 8, slots 0 and 1 (6 and 8) face up.
    g = rigged(3, ["6 8 5 / 3 6 4 / 7 -2 8", LOW, MID], "3 4", draws="5")
    reveal_all(g)
    g.step(DRAW)
    g.step(2)  # the drawn 5 goes to slot 2; the face-down 5 there matches it and may bounce
    assert (g.phase, g.held, g.held_source) == (Phase.BOUNCE, K5, "bounce")
    assert g.legal_actions() == [0, 1, 3, 4, 5, 6, 7, 8, DISCARD_A, DISCARD_B]
    g.step(4)  # the 5 bounces onto slot 4; its 6 matches the face-up 6 in slot 0
    assert (g.phase, g.held, g.layouts[0][4], g.face_up[0][4]) == (Phase.BOUNCE, K6, K5, True)
    g.step(8)  # the 6 bounces onto slot 8; its 8 matches the face-up 8 in slot 1
    assert (g.phase, g.held) == (Phase.BOUNCE, K8)
    assert g.legal_actions() == [0, 1, 3, 5, 6, 7, DISCARD_A, DISCARD_B]
    with pytest.raises(IllegalActionError, match=r"phase 'bounce'; legal actions: \[0, 1, 3, 5, 6, 7, 12, 13\]"):
        g.step(4)  # filled this turn
    g.step(1)  # onto the face-up 8: the chain ends and that 8 is discarded
    assert (g.phase, g.held, g.held_source) == (Phase.DISCARD, K8, "displaced")
    assert [p for p in range(9) if g.filled[p]] == [1, 2, 4, 8]
    g.step(DISCARD_B)
    assert g.layouts[0] == ks("6 8 5 / 3 5 4 / 7 -2 6")
    assert g.face_up[0] == [True, True, True, False, True, False, False, False, True]
    assert g.piles == [[K3], [K4, K8]]
    assert (g.phase, g.current, g.filled) == (Phase.DRAW, 1, [False] * 9)
    assert cards_in_play(g) == 110


def test_a_bounce_may_stop_and_negatives_mulligans_hazards_never_bounce():
    g = rigged(3, ["6 8 5 / 3 6 -2 / M H 8", LOW, MID], "3 4", draws="5 7 6 4")
    reveal_all(g)
    play(g, DRAW, 2)
    assert g.phase == Phase.BOUNCE
    g.step(DISCARD_A)  # stop bouncing: the 5 is discarded
    assert g.piles == [[K3, K5], [K4]] and g.face_up[0][2] and g.layouts[0][2] == K5
    play(g, DRAW, DISCARD_A, DRAW, DISCARD_A)  # seats 1 and 2 pass their turns
    play(g, DRAW, 5)  # the drawn 4 replaces the face-down -2: a negative card never bounces
    assert (g.phase, g.held, g.held_source) == (Phase.DISCARD, KIND["-2"], "displaced")
    g.step(DISCARD_B)
    play(g, DRAW, DISCARD_A, DRAW, DISCARD_A)
    g.step(DRAW)  # 3s now (the rest of the deck)
    g.step(6)  # replaces the face-down Mulligan: no bounce, discarded
    assert (g.phase, g.held) == (Phase.DISCARD, M)


def test_a_displaced_face_down_card_bounces_on_any_face_up_match_not_only_the_placed_card():
    g = rigged(3, ["7 8 3 / 4 6 5 / 3 3 4", LOW, MID], "3 4", draws="5")
    reveal_all(g)
    play(g, DRAW, 6)  # the drawn 5 replaces a face-down 3; no face-up 3 in the layout: no bounce
    assert (g.phase, g.held) == (Phase.DISCARD, K3)
    g.step(DISCARD_A)
    g = rigged(3, ["7 8 3 / 4 6 5 / 3 3 4", LOW, MID], "3 4", draws="5")
    for _ in range(3):
        play(g, 0, 2)  # seat 0 turns up the 7 and a 3
    play(g, DRAW, 6)  # the 5 replaces the face-down 3 in slot 6, which matches the face-up 3 in slot 2
    assert (g.phase, g.held) == (Phase.BOUNCE, K3)


# ---------------------------------------------------------------- Hazards
def test_hazard_response_round_from_the_discarders_left_skipping_players_with_one_face_down():
    g = rigged(4, [HIGH, LOW, MID, LOW], "3 4", draws="H")
    reveal_all(g)
    g.face_up[2] = [True] * 8 + [False]  # seat 2 has one face-down card left: it may not respond
    g.step(DRAW)
    assert g.held == H and g.legal_actions() == list(range(9)) + [DISCARD_A]  # a Hazard leaves with 12 only
    with pytest.raises(IllegalActionError, match=r"phase 'play'; legal actions: \[0, 1, 2, 3, 4, 5, 6, 7, 8, 12\]"):
        g.step(DISCARD_B)
    g.step(DISCARD_A)
    assert g.removed == [H] and g.piles == [[K3], [K4]] and g.held is None
    assert (g.phase, g.turn_player, g.current, g.responders) == (Phase.HAZARD, 0, 1, [1, 3])
    assert g.legal_actions() == [2, 3, 4, 5, 6, 7, 8, PASS]
    g.step(5)  # seat 1 turns up slot 5 where it lies
    assert g.face_up[1][5] and g.layouts[1] == ks(LOW)
    assert (g.phase, g.current) == (Phase.HAZARD, 3)
    g.step(PASS)
    assert (g.phase, g.current, g.turn_player, g.turns_this_round) == (Phase.DRAW, 1, 1, 1)
    assert cards_in_play(g) == 110


def test_a_displaced_hazard_is_removed_automatically_and_a_taken_pile_stays_empty():
    g = rigged(3, ["8 7 6 / 5 4 3 / 8 7 H", LOW, MID], "3 4", draws="")
    reveal_all(g)
    g.step(TAKE_A)
    assert (g.held, g.held_source, g.piles) == (K3, "A", [[], [K4]])
    assert g.legal_actions() == list(range(9))  # must_place: a taken card is placed
    with pytest.raises(IllegalActionError, match="phase 'play'"):
        g.step(DISCARD_A)
    g.auto_log.clear()
    g.step(8)  # the 3 replaces the face-down Hazard: it is discarded (12, automatic) and leaves the round
    assert g.auto_log == [(0, DISCARD_A)]
    assert g.removed == [H] and g.piles == [[], [K4]]
    assert (g.phase, g.current) == (Phase.HAZARD, 1)
    play(g, PASS, PASS)
    # Seat 1 cannot take from the empty pile A, and its discard must start A again (automatic).
    assert (g.phase, g.current) == (Phase.DRAW, 1) and g.legal_actions() == [DRAW, TAKE_B]
    g.auto_log.clear()
    play(g, DRAW, 4)
    assert g.auto_log == [(1, DISCARD_A)] and g.piles == [[K4], [K4]]


def test_a_drawn_hazard_may_be_placed_and_scores_ten():
    g = rigged(3, [HIGH, LOW, MID], "3 4", draws="H")
    reveal_all(g)
    play(g, DRAW, 0, DISCARD_A)
    assert g.layouts[0][0] == H and g.face_up[0][0] and g.piles == [[K3, K8], [K4]]


def test_the_draw_is_automatic_when_no_pile_can_be_taken():
    g = rigged(3, [HIGH, LOW, MID], "3 4", draws="5")
    reveal_all(g)
    # Both piles empty (only possible after Hazards left them empty): DRAW is the one legal action.
    g.draw_pile.extend(g.piles[0] + g.piles[1])
    g.piles = [[], []]
    g.auto_log.clear()
    g._start_turn(0)
    g._play_forced()
    assert g.auto_log == [(0, DRAW)] and g.phase == Phase.PLAY and g.held == K4


# ----------------------------------------------------------- discard_take
def test_must_place_versus_free_after_taking_from_a_pile():
    for option in ("must_place", "free"):
        g = rigged(3, [HIGH, LOW, MID], "3 4 5", discard_take=option)
        reveal_all(g)
        g.step(TAKE_B)
        assert (g.held, g.held_source, g.piles) == (K4, "B", [[K3], []])
        if option == "must_place":
            assert g.legal_actions() == list(range(9))
            with pytest.raises(IllegalActionError, match=r"phase 'play'; legal actions: \[0, 1, 2, 3, 4, 5, 6, 7, 8\]"):
                g.step(DISCARD_B)
        else:
            # B is empty now, so the discard must start it again: taking and putting back is legal under "free".
            assert g.legal_actions() == list(range(9)) + [DISCARD_B]
            g.step(DISCARD_B)
            assert g.piles == [[K3], [K4]] and (g.current, g.phase) == (1, Phase.DRAW)
    with pytest.raises(ValueError, match=r"discard_take must be one of \('must_place', 'free'\), got 'maybe'"):
        Game(3, discard_take="maybe")


# ------------------------------------------------------------ Mulligans
def test_mulligan_limit_on_placing_and_taking():
    g = rigged(3, ["M 8 M / 5 4 3 / 8 7 6", LOW, MID], "M 4")
    play(g, 0, 3)  # seat 0 shows one Mulligan (slot 0)
    play(g, 0, 1, 0, 1)
    assert g.legal_actions() == [DRAW, TAKE_A, TAKE_B]  # one face-up Mulligan: a Mulligan may go on it
    g.auto_log.clear()
    g.step(TAKE_A)
    # Only slot 0 takes the Mulligan, so the engine places it, and the face-up Mulligan it displaces
    # must go to the empty pile A: both automatic.
    assert g.auto_log == [(0, 0), (0, DISCARD_A)]
    assert g.piles == [[M], [K4]] and g.layouts[0][0] == M and g.current == 1
    play(g, DRAW, DISCARD_B, DRAW, DISCARD_B)  # seats 1 and 2 (draw 3s)
    g.face_up[0][2] = True  # a second face-up Mulligan, as a Hazard flip could turn up
    g.touch()
    assert g.legal_actions() == [DRAW, TAKE_B]  # the Mulligan on A cannot be placed: taking it is illegal
    with pytest.raises(IllegalActionError, match=r"phase 'draw'; legal actions: \[9, 11\]"):
        g.step(TAKE_A)
    g.draw_pile.append(g.piles[0].pop())  # the Mulligan goes to the top of the draw pile; A is empty
    g.auto_log.clear()
    g.step(DRAW)
    # A drawn Mulligan can only be discarded, and the empty pile A must take it: automatic.
    assert g.auto_log == [(0, DISCARD_A)] and g.piles[0] == [M] and g.current == 1


def test_a_drawn_mulligan_goes_anywhere_without_a_face_up_mulligan():
    g = rigged(3, [HIGH, LOW, MID], "3 4", draws="M")
    reveal_all(g)
    g.step(DRAW)
    assert g.held == M and g.legal_actions() == list(range(9)) + [DISCARD_A, DISCARD_B]


# ----------------------------------------------------------- reshuffle
def test_draw_pile_reshuffle_keeps_the_pile_tops_and_shuffles_the_rest_with_the_rng():
    g = rigged(3, ["8 7 6 / 5 4 3 / H H H", LOW, MID], "3 4", draws="5")
    reveal_all(g)
    # Move all but the top card of the draw pile under pile A's top (no Hazard is among them).
    top = g.draw_pile[-1]
    g.piles[0] = g.draw_pile[:-1] + g.piles[0]
    g.draw_pile = [top]
    under = g.piles[0][:-1] + g.piles[1][:-1]
    assert H not in under and len(under) == 110 - 27 - 3
    g.step(DRAW)
    expected = [under[i] for i in np.random.default_rng(0).permutation(len(under))]
    assert g.held == K5 and g.reshuffled and g.draw_pile == expected
    assert g.piles == [[K3], [K4]]
    obs = encode(g, 1)
    assert obs[RESHUFFLED_FLAG] == 1.0
    assert np.allclose(obs[RESHUFFLED_COUNTS:RESHUFFLED_COUNTS + 12] * 14, np.bincount(expected, minlength=12))
    # Never-seen now counts only face-down slots.
    face_down = [k for lay, up in zip(g.layouts, g.face_up) for k, u in zip(lay, up) if not u]
    assert np.allclose(obs[NEVER_SEEN:NEVER_SEEN + 12] * 14, np.bincount(face_down, minlength=12))
    assert cards_in_play(g) == 110


# ------------------------------------------------- going out, cap, scoring
@pytest.mark.parametrize(
    "layouts,draw,raw,expected",
    [
        ([LOW.replace("5 5 5", "5 5 -1"), HIGH, MID], "5", [-12, 54, 27], [-17, 54, 27]),  # lowest: -5
        ([HIGH.replace("8 7 6 / 5 4 3 / 8 7 6", "8 7 6 / 5 4 3 / 8 7 -1"), LOW, MID], "6", [54, -12, 27], [59, -12, 27]),  # not lowest: +5
        ([LOW.replace("5 5 5", "5 5 -1"), LOW, MID], "5", [-12, -12, 27], [-17, -12, 27]),  # a tie counts as lowest
    ],
)
def test_going_out_gives_one_more_turn_each_then_scores_with_plus_minus_five(layouts, draw, raw, expected):
    g = rigged(3, layouts, "3 4", draws=draw + " 7 3")
    reveal_all(g)
    g.face_up[0] = [True] * 8 + [False]  # seat 0 has one face-down card left (slot 8, a -1)
    play(g, DRAW, 8)  # replaces the -1 (no bounce)
    assert (g.phase, g.held) == (Phase.DISCARD, KIND["-1"])
    g.step(DISCARD_A)
    assert g.went_out == 0 and g.final_turns == [False, True, True]
    assert (g.current, g.phase) == (1, Phase.DRAW)
    play(g, DRAW, DISCARD_A)  # seat 1's final turn
    assert g.final_turns == [False, False, True] and g.round == 0
    play(g, DRAW, DISCARD_A)  # seat 2's final turn ends the round
    assert g.round_scores == [expected] and g.totals == expected
    assert g.round_capped == [False] and g.round_went_out == [0]
    # Round 1: a fresh deal, started by seat 1 (rotation).
    assert (g.round, g.phase, g.current, g.round_first, g.went_out, g.turns_this_round) == (1, Phase.REVEAL, 1, 1, None, 0)
    assert cards_in_play(g) == 110


def test_going_out_by_bouncing_onto_the_last_face_down_slot():
    g = rigged(3, ["5 6 3 / 4 7 8 / 3 5 6", HIGH, MID], "3 4", draws="5")
    reveal_all(g)
    g.face_up[0] = [True] * 7 + [False, False]
    play(g, DRAW, 7)  # the drawn 5 replaces a face-down 5, which matches the face-up 5 in slot 0
    assert (g.phase, g.held) == (Phase.BOUNCE, K5)
    g.step(8)  # the bounce turns up the last face-down card, a 6, which matches slot 1
    assert (g.phase, g.held) == (Phase.BOUNCE, K6) and False not in g.face_up[0]
    play(g, 2, DISCARD_A)  # onto the face-up 3 in slot 2; that 3 is discarded
    assert g.went_out == 0 and g.final_turns == [False, True, True] and g.current == 1
    assert g.layouts[0] == ks("5 6 6 / 4 7 8 / 3 5 5")


def test_the_turn_cap_ends_the_round_without_the_bonus():
    g = rigged(3, [HIGH, LOW, MID], "3 4", max_turns_per_player=10)
    reveal_all(g)
    for turn in range(30):
        assert (g.round, g.turns_this_round, g.current) == (0, turn, turn % 3)
        play(g, DRAW, DISCARD_A)  # draws 3s, then 4s from the rigged deck: nobody places
    assert g.round_scores == [[54, -12, 27]] and g.round_capped == [True] and g.round_went_out == [None]
    assert (g.round, g.phase, g.current) == (1, Phase.REVEAL, 1)
    with pytest.raises(ValueError, match=r"max_turns_per_player must be an int >= 10, got 9"):
        Game(3, max_turns_per_player=9)


def test_final_turns_may_pass_the_cap():
    g = rigged(3, [LOW.replace("5 5 5", "5 5 -1"), HIGH, MID], "3 4", draws="5", max_turns_per_player=10)
    reveal_all(g)
    for _ in range(9):
        play(g, DRAW, DISCARD_A, DRAW, DISCARD_A, DRAW, DISCARD_A)
    assert g.turns_this_round == 27 and g.current == 0
    g.draw_pile.append(KIND["5"])
    g.face_up[0] = [True] * 8 + [False]
    play(g, DRAW, 8, DISCARD_A)  # seat 0 goes out on turn 28
    play(g, DRAW, DISCARD_A)  # turn 29
    assert g.round == 0 and g.turns_this_round == 29
    play(g, DRAW, DISCARD_A)  # turn 30: the last final turn; the round is not capped
    assert g.round_capped == [False] and g.round_scores == [[-17, 54, 27]]


# ------------------------------------------------------- rounds and options
@pytest.mark.parametrize("rotation,firsts", [("rotate", [2, 3, 0]), ("fixed", [2, 2, 2])])
def test_start_rotation(rotation, firsts):
    g = Game(4, rng=5, first_player=2, start_rotation=rotation)
    rng = np.random.default_rng(0)
    seen = []
    while not g.done:
        if g.phase == Phase.REVEAL and g.reveal_picks == 0:
            seen.append((g.round, g.current, g.round_first))
        legal = g.legal_actions()
        g.step(legal[rng.integers(len(legal))])
    assert seen == [(r, f, f) for r, f in enumerate(firsts)]


def test_a_game_is_three_rounds_and_the_winner_has_the_lowest_total():
    g = random_game(5, 3)
    assert g.done and len(g.round_scores) == 3 and g.current is None and g.legal_actions() == []
    assert g.totals == [sum(s[p] for s in g.round_scores) for p in range(5)]
    low = min(g.totals)
    assert set(g.winners()) <= {p for p in range(5) if g.totals[p] == low}
    assert sum(g.rewards()) == pytest.approx(0.0) and sum(g.rewards("margin")) == pytest.approx(0.0)
    with pytest.raises(IllegalActionError, match=r"the game is over \(phase 'done'\)"):
        g.step(DRAW)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"num_players": 2}, r"num_players must be an int in 3\.\.7, got 2"),
        ({"num_players": 8}, r"num_players must be an int in 3\.\.7, got 8"),
        ({"num_players": 4.0}, r"num_players must be an int in 3\.\.7, got 4\.0"),
        ({"first_player": 4}, r"first_player must be a seat in 0\.\.3 for 4 players, got 4"),
        ({"start_rotation": "left"}, r"start_rotation must be one of \('rotate', 'fixed'\), got 'left'"),
        ({"mulligan_lines": "both"}, r"mulligan_lines must be one of \('independent', 'single'\), got 'both'"),
        ({"max_turns_per_player": 10.5}, r"max_turns_per_player must be an int >= 10, got 10\.5"),
        ({"rng": -1}, r"rng must be None, an int seed >= 0 or a numpy Generator, got -1"),
    ],
)
def test_bad_options_name_what_is_allowed(kwargs, message):
    n = kwargs.pop("num_players", 4)
    with pytest.raises(ValueError, match=message):
        Game(n, **kwargs)


def test_single_mulligan_lines_changes_the_round_score():
    layout = "4 4 M / 6 -1 7 / 3 5 7"
    for option, score in (("independent", 2), ("single", 14)):
        g = rigged(3, [layout, HIGH, MID], "3 4", max_turns_per_player=10, mulligan_lines=option)
        reveal_all(g)
        for _ in range(10):
            play(g, DRAW, DISCARD_A, DRAW, DISCARD_A, DRAW, DISCARD_A)
        assert g.round_scores == [[score, 54, 27]]


def test_render_draws_grids_with_face_down_cards_hidden():
    g = rigged(3, [HIGH, LOW, MID], "3 4", draws="5")
    play(g, 0, 4)
    text = g.render()
    assert "pile A (bottom..top): 3" in text and "pile B (bottom..top): 4" in text
    lines = text.splitlines()
    grid = [line for line in lines if line.startswith(" 8 ") or line.startswith("??")]
    assert grid[0].split()[:3] == ["8", "??", "??"] and grid[1].split()[:3] == ["??", "4", "??"]
    assert str(g.phase) == "reveal" and "held: -" in text

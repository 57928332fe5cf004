"""Rules: scripted games with injected decks and exact expected states (RULES.md)."""

import numpy as np
import pytest

from grinch_env.grinch.cards import NUM_CARDS, parse_card
from grinch_env.grinch.game import (
    DRAW_DISCARD_BASE,
    DRAW_PILE_ACTION,
    PHASE_DISCARD,
    PHASE_DONE,
    PHASE_DRAW,
    PHASE_SCORE,
    ROUNDS_BY_PLAYERS,
    SCORE_BASE,
    Game,
    IllegalActionError,
    decisions_per_game,
    terminal_rewards,
)
from grinch_env.grinch.scoring import NOISE_ROW, PRESENTS_ROW, RAINBOW_ROW, RUN_ROW, WREATHS_ROW


def c(name: str) -> int:
    return parse_card(name)


def cs(text: str) -> list[int]:
    return [parse_card(x) for x in text.split()]


def deck_for(hands: list[str], draws: str) -> list[int]:
    """Return a deck (top card last) that deals ``hands`` (seat order) and then draws ``draws`` in order."""
    dealt = [cs(h) for h in hands]
    drawn = cs(draws)
    used = {x for h in dealt for x in h} | set(drawn)
    deck = [x for x in range(NUM_CARDS) if x not in used]
    deck += drawn[::-1]
    for hand in dealt[::-1]:
        deck += hand[::-1]
    return deck


def scripted_game(num_players: int, hands: list[str], draws: str, **kwargs) -> Game:
    game = Game(num_players, rng=0, **kwargs)
    game._start_round(deck_for(hands, draws))
    return game


def conserved(game: Game) -> bool:
    everything = sorted([x for h in game.hands for x in h] + [x for p in game.piles for x in p] + game.draw_pile)
    return everything == list(range(NUM_CARDS))


def play(game: Game, *actions: int) -> None:
    for a in actions:
        game.step(a)


# -------------------------------------------------------- a scripted round
THREE_HANDS = ["W1 W2", "N1 N2", "O1 O2"]
THREE_DRAWS = "P1 P2 P3 P4 P5 P6 W3 W4 W5 W6 N3 N4 N5 N6"


def test_scripted_three_player_round_exact_states():
    g = scripted_game(3, THREE_HANDS, THREE_DRAWS)
    assert (g.grinch, g.order, g.turn, g.phase, g.current) == (0, [1, 2, 0], 1, PHASE_DISCARD, 1)
    # The first Who drew two cards when its turn began: it holds 4 while it is to discard.
    assert sorted(g.hands[1]) == sorted(cs("N1 N2 P1 P2"))
    assert [len(h) for h in g.hands] == [2, 4, 2]
    assert g.legal_actions() == sorted(cs("N1 N2 P1 P2"))

    g.step(c("N1"))
    assert g.piles[1] == [c("N1")] and g.current == 2 and sorted(g.hands[2]) == sorted(cs("O1 O2 P3 P4"))
    g.step(c("P4"))
    assert (g.current, g.phase, g.draws_made) == (0, PHASE_DRAW, 0)
    assert g.legal_actions() == [DRAW_PILE_ACTION, DRAW_DISCARD_BASE + 1, DRAW_DISCARD_BASE + 2]  # own pile empty
    g.step(DRAW_PILE_ACTION)
    assert sorted(g.hands[0]) == sorted(cs("W1 W2 P5")) and (g.phase, g.draws_made) == (PHASE_DRAW, 1)
    g.step(DRAW_DISCARD_BASE + 1)  # the pile of the player 1 seat to the Grinch's left: seat 1
    assert g.piles[1] == [] and g.known[0] == [c("N1")] and g.phase == PHASE_DISCARD
    g.step(c("N1"))  # the Grinch may discard a card it has just drawn
    assert g.piles[0] == [c("N1")] and g.known[0] == []
    assert [len(h) for h in g.hands] == [3, 5, 3]  # after turn 1 all hold 3; seat 1 already drew for turn 2
    assert (g.turn, g.current) == (2, 1) and sorted(g.hands[1]) == sorted(cs("N2 P1 P2 P6 W3"))

    play(g, c("P6"), c("W5"))
    assert sorted(g.hands[2]) == sorted(cs("O1 O2 P3 W4")) and g.piles[2] == cs("P4 W5")
    g.step(DRAW_DISCARD_BASE + 2)  # seat 2's pile: takes W5 ...
    g.step(DRAW_DISCARD_BASE + 2)  # ... and the same pile again: the uncovered P4
    assert g.piles[2] == [] and g.known[0] == cs("W5 P4")
    assert sorted(g.hands[0]) == sorted(cs("W1 W2 P4 P5 W5"))
    g.step(c("W1"))
    assert g.piles[0] == cs("N1 W1") and [len(h) for h in g.hands] == [4, 6, 4] and g.turn == 3

    play(g, c("W6"))  # seat 1 holds 6 while it is to discard in turn 3
    assert sorted(g.hands[2]) == sorted(cs("O1 O2 P3 W4 N4 N5"))
    play(g, c("N5"))
    g.step(DRAW_DISCARD_BASE + 0)  # own pile: W1 comes back
    g.step(DRAW_PILE_ACTION)  # N6
    assert g.known[0] == cs("W5 P4 W1")
    g.step(c("N6"))
    assert [len(h) for h in g.hands] == [5, 5, 5]
    assert (g.turn, g.phase, g.current, g.pos) == (None, PHASE_SCORE, 1, 0)
    assert conserved(g)

    # Scoring, in the same order (the Grinch last), every row's value plus the bonus.
    assert sorted(g.hands[1]) == sorted(cs("N2 N3 P1 P2 W3"))
    assert g.hand_value(1, NOISE_ROW) == 5 and g.hand_value(1, RAINBOW_ROW) == 3 + 3 + 2
    g.step(SCORE_BASE + RAINBOW_ROW)
    assert g.current == 2
    g.step(SCORE_BASE + RUN_ROW)  # O1 O2 P3 W4 N4: run 1-2-3-4
    assert g.current == 0
    assert sorted(g.hands[0]) == sorted(cs("W1 W2 W5 P4 P5"))
    g.step(SCORE_BASE + PRESENTS_ROW)
    assert g.totals == [9, 8, 15]
    assert g.score_sheet == [[None, None, None, 9, None, None, None], [None] * 4 + [8, None, None], [None] * 6 + [15]]

    # Round 2: the Grinch passes left, everything is gathered and dealt again.
    assert (g.round, g.grinch, g.order, g.turn, g.phase, g.current) == (1, 1, [2, 0, 1], 1, PHASE_DISCARD, 2)
    assert g.piles == [[], [], []] and g.known == [[], [], []]
    assert [len(h) for h in g.hands] == [2, 2, 4] and len(g.draw_pile) == 48 - 8
    assert conserved(g)


def test_grinch_draw_sources_are_relative_to_the_grinch():
    # 4 players, Grinch in seat 2: Whos 3, 0, 1 discard first.
    g = scripted_game(4, ["W1 W2", "N1 N2", "O1 O2", "P1 P2"], "W3 W4 N3 N4 O3 O4 P3", first_grinch=2)
    assert (g.grinch, g.order) == (2, [3, 0, 1, 2])
    play(g, c("W3"), c("N3"), c("O3"))  # seat 3 discards W3, seat 0 N3, seat 1 O3
    assert g.piles == [[c("N3")], [c("O3")], [], [c("W3")]]
    assert g.legal_actions() == [DRAW_PILE_ACTION, DRAW_DISCARD_BASE + 1, DRAW_DISCARD_BASE + 2, DRAW_DISCARD_BASE + 3]
    for action, illegal in [(DRAW_DISCARD_BASE + 0, "own pile is empty"), (DRAW_DISCARD_BASE + 4, "no seat 4 to the left"), (c("O1"), "not a draw")]:
        assert not g.is_legal(action), illegal
        with pytest.raises(IllegalActionError, match="phase 'draw'"):
            g.step(action)
    g.step(DRAW_DISCARD_BASE + 1)  # one seat to the left of seat 2: seat 3
    assert g.piles[3] == [] and c("W3") in g.hands[2]
    g.step(DRAW_DISCARD_BASE + 3)  # three seats to the left: seat 1
    assert g.piles[1] == [] and c("O3") in g.hands[2] and g.known[2] == cs("W3 O3")
    assert sorted(g.hands[2]) == sorted(cs("W3 O1 O2 O3"))


def test_same_pile_twice_takes_the_uncovered_card_and_empty_pile_is_illegal_after():
    g = scripted_game(2, ["W1 W2", "N1 N2"], "P1 P2 P3 P4 P5 P6")
    # 2 players: seat 1 (Who) draws P1 P2 and discards P1; the Grinch (seat 0) draws P3 P4 and discards W1.
    play(g, c("P1"), DRAW_PILE_ACTION, DRAW_PILE_ACTION, c("W1"))
    play(g, c("P5"))  # turn 2: seat 1 drew P5 P6; its pile is now P1 P5
    assert g.piles == [cs("W1"), cs("P1 P5")]
    g.step(DRAW_DISCARD_BASE + 1)
    assert g.legal_actions() == [DRAW_PILE_ACTION, DRAW_DISCARD_BASE + 0, DRAW_DISCARD_BASE + 1]
    g.step(DRAW_DISCARD_BASE + 1)
    assert g.piles == [cs("W1"), []] and g.known[0] == cs("P5 P1")
    assert sorted(g.hands[0]) == sorted(cs("W2 P3 P4 P5 P1"))
    play(g, c("P5"), c("N1"))  # the Grinch discards P5 (no longer known in its hand); turn 3 for seat 1
    assert g.known[0] == cs("P1") and g.piles == [cs("W1 P5"), cs("N1")]
    assert g.legal_actions() == [DRAW_PILE_ACTION, DRAW_DISCARD_BASE + 0, DRAW_DISCARD_BASE + 1]
    g.step(DRAW_DISCARD_BASE + 1)
    assert g.legal_actions() == [DRAW_PILE_ACTION, DRAW_DISCARD_BASE + 0]  # seat 1's pile is empty now
    assert not g.is_legal(DRAW_DISCARD_BASE + 1)


def test_who_hand_sizes_while_discarding_and_after_each_turn():
    for n in range(2, 7):
        g = Game(n, rng=10 + n)
        rng = np.random.default_rng(n)
        while not g.done:
            if g.phase == PHASE_DISCARD and g.current != g.grinch:
                assert len(g.hands[g.current]) == 3 + g.turn  # 4, 5, 6
            if g.phase == PHASE_DISCARD and g.current == g.grinch:
                assert len(g.hands[g.current]) == 3 + g.turn
            if g.phase == PHASE_SCORE:
                assert [len(h) for h in g.hands] == [5] * n
            legal = g.legal_actions()
            g.step(legal[rng.integers(len(legal))])


@pytest.mark.parametrize("first_grinch", [0, 1])
@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_rounds_roles_and_scoring_order(n, first_grinch):
    g = Game(n, rng=n, first_grinch=first_grinch)
    rng = np.random.default_rng(0)
    grinches, steps = [], 0
    while not g.done:
        if g.turn == 1 and g.pos == 0 and g.phase == PHASE_DISCARD:
            grinches.append(g.grinch)
            assert g.current == (g.grinch + 1) % n  # the Whos start at the Grinch's left
        if g.phase == PHASE_SCORE:
            assert g.current == (g.grinch + 1 + g.pos) % n  # same order, the Grinch last
        legal = g.legal_actions()
        g.step(legal[rng.integers(len(legal))])
        steps += 1
    assert len(grinches) == g.num_rounds == ROUNDS_BY_PLAYERS[n] == {2: 6, 3: 6, 4: 4, 5: 5, 6: 6}[n]
    assert grinches == [(first_grinch + r) % n for r in range(g.num_rounds)]
    assert steps == decisions_per_game(n)
    assert all(sum(v is not None for v in sheet) == g.num_rounds for sheet in g.score_sheet)
    assert g.totals == [sum(v for v in sheet if v is not None) for sheet in g.score_sheet]
    assert (g.phase, g.current, g.turn, g.legal_actions()) == (PHASE_DONE, None, None, [])
    with pytest.raises(IllegalActionError, match="the game is over"):
        g.step(SCORE_BASE)


def test_decisions_per_game_values():
    # per round: Whos discard 3 times each, the Grinch 3 x (2 draws + 1 discard), everyone scores once
    assert [decisions_per_game(n) for n in range(2, 7)] == [6 * (3 + 9 + 2), 6 * (6 + 9 + 3), 4 * (9 + 9 + 4), 5 * (12 + 9 + 5), 6 * (15 + 9 + 6)]


def test_rows_are_usable_once():
    g = Game(2, rng=3, num_rounds=2)
    rng = np.random.default_rng(1)
    while g.phase != PHASE_SCORE:
        legal = g.legal_actions()
        g.step(legal[rng.integers(len(legal))])
    assert g.legal_actions() == list(range(SCORE_BASE, SCORE_BASE + 7))
    first = g.current
    g.step(SCORE_BASE + WREATHS_ROW)
    g.step(SCORE_BASE + WREATHS_ROW)  # the other player may use the same row
    while not (g.phase == PHASE_SCORE and g.current == first):
        legal = g.legal_actions()
        g.step(legal[rng.integers(len(legal))])
    assert g.legal_actions() == list(range(SCORE_BASE + 1, SCORE_BASE + 7))
    with pytest.raises(IllegalActionError, match=r"phase 'score'.*legal actions: \[56, 57, 58, 59, 60, 61\]"):
        g.step(SCORE_BASE + WREATHS_ROW)


def test_card_conservation_every_step():
    for n in range(2, 7):
        g = Game(n, rng=100 + n)
        rng = np.random.default_rng(n)
        while not g.done:
            assert conserved(g)
            assert all(set(k) <= set(h) for k, h in zip(g.known, g.hands))  # known cards are in that hand
            legal = g.legal_actions()
            g.step(legal[rng.integers(len(legal))])


# ------------------------------------------------------- draw-pile refill
def test_draw_pile_refill_from_under_the_tops():
    g = scripted_game(4, ["W1 W2", "N1 N2", "O1 O2", "P1 P2"], "W3 W4 N3 N4 O3 O4 P3 P4 W5 W6 N5 N6 O5 O6")
    play(g, c("W3"), c("N3"), c("O3"), DRAW_PILE_ACTION, DRAW_PILE_ACTION, c("W1"))  # turn 1; the Grinch is seat 0
    play(g, c("W4"))  # turn 2: seat 1's pile is W3 W4; seat 2 (O1 O2 N4 N5 N6) is to discard
    assert sorted(g.hands[2]) == sorted(cs("O1 O2 N4 N5 N6"))
    # [decision] variant state: the draw pile is empty; its cards lie under seat 0's pile.
    g.piles[0] = g.draw_pile + g.piles[0]
    g.draw_pile = []
    assert conserved(g)
    under = set(g.piles[0][:-1]) | {c("W3"), c("N3")}  # every card under a top once seat 2 has discarded N4
    before = g.hands[3][:]
    g.step(c("N4"))  # seat 3's turn begins: it draws 2 from a draw pile refilled with the cards under the tops
    assert g.piles == [cs("W1"), cs("W4"), cs("N4"), cs("O3")]
    new_cards = set(g.hands[3]) - set(before)
    assert len(g.hands[3]) == 5 and len(new_cards) == 2 and new_cards <= under
    assert set(g.draw_pile) == under - new_cards and len(g.draw_pile) == len(under) - 2
    assert conserved(g)


def test_nothing_left_to_draw():
    g = scripted_game(2, ["W1 W2", "N1 N2"], "P1 P2")
    g.step(c("P1"))  # seat 1 discards; the Grinch (seat 0) is to draw
    # [decision] variant state: no draw pile and no card under a top; the rest of the deck is set aside in seat 1's hand.
    g.hands[1] += g.draw_pile
    g.draw_pile = []
    assert g.legal_actions() == [DRAW_DISCARD_BASE + 1]
    assert not g.is_legal(DRAW_PILE_ACTION)
    with pytest.raises(IllegalActionError, match=r"illegal action 48 \(draw from the draw pile\).*legal actions: \[50\]"):
        g.step(DRAW_PILE_ACTION)
    g.step(DRAW_DISCARD_BASE + 1)
    assert g.phase == PHASE_DRAW and g.legal_actions() == []  # nothing is left to draw anywhere


def test_a_who_draws_only_what_is_left():
    g = scripted_game(3, ["W1 W2", "N1 N2", "O1 O2"], "P1 P2 P3 P4 P5 P6 W3 W4")
    play(g, c("P1"), c("P3"), DRAW_PILE_ACTION, DRAW_PILE_ACTION, c("W1"))  # turn 1; the Grinch drew P5 P6
    assert sorted(g.hands[1]) == sorted(cs("N1 N2 P2 W3 W4")) and g.piles == [cs("W1"), cs("P1"), cs("P3")]
    # [decision] variant state: the draw pile is empty (its cards set aside in the Grinch's hand).
    g.hands[0] += g.draw_pile
    g.draw_pile = []
    g.step(c("N1"))  # seat 2's turn begins: only P1 (under N1) can be drawn, after a refill
    assert sorted(g.hands[2]) == sorted(cs("O1 O2 P4 P1"))
    assert g.piles == [cs("W1"), cs("N1"), cs("P3")] and g.draw_pile == []
    assert conserved(g)


# --------------------------------------------------------- rewards
@pytest.mark.parametrize(
    ("totals", "win", "margin"),
    [
        ([10, 5, 5, 0], [1.0, -1 / 3, -1 / 3, -1 / 3], [(10 - 10 / 3) / 100, 0.0, 0.0, -(20 / 3) / 100]),
        ([10, 10, 5, 3], [0.5, 0.5, -0.5, -0.5], [(10 - 6) / 100, (10 - 6) / 100, (5 - 23 / 3) / 100, (3 - 25 / 3) / 100]),
        ([9, 9, 9, 2], [1 / 3, 1 / 3, 1 / 3, -1.0], [(9 - 20 / 3) / 100] * 3 + [(2 - 9) / 100]),
        ([7, 7, 7], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]),
        ([3, 9], [-1.0, 1.0], [-0.06, 0.06]),
        ([50, 40, 50, 40, 50, 40], [1 / 3, -1 / 3] * 3, [(50 - 44) / 100, (40 - 46) / 100] * 3),
    ],
)
def test_terminal_rewards_exact(totals, win, margin):
    assert terminal_rewards(totals) == pytest.approx(win, abs=1e-12)
    assert terminal_rewards(totals, "win") == pytest.approx(win, abs=1e-12)
    assert terminal_rewards(totals, "margin") == pytest.approx(margin, abs=1e-12)
    assert sum(terminal_rewards(totals)) == pytest.approx(0.0, abs=1e-12)  # zero-sum
    assert sum(terminal_rewards(totals, "margin")) == pytest.approx(0.0, abs=1e-12)


def test_terminal_rewards_bad_mode():
    with pytest.raises(ValueError, match=r"reward_mode must be one of \('win', 'margin'\)"):
        terminal_rewards([1, 2], "score")


# ---------------------------------------------------------- options
@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"num_players": 1}, "num_players must be an int in 2..6"),
        ({"num_players": 7}, "num_players must be an int in 2..6"),
        ({"num_players": "4"}, "num_players must be an int in 2..6"),
        ({"num_players": True}, "num_players must be an int in 2..6"),
        ({"num_players": 3, "first_grinch": 3}, "first_grinch must be a seat in 0..2 for 3 players"),
        ({"first_grinch": -1}, "first_grinch must be a seat"),
        ({"num_rounds": 0}, "num_rounds must be an int in 1..6"),
        ({"num_rounds": 7}, "num_rounds must be an int in 1..6"),
        ({"bonus_layout": "printed"}, "bonus_layout must be one of"),
    ],
)
def test_bad_options(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Game(**kwargs)


def test_illegal_action_message_names_phase_action_and_legal_actions():
    g = scripted_game(2, ["W1 W2", "N1 N2"], "P1 P2")
    with pytest.raises(IllegalActionError) as err:
        g.step(c("W1"))
    text = str(err.value)
    assert "illegal action 0 (discard W1) for seat 1 in phase 'discard'" in text
    assert f"legal actions: {sorted(cs('N1 N2 P1 P2'))}" in text
    for bad in (None, 3.5, True, "12", 62, -1):
        with pytest.raises(IllegalActionError, match="phase 'discard'"):
            g.step(bad)
    g.step(np.int64(c("N1")))  # numpy integers are actions
    assert g.piles[1] == [c("N1")]


def test_legal_mask_is_the_legal_actions():
    # Game.legal_mask writes the rules per phase into bytes for speed; it must name exactly legal_actions() at every step.
    from grinch_env.grinch.game import NUM_ACTIONS, Game

    rng = np.random.default_rng(3)
    phases = set()
    for n in range(2, 7):
        game = Game(n, rng=n)
        while game.legal_actions():
            legal = game.legal_actions()
            mask = game.legal_mask()
            assert len(mask) == NUM_ACTIONS and [a for a in range(NUM_ACTIONS) if mask[a]] == legal, (n, game.phase)
            phases.add(game.phase)
            game.step(int(rng.choice(legal)))
        assert game.legal_mask() == bytearray(NUM_ACTIONS)
    assert len(phases) == 3  # discard, draw and score masks all checked

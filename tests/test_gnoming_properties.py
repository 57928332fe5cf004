"""Gnoming invariants of RULES_GNOMING.md §5 as hypothesis properties over random games and options:
all 110 cards accounted for, no Hazard on a discard pile, a non-empty draw pile at every turn's start,
no face-up card turned down within a round, a legal action at every decision, scores in range."""

import numpy as np
from gnoming_helpers import cards_in_play
from hypothesis import given, settings
from hypothesis import strategies as st

from grinch_env.gnoming.cards import HAZARD
from grinch_env.gnoming.encoding import encode, observation_bounds
from grinch_env.gnoming.game import Game, max_game_length

games = st.fixed_dictionaries(
    {
        "num_players": st.integers(3, 7),
        "seed": st.integers(0, 2**32 - 1),
        "play_seed": st.integers(0, 2**32 - 1),
        "start_rotation": st.sampled_from(["rotate", "fixed"]),
        "discard_take": st.sampled_from(["must_place", "free"]),
        "mulligan_lines": st.sampled_from(["independent", "single"]),
        "max_turns_per_player": st.sampled_from([10, 30]),
    }
)


@settings(max_examples=60, deadline=None)
@given(games)
def test_invariants_hold_at_every_decision(spec):
    n = spec["num_players"]
    options = {k: v for k, v in spec.items() if k not in ("num_players", "seed", "play_seed")}
    game = Game(n, rng=spec["seed"], first_player=spec["seed"] % n, **options)
    rng = np.random.default_rng(spec["play_seed"])
    low, high = observation_bounds(n, spec["max_turns_per_player"])
    decisions = 0
    round_index = 0
    shown = [up[:] for up in game.face_up]
    while not game.done:
        assert cards_in_play(game) == 110
        assert HAZARD not in game.piles[0] and HAZARD not in game.piles[1]
        assert set(game.removed) <= {HAZARD} and len(game.removed) <= 3
        if game.phase == "draw":
            assert game.draw_pile and game.held is None and not any(game.filled)
        if game.round == round_index:
            # No face-up card is ever turned face down (within a round; each round deals afresh).
            assert all(not was or now for s in range(n) for was, now in zip(shown[s], game.face_up[s]))
        else:
            round_index = game.round
        shown = [up[:] for up in game.face_up]
        legal = game.legal_actions()
        assert len(legal) >= 2 and legal == sorted(set(legal))  # singles are played by the engine
        if decisions % 17 == 0:
            obs = encode(game, decisions % n)
            assert (obs >= low).all() and (obs <= high).all()
        game.step(legal[rng.integers(len(legal))])
        decisions += 1
    assert decisions + len(game.auto_log) <= max_game_length(n, spec["max_turns_per_player"])
    assert len(game.round_scores) == 3
    for scores, capped, went_out in zip(game.round_scores, game.round_capped, game.round_went_out):
        assert all(-53 <= s <= 83 for s in scores)
        assert not (capped and went_out is not None)
    assert game.totals == [sum(r[s] for r in game.round_scores) for s in range(n)]
    assert abs(sum(game.rewards())) < 1e-9


@settings(max_examples=30, deadline=None)
@given(st.integers(3, 7), st.integers(0, 2**32 - 1), st.integers(0, 400))
def test_every_seat_sees_the_same_public_state_rotated(n, seed, steps):
    game = Game(n, rng=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        if game.done:
            break
        legal = game.legal_actions()
        game.step(legal[rng.integers(len(legal))])
    views = [encode(game, s) for s in range(n)]
    # The seat-independent middle (piles, counts, held card, phase, round, turns) is identical for every seat.
    for v in views[1:]:
        assert np.array_equal(v[826:973], views[0][826:973]) and np.array_equal(v[982:990], views[0][982:990])
    # Seat s's own layout row (relative seat 0) is seat 0's row for relative seat s.
    for s in range(n):
        assert np.array_equal(views[s][0:117], views[0][117 * s:117 * (s + 1)])

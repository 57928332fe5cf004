"""Gnoming action masks against the rules: the mask equals an independent reading of the contract's
§6.2 table over a thousand random games, is all zeros for whoever is not to act, and every
masked-in action steps while every masked-out action is refused (engine and raw_env)."""

import numpy as np
import pytest

from grinch_env.gnoming.cards import HAZARD, MULLIGAN
from grinch_env.gnoming.encoding import action_mask
from grinch_env.gnoming.env import raw_env
from grinch_env.gnoming.game import NUM_ACTIONS, Game
from grinch_env.grinch.game import IllegalActionError

OPTIONS = [
    {},
    {"discard_take": "free", "max_turns_per_player": 10},
    {"start_rotation": "fixed", "mulligan_lines": "single", "max_turns_per_player": 10},
]


def contract_legal(g: Game) -> set[int]:
    """Return the legal actions read off RULES_GNOMING.md §3 and §6.2, written apart from the engine."""
    me, tp = g.current, g.turn_player
    up = g.face_up[me]
    face_down = {p for p in range(9) if not up[p]}
    a, b = g.piles
    mulligans_up = sum(1 for p in range(9) if g.face_up[tp][p] and g.layouts[tp][p] == MULLIGAN)

    def pile_rule(card):  # §3.5
        if card == HAZARD:
            return {12}
        if a and b:
            return {12, 13}
        return {13} if a else {12}

    def placeable(card):  # §3.3
        if card != MULLIGAN or mulligans_up == 0:
            return set(range(9))
        if mulligans_up == 1:
            return {p for p in range(9) if g.face_up[tp][p] and g.layouts[tp][p] == MULLIGAN}
        return set()

    phase = g.phase
    if phase == "reveal":
        return face_down
    if phase == "draw":
        return {9} | {10 + i for i, pile in enumerate((a, b)) if pile and placeable(pile[-1])}
    if phase == "play":
        free = g.held_source == "draw" or g.discard_take == "free"
        return placeable(g.held) | (pile_rule(g.held) if free else set())
    if phase == "bounce":
        return {p for p in range(9) if not g.filled[p]} | pile_rule(g.held)
    if phase == "discard":
        return pile_rule(g.held)
    if phase == "hazard":
        return face_down | {14}
    return set()


def test_a_thousand_random_games_masks_follow_the_contract():
    rng = np.random.default_rng(2026)
    games = decisions = 0
    phases = set()
    for n in range(3, 8):
        for seed in range(200):
            game = Game(n, rng=seed, **OPTIONS[seed % 3])
            while not game.done:
                legal = game.legal_actions()
                assert set(legal) == contract_legal(game), (game.phase, legal)
                assert len(legal) >= 2  # a single legal action is played by the engine
                if decisions % 50 == 0:  # the mask is the legal list, and zeros for everyone else
                    actor = game.current
                    assert np.flatnonzero(action_mask(game, actor)).tolist() == legal
                    assert not any(action_mask(game, s).any() for s in range(n) if s != actor)
                    phases.add(game.phase.value)
                phases.add(game.phase)
                game.step(legal[rng.integers(len(legal))])
                decisions += 1
            assert all(not action_mask(game, s).any() for s in range(n))
            games += 1
    assert games == 1000 and decisions > 250_000
    assert phases == {"reveal", "draw", "play", "bounce", "discard", "hazard"}  # Phase members equal their strings


@pytest.mark.parametrize("n", [3, 4, 5, 6, 7])
def test_every_masked_in_action_steps_and_every_masked_out_action_is_refused(n):
    rng = np.random.default_rng(n)
    game = Game(n, rng=n, **OPTIONS[n % 3])
    states = 0
    before = None
    while not game.done and states < 200:
        mask = action_mask(game, game.current)
        if states % 10 == 0:
            before = game.state_dict()
        for a in range(NUM_ACTIONS):
            trial = game.clone()
            if mask[a]:
                trial.step(a)
                assert trial.version > game.version
            else:
                with pytest.raises(IllegalActionError, match=f"phase '{game.phase.value}'"):
                    trial.step(a)
                if states % 10 == 0:
                    assert trial.state_dict() == before  # a refused action changes nothing
        legal = np.flatnonzero(mask)
        game.step(int(legal[rng.integers(len(legal))]))
        states += 1
    assert states == 200


def test_raw_env_refuses_masked_out_actions_and_accepts_masked_in_ones():
    e = raw_env(num_players=4)
    e.reset(seed=3)
    rng = np.random.default_rng(3)
    checked = 0
    while e.agents and checked < 150:
        agent = e.agent_selection
        mask = e.observe(agent)["action_mask"]
        for a in np.flatnonzero(mask == 0):
            with pytest.raises(IllegalActionError, match=r"legal actions: \[" + ", ".join(str(x) for x in np.flatnonzero(mask)) + r"\]"):
                e.step(int(a))
        e.step(int(rng.choice(np.flatnonzero(mask))))
        checked += 1
    assert checked == 150

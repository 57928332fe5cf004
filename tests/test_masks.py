"""Action masks against the rules: random masked play never hits an illegal action, masks are
all zeros for whoever is not to act, and every masked-out action is refused by raw_env."""

import numpy as np
import pytest

import grinch_env
from grinch_env.grinch.encoding import action_mask
from grinch_env.grinch.env import raw_env
from grinch_env.grinch.game import NUM_ACTIONS, Game, IllegalActionError, decisions_per_game


def test_thousands_of_random_masked_games():
    rng = np.random.default_rng(2024)
    games = steps = 0
    for n in range(2, 7):
        for seed in range(300):
            game = Game(n, rng=seed)
            while not game.done:
                masks = [action_mask(game, seat) for seat in range(n)]
                actor = game.current
                for seat, mask in enumerate(masks):
                    if seat == actor:
                        assert mask.sum() >= 1
                        assert np.flatnonzero(mask).tolist() == game.legal_actions()
                    else:
                        assert not mask.any()
                legal = np.flatnonzero(masks[actor])
                game.step(int(legal[rng.integers(len(legal))]))  # raises if the mask allowed an illegal action
                steps += 1
            assert all(not action_mask(game, seat).any() for seat in range(n))  # nobody acts once it is over
            games += 1
    assert games == 1500 and steps == 300 * sum(decisions_per_game(n) for n in range(2, 7))


def env_at(game: Game) -> raw_env:
    """Return a raw_env whose game is a clone of ``game`` (the agent to act selected)."""
    e = raw_env(num_players=game.num_players)
    e.reset(seed=0)
    e._game = game.clone()
    e.agent_selection = e.possible_agents[game.current]
    return e


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_every_masked_out_action_is_refused_and_every_allowed_one_accepted(n):
    rng = np.random.default_rng(n)
    game = Game(n, rng=n)
    checked_states = 0
    while not game.done:
        if rng.random() < 0.35:  # a sample of the states along the game, all phases included
            agent = f"player_{game.current}"
            probe = env_at(game)
            mask = probe.observe(agent)["action_mask"]
            before = probe.game_state()
            for action in range(NUM_ACTIONS):
                e = env_at(game)
                if mask[action]:
                    e.step(action)
                    assert e.game_state() != before
                else:
                    with pytest.raises(IllegalActionError, match=f"phase '{game.phase}'"):
                        e.step(action)
                    assert e.game_state() == before and e.agent_selection == agent
            checked_states += 1
        legal = game.legal_actions()
        game.step(legal[rng.integers(len(legal))])
    assert checked_states >= 10


def test_masked_play_through_the_wrapped_env_never_terminates_early():
    rng = np.random.default_rng(7)
    for n in range(2, 7):
        e = grinch_env.env(num_players=n)
        for seed in range(20):
            e.reset(seed=seed)
            decisions = 0
            for agent in e.agent_iter():
                obs, reward, termination, truncation, _ = e.last()
                if termination or truncation:
                    assert not truncation  # an illegal action would truncate everyone
                    e.step(None)
                    continue
                others = [a for a in e.agents if a != agent]
                assert all(not e.observe(a)["action_mask"].any() for a in others)
                legal = np.flatnonzero(obs["action_mask"])
                e.step(int(legal[rng.integers(len(legal))]))
                decisions += 1
            assert decisions == decisions_per_game(n)

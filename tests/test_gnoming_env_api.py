"""Gnoming env: PettingZoo's own checkers at every size, options, spaces, illegal actions, rendering, replay."""

import json
import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

import grinch_env.gnoming as gn
from grinch_env.gnoming.encoding import OBS_SIZE, encode
from grinch_env.gnoming.game import DRAW, MAX_GAME_LENGTH, NUM_ACTIONS
from grinch_env.gnoming.replay import log_from_json, log_to_json, play_log
from grinch_env.grinch.game import IllegalActionError


def play_random(e, seed: int) -> dict:
    """Play ``e`` (reset with ``seed``) to the end with random masked actions; return each agent's final reward."""
    e.reset(seed=seed)
    rng = np.random.default_rng(seed)
    final = {}
    for agent in e.agent_iter():
        obs, reward, term, trunc, info = e.last()
        if term or trunc:
            final[agent] = reward
        e.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return final


@pytest.mark.parametrize("n", [3, 4, 5, 6, 7])
def test_pettingzoo_api_test(n):
    api_test(gn.env(num_players=n), num_cycles=1000)
    api_test(gn.raw_env(num_players=n), num_cycles=300)


@pytest.mark.parametrize("n", [3, 4, 5, 6, 7])
def test_pettingzoo_seed_test(n):
    seed_test(lambda: gn.env(num_players=n), num_cycles=300)


def test_metadata_spaces_and_agents():
    e = gn.env(num_players=5)
    assert e.metadata["name"] == "gnoming_a_round_v0" and e.metadata["render_modes"] == ["ansi", "human", "rgb_array"]
    assert e.metadata["is_parallelizable"] is False
    assert e.possible_agents == [f"player_{i}" for i in range(5)]
    space = e.observation_space("player_2")
    assert space["observation"].shape == (OBS_SIZE,) == (1046,) and space["observation"].dtype == np.float32
    assert space["action_mask"].shape == (15,) and space["action_mask"].dtype == np.int8
    assert e.action_space("player_0").n == NUM_ACTIONS == 15
    assert space["observation"].low[0] == 0 and space["observation"].high[0] == 1
    assert space["observation"].low[1018] == pytest.approx(-1.59) and space["observation"].high[1018] == pytest.approx(2.49)
    assert space["observation"].low[1025] == pytest.approx(-1.06) and space["observation"].high[1045] == pytest.approx(1.66)
    assert space["observation"].high[989] == pytest.approx((150 + 4) / 150)
    assert MAX_GAME_LENGTH == 10_410


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"num_players": 2}, r"num_players must be an int in 3\.\.7"),
        ({"num_players": "4"}, r"num_players must be an int in 3\.\.7, got '4'"),
        ({"first_player": 3, "num_players": 3}, r"first_player must be a seat in 0\.\.2 for 3 players"),
        ({"start_rotation": "ccw"}, r"start_rotation must be one of \('rotate', 'fixed'\)"),
        ({"discard_take": None}, r"discard_take must be one of \('must_place', 'free'\)"),
        ({"mulligan_lines": "all"}, r"mulligan_lines must be one of \('independent', 'single'\)"),
        ({"max_turns_per_player": 5}, r"max_turns_per_player must be an int >= 10"),
        ({"reward_mode": "win_loss"}, r"reward_mode must be one of \('win', 'margin'\)"),
        ({"render_mode": "rgb"}, r"render_mode must be None or one of \('ansi', 'human', 'rgb_array'\)"),
        ({"render_seat": -1}, r"render_seat must be None \(the spectator, who sees every card\) or a seat in 0..3, got -1"),
    ],
)
def test_every_option_is_validated(kwargs, message):
    with pytest.raises(ValueError, match=message):
        gn.raw_env(**kwargs)
    with pytest.raises(ValueError, match=message):
        gn.env(**kwargs)


def test_reset_seed_and_game_seed():
    e = gn.raw_env(num_players=4)
    with pytest.raises(ValueError, match=r"options\['game_seed'\] must be an int >= 0"):
        e.reset(options={"game_seed": -3})
    e.reset(seed=11)
    first = e.game_state()
    e.reset(seed=11)
    assert e.game_state() == first
    e.reset(options={"game_seed": e.game_seed})
    assert e.game_state() == first
    e.reset()
    assert e.game_state() != first


def test_observations_masks_and_rewards_through_a_whole_game():
    e = gn.raw_env(num_players=4, reward_mode="margin")
    e.reset(seed=5)
    rng = np.random.default_rng(5)
    final = {}
    for agent in e.agent_iter():
        obs, reward, term, trunc, info = e.last()
        final[agent] = reward  # 0 until the game ends, then each agent's last() gives its final reward
        if term or trunc:
            e.step(None)
            continue
        seat = e.agent_name_mapping[agent]
        assert np.array_equal(obs["observation"], encode(e.game, seat))
        assert np.flatnonzero(obs["action_mask"]).tolist() == e.game.legal_actions() == e.legal_actions()
        for other in e.possible_agents:
            if other != agent:
                assert not e.observe(other)["action_mask"].any() and e.legal_actions(other) == []
        e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    totals = e.game.totals
    n = 4
    expected = [((sum(totals) - t) / (n - 1) - t) / 100 for t in totals]
    assert [final[a] for a in e.possible_agents] == pytest.approx(expected)
    assert json.loads(json.dumps(e.game_state())) == e.game_state()
    state = e.game_state()
    assert set(state) >= {
        "num_players", "round", "first_player", "phase", "turn_player", "current_player", "layouts", "face_up",
        "discard_piles", "draw_pile", "draw_pile_reshuffled", "removed", "held", "held_source", "filled",
        "went_out", "final_turns_left", "turns_this_round", "round_scores", "totals",
    }
    assert state["phase"] == "done" and state["current_player"] is None and len(state["round_scores"]) == 3


def test_win_rewards_at_the_end_are_the_games():
    e = gn.env(num_players=3)
    final = play_random(e, 8)
    rewards = e.unwrapped.game.rewards("win")
    assert [final[a] for a in e.possible_agents] == pytest.approx(rewards)
    assert sum(rewards) == pytest.approx(0.0) and max(rewards) > 0


def test_raw_env_raises_illegal_action_error_naming_phase_action_and_legal_actions():
    e = gn.raw_env(num_players=3)
    e.reset(seed=1)
    with pytest.raises(IllegalActionError, match=r"illegal action 9 \(DRAW\) for seat 0 in phase 'reveal'; legal actions: \[0, 1, 2, 3, 4, 5, 6, 7, 8\]"):
        e.step(DRAW)


def test_env_ends_the_game_with_minus_one_for_an_illegal_action():
    e = gn.env(num_players=3)
    e.reset(seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e.step(DRAW)
    assert e.rewards == {"player_0": -1.0, "player_1": 0, "player_2": 0}
    assert all(e.terminations.values()) and all(e.truncations.values())
    for _agent in e.agent_iter():
        e.step(None)
    assert e.agents == []


@pytest.mark.parametrize("bad", [15, 61, 62, -1, 3.5])
def test_env_asserts_actions_outside_the_space(bad):
    e = gn.env(num_players=3)
    e.reset(seed=1)
    with pytest.raises(AssertionError) as err:
        e.step(bad)
    assert str(err.value) == (f"action is not in action space: got {bad!r} ({type(bad).__name__}) for player_0; "
                              "allowed: an int in 0..14 (Discrete(15))")


def test_raw_env_step_before_reset_says_to_reset():
    with pytest.raises(RuntimeError, match=r"raw_env.step\(\) before reset\(\): call env.reset\(\)"):
        gn.raw_env().step(0)
    with pytest.raises(AttributeError, match=r"raw_env.agent_selection does not exist before reset\(\)"):
        _ = gn.raw_env().agent_selection


def test_env_refuses_use_before_reset():
    e = gn.env()
    with pytest.raises(AttributeError, match="agents cannot be accessed before reset"):
        _ = e.agents
    with pytest.raises(AssertionError):
        e.step(0)


def test_render_modes(capsys):
    e = gn.env(num_players=3, render_mode="ansi")
    e.reset(seed=2)
    text = e.render()
    assert text.startswith("Round 1/3  phase reveal") and text.count("??") == 27
    h = gn.raw_env(num_players=3, render_mode="rgb_array")
    h.reset(seed=2)
    h.step(0)
    frame = h.render()
    assert frame.shape == (880, 1408, 3) and frame.dtype == np.uint8
    assert capsys.readouterr().out == ""  # "human" is a pygame window now (tests/test_render.py), "ansi" the text


@pytest.mark.parametrize("n,seed,options", [(3, 4, {}), (5, 9, {"discard_take": "free", "start_rotation": "fixed"}), (7, 2, {"mulligan_lines": "single"})])
def test_replay_from_the_action_log_reproduces_game_state(n, seed, options):
    e = gn.env(num_players=n, **options)
    play_random(e, seed)
    raw = e.unwrapped
    again = play_log(seed, raw.action_log, num_players=n, **options)
    assert again.game_state() == raw.game_state()
    again = play_log(None, raw.action_log, game_seed=raw.game_seed, num_players=n, **options)
    assert again.game_state() == raw.game_state()
    text = log_to_json(raw.action_log, seed, num_players=n, **options)
    seed2, log2, kwargs2 = log_from_json(text)
    assert play_log(seed2, log2, **kwargs2).game_state() == raw.game_state()
    # Part of a log replays to the same state as the game had then.
    half = len(raw.action_log) // 2
    part = gn.raw_env(num_players=n, **options)
    part.reset(seed=seed)
    for _agent, action in raw.action_log[:half]:
        part.step(action)
    assert play_log(seed, raw.action_log[:half], num_players=n, **options).game_state() == part.game_state()


def test_replay_names_a_bad_entry():
    e = gn.raw_env(num_players=3)
    e.reset(seed=1)
    with pytest.raises(ValueError, match=r"log entry 0 \(player_1, 0\): player_0 is to act, not player_1"):
        play_log(1, [("player_1", 0)], num_players=3)
    with pytest.raises(ValueError, match=r"log entry 1 \(player_0, 0\): illegal action 0"):
        play_log(1, [("player_0", 0), ("player_0", 0)], num_players=3)

"""The PettingZoo environment: PettingZoo's own checkers, options, game_state(), rendering,
the wrapper's conventions (compared with PettingZoo's classic wrapper stack) and the encoding."""

import json
import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger

import grinch_env
import grinch_env.grinch.encoding
from grinch_env.aec import ClassicWrapper
from grinch_env.grinch import encoding as enc
from grinch_env.grinch.cards import NUM_CARDS
from grinch_env.grinch.encoding import OBS_SIZE, Encoder, encode
from grinch_env.grinch.env import raw_env
from grinch_env.grinch.game import PHASE_DRAW, Game, IllegalActionError, terminal_rewards
from grinch_env.grinch.scoring import bonus_points, max_bonus, row_scores


def random_action(obs: dict, rng: np.random.Generator) -> int:
    legal = np.flatnonzero(obs["action_mask"])
    return int(legal[rng.integers(len(legal))])


# ---------------------------------------------------- PettingZoo's checkers
@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_pettingzoo_api_and_seed_tests(n):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(grinch_env.env(num_players=n), num_cycles=200)
        api_test(grinch_env.raw_env(num_players=n), num_cycles=50)
    seed_test(lambda: grinch_env.env(num_players=n), num_cycles=200)


def test_spaces_agents_and_metadata():
    e = grinch_env.env(num_players=5)
    assert e.possible_agents == [f"player_{i}" for i in range(5)]
    assert e.metadata["name"] == "grinch_grow_your_heart_v0" and set(e.metadata["render_modes"]) == {"ansi", "human", "rgb_array"}
    assert str(e) == "grinch_grow_your_heart_v0"
    assert isinstance(e.unwrapped, raw_env)
    for agent in e.possible_agents:
        assert e.action_space(agent).n == 62
        space = e.observation_space(agent)
        assert space["observation"].shape == (OBS_SIZE,) == (1337,) and space["observation"].dtype == np.float32
        assert space["action_mask"].shape == (62,) and space["action_mask"].dtype == np.int8
    e.reset(seed=1)
    assert e.agents == e.possible_agents and e.num_agents == 5
    obs, reward, termination, truncation, info = e.last()
    assert e.observation_space(e.agent_selection).contains(obs)
    assert (reward, termination, truncation, info) == (0.0, False, False, {})
    assert e.agent_selection == "player_1"  # the first Who: the left neighbour of the first Grinch, seat 0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"num_players": 7}, "num_players must be an int in 2..6"),
        ({"num_players": 1}, "num_players must be an int in 2..6"),
        ({"bonus_layout": "deluxe"}, "bonus_layout must be one of"),
        ({"bonus_layout": {3: (5, 9, 1)}}, "suit must be 0..3"),
        ({"first_grinch": 4}, "first_grinch must be a seat in 0..3 for 4 players"),
        ({"num_rounds": 9}, "num_rounds must be an int in 1..6"),
        ({"reward_mode": "score"}, r"reward_mode must be one of \('win', 'margin'\)"),
        ({"render_mode": "rgb"}, r"render_mode must be None or one of \('ansi', 'human', 'rgb_array'\)"),
        ({"render_seat": 4}, r"render_seat must be None \(the spectator, who sees every card\) or a seat in 0..3, got 4"),
    ],
)
def test_bad_options_raise_value_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        grinch_env.env(**kwargs)
    with pytest.raises(ValueError, match=message):
        grinch_env.raw_env(**kwargs)


def test_options_change_the_game():
    e = grinch_env.raw_env(num_players=3, first_grinch=2, num_rounds=2, bonus_layout="none")
    e.reset(seed=0)
    state = e.game_state()
    assert (state["num_rounds"], state["grinch"], state["current_player"]) == (2, 2, 0)
    assert e.game.layout == (None,) * NUM_CARDS


# ------------------------------------------------------------ game_state
def test_game_state_snapshot_keys_values_and_json():
    e = grinch_env.raw_env(num_players=4)
    e.reset(seed=3)
    state = e.game_state()
    assert set(state) == {
        "num_players", "num_rounds", "round", "turn", "phase", "grinch", "current_player", "hands",
        "discard_piles", "draw_pile_size", "score_sheet", "totals", "known_in_hand",
    }
    assert json.loads(json.dumps(state)) == state
    assert (state["num_players"], state["num_rounds"], state["round"], state["turn"], state["phase"]) == (4, 4, 0, 1, "discard")
    assert (state["grinch"], state["current_player"]) == (0, 1)
    assert [len(h) for h in state["hands"]] == [2, 4, 2, 2] and state["hands"][1] == sorted(state["hands"][1])
    assert state["discard_piles"] == [[], [], [], []] and state["draw_pile_size"] == 48 - 8 - 2
    assert state["score_sheet"] == [[None] * 7] * 4 and state["totals"] == [0] * 4 and state["known_in_hand"] == [[]] * 4
    rng = np.random.default_rng(0)
    phases = set()
    for _agent in e.agent_iter():
        obs, _, termination, truncation, _ = e.last()
        s = e.game_state()
        phases.add(s["phase"])
        if s["phase"] == "score":
            assert s["turn"] is None
        e.step(None if termination or truncation else random_action(obs, rng))
    final = e.game_state()
    assert phases == {"discard", "draw", "score", "done"}
    assert (final["phase"], final["turn"], final["current_player"], final["round"]) == ("done", None, None, 3)
    assert final["totals"] == [sum(v for v in row if v is not None) for row in final["score_sheet"]]
    assert all(sum(v is not None for v in row) == 4 for row in final["score_sheet"])
    assert json.loads(json.dumps(final)) == final


# --------------------------------------------------------------- rewards
@pytest.mark.parametrize("mode", ["win", "margin"])
def test_rewards_zero_until_the_end_then_terminal_rewards(mode):
    e = grinch_env.env(num_players=3, reward_mode=mode)
    e.reset(seed=11)
    rng = np.random.default_rng(11)
    final: dict[str, float] = {}
    for agent in e.agent_iter():
        obs, reward, termination, truncation, _ = e.last()
        if termination or truncation:
            assert termination and not truncation
            final[agent] = reward
            e.step(None)
        else:
            assert reward == 0.0
            e.step(random_action(obs, rng))
    expected = terminal_rewards(e.unwrapped.game.totals, mode)
    assert [final[a] for a in e.possible_agents] == pytest.approx(expected)
    assert sum(final.values()) == pytest.approx(0.0, abs=1e-12)
    assert e.agents == []


def test_seeding_reproduces_games_and_game_seed_restarts_one():
    a, b = grinch_env.raw_env(), grinch_env.raw_env()
    a.reset(seed=5)
    b.reset(seed=5)
    assert a.game_state() == b.game_state() and a.game_seed == b.game_seed
    a.reset()
    b.reset()  # an unseeded reset continues the seeded stream
    assert a.game_state() == b.game_state()
    first = grinch_env.raw_env()
    first.reset(seed=5)
    assert first.game_state() != a.game_state()
    c = grinch_env.raw_env()
    c.reset(options={"game_seed": a.game_seed})
    assert c.game_state() == a.game_state()
    with pytest.raises(ValueError, match=r"options\['game_seed'\] must be an int >= 0"):
        c.reset(options={"game_seed": -3})


# ------------------------------------------------------------- rendering
def test_render_modes(capsys):
    e = grinch_env.env(num_players=2, render_mode="ansi")
    e.reset(seed=0)
    text = e.render()
    assert text.startswith("Round 1/6  turn 1  phase discard  Grinch: seat 0  to act: 1")
    assert text.count("\n") == 2 and ">seat 1 Who" in text
    seat_text = grinch_env.env(num_players=2, render_mode="ansi", render_seat=0)
    seat_text.reset(seed=0)
    assert seat_text.render().count("??") == 4  # seat 1's four cards (two dealt, two drawn), hidden from seat 0
    picture = grinch_env.env(num_players=2, render_mode="rgb_array")
    picture.reset(seed=0)
    frame = picture.render()
    assert frame.shape == (400, 1408, 3) and frame.dtype == np.uint8
    # "human" shows the picture in a pygame window (tests/test_render.py) and prints nothing.
    quiet = grinch_env.env(num_players=2)
    quiet.reset(seed=0)
    with pytest.warns(UserWarning, match="without specifying any render mode"):
        assert quiet.render() is None


# ------------------------------------------- raw_env and wrapper conventions
def test_raw_env_illegal_action_raises_naming_phase_action_and_legal():
    e = grinch_env.raw_env(num_players=2)
    e.reset(seed=0)
    legal = e.legal_actions()
    with pytest.raises(IllegalActionError, match=rf"illegal action 48 \(draw from the draw pile\) for seat 1 in phase 'discard'; legal actions: \[{', '.join(map(str, legal))}\]"):
        e.step(48)
    assert e.legal_actions("player_0") == []
    e.step(legal[0])  # nothing changed by the refused action
    assert e.agent_selection == "player_0" and e.game.phase == PHASE_DRAW


def test_wrapper_refuses_use_before_reset():
    e = grinch_env.env()
    for call in (lambda: e.step(0), lambda: e.observe("player_0"), lambda: e.render(), lambda: e.agent_iter(), lambda: e.state()):
        with pytest.raises(AssertionError, match="reset"):
            call()
    for name in ("agents", "rewards", "terminations", "truncations", "infos", "agent_selection", "num_agents"):
        with pytest.raises(AttributeError, match=f"{name} cannot be accessed before reset"):
            getattr(e, name)
    with pytest.raises(AttributeError, match="cannot be accessed before reset"):
        e.last()
    with pytest.raises(ValueError, match="ClassicWrapper wraps an AECEnv"):
        ClassicWrapper(object())


def test_raw_env_used_before_reset_says_to_call_reset():
    e = grinch_env.raw_env()
    with pytest.raises(RuntimeError) as err:
        e.step(0)
    assert str(err.value) == "raw_env.step() before reset(): call env.reset() (optionally with a seed) first"
    for read in (lambda: e.last(), lambda: e.agent_selection, lambda: e.rewards):
        with pytest.raises(AttributeError, match=r"^raw_env\.(agent_selection|rewards) does not exist before reset\(\): call env\.reset\(\)"):
            read()
    with pytest.raises(AttributeError, match="^'raw_env' object has no attribute 'nothing'$"):
        e.nothing  # noqa: B018 - other missing attributes keep Python's message
    e.reset(seed=0)
    e.step(e.legal_actions()[0])  # and after reset all is normal


def test_wrapper_asserts_actions_in_the_space_naming_the_value_and_the_range():
    e = grinch_env.env()
    e.reset(seed=0)
    for bad, shown in ((62, "62 (int)"), (-1, "-1 (int)"), (3.0, "3.0 (float)"), ("a", "'a' (str)"), (np.int64(70), "np.int64(70) (int64)")):
        with pytest.raises(AssertionError) as err:
            e.step(bad)
        assert str(err.value) == f"action is not in action space: got {shown} for player_1; allowed: an int in 0..61 (Discrete(62))"
    with pytest.raises(AssertionError) as err:
        e.step(None)
    assert str(err.value) == "action is not in action space: None is only for a terminated agent; player_1 is to act: give an int in 0..61"
    obs, *_ = e.last()
    e.step(np.int64(np.flatnonzero(obs["action_mask"])[0]))  # numpy integers are fine
    obs, *_ = e.last()
    e.step(int(np.flatnonzero(obs["action_mask"] == 0)[0]))  # an illegal move ends the game: every agent is now terminated
    assert all(e.terminations.values())
    with pytest.raises(AssertionError) as err:
        e.step("x")
    assert str(err.value) == f"action is not in action space: {e.agent_selection} is terminated, so its action must be None, got 'x'"


def test_wrapper_checks_the_agent_iter_loop():
    e = grinch_env.env()
    e.reset(seed=0)
    it = iter(e.agent_iter())
    assert next(it) == "player_1"
    with pytest.raises(AssertionError, match="need to call step"):
        next(it)


def pettingzoo_stack(**kwargs):
    """PettingZoo's own classic wrappers around our raw env: the behaviour ClassicWrapper must match."""
    e = raw_env(**kwargs)
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=-1)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    return wrappers.OrderEnforcingWrapper(e)


def run_trace(e, seed: int, illegal_at: int | None = None) -> list:
    """Return everything observable along a game; at step ``illegal_at`` play a masked-out action."""
    EnvLogger.flush()
    e.reset(seed=seed)
    rng = np.random.default_rng(seed)
    trace = []
    for i, agent in enumerate(e.agent_iter()):
        obs, reward, termination, truncation, info = e.last()
        trace.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes(), reward, termination, truncation, dict(info)))
        if termination or truncation:
            action = None
        elif i == illegal_at:
            action = int(np.flatnonzero(obs["action_mask"] == 0)[0])
        else:
            action = random_action(obs, rng)
        e.step(action)
    e.step(None)  # one step too many: a warning, as in PettingZoo
    trace.append(("messages", tuple(m for m in EnvLogger.mqueue)))
    return trace


@pytest.mark.parametrize(("n", "illegal_at"), [(2, None), (4, None), (6, None), (3, 0), (4, 17), (5, 120)])
def test_wrapper_matches_pettingzoo_classic_stack(n, illegal_at):
    ours = run_trace(grinch_env.env(num_players=n), seed=n, illegal_at=illegal_at)
    reference = run_trace(pettingzoo_stack(num_players=n), seed=n, illegal_at=illegal_at)
    assert ours == reference
    if illegal_at is not None:
        assert len(ours) == illegal_at + 1 + n + 1  # the illegal step ends the game: every agent then steps None
        offender = ours[illegal_at][0]
        finals = {agent: reward for agent, _, _, reward, term, trunc, _ in ours[illegal_at + 1:-1]}
        assert finals == {a: (-1.0 if a == offender else 0) for a in finals} and len(finals) == n
        assert all(term and trunc for *_, term, trunc, _ in ours[illegal_at + 1:-1])
        assert any("Illegal move made" in m for m in ours[-1][1])
    assert any("step() called after all agents are terminated" in m for m in ours[-1][1])


# -------------------------------------------------------------- encoding
def reference_encode(game: Game, seat: int) -> np.ndarray:
    """The observation table of grinch_env.grinch.encoding, written out directly, one feature at a time."""
    obs = np.zeros(OBS_SIZE, dtype=np.float32)
    n = game.num_players
    bonus_scale = float(max(1, max_bonus(game.layout)))
    points_scale = 30 + bonus_scale
    total_scale = 6 * points_scale
    for c in game.hands[seat]:
        obs[c] = 1
    for j in range(n):
        p = (seat + j) % n
        base = enc.SEAT_BLOCK + enc.SEAT_STRIDE * j
        pile = game.piles[p]
        for c in pile:
            obs[base + c] = 1
        if len(pile) >= 1:
            obs[base + enc.PILE_TOP + pile[-1]] = 1
        if len(pile) >= 2:
            obs[base + enc.PILE_SECOND + pile[-2]] = 1
        for c in game.known[p]:
            obs[base + enc.KNOWN_IN_HAND + c] = 1
        obs[enc.AT_TABLE + j] = 1
        obs[enc.HAND_SIZE + j] = len(game.hands[p]) / 6
        for k in range(7):
            if game.score_sheet[p][k] is not None:
                obs[enc.ROW_USED + 7 * j + k] = 1
                obs[enc.ROW_POINTS + 7 * j + k] = game.score_sheet[p][k] / points_scale
        obs[enc.TOTALS + j] = game.totals[p] / total_scale
    obs[enc.GRINCH_SEAT + (game.grinch - seat) % n] = 1
    r = min(game.round, game.num_rounds - 1)
    obs[enc.ROUND + r] = 1
    obs[enc.ROUNDS_LEFT + game.num_rounds - 1 - r] = 1
    if game.phase != "done":
        if game.turn is not None:
            obs[enc.TURN + game.turn - 1] = 1
        obs[enc.PHASE + ["discard", "draw", "score"].index(game.phase)] = 1
        if game.phase == "draw" and game.draws_made == 1:
            obs[enc.FIRST_DRAW_MADE] = 1
        if game.current == seat:
            obs[enc.TO_ACT] = 1
    obs[enc.DRAW_PILE_SIZE] = len(game.draw_pile) / 48
    rows = row_scores(game.hands[seat])
    for k in range(7):
        obs[enc.OWN_ROW_VALUES + k] = rows[k] / 30
    obs[enc.OWN_BONUS] = bonus_points(game.hands[seat], game.layout) / bonus_scale
    return obs


@pytest.mark.parametrize("layout", ["standard", "none", {5: (7, 0, 2), 30: (3, "Noise", 1)}])
def test_encode_equals_the_reference_on_many_states(layout):
    checked = 0
    for n in range(2, 7):
        for seed in range(4):
            game = Game(n, rng=seed, bonus_layout=layout)
            encoders = [Encoder() for _ in range(n)]
            rng = np.random.default_rng(seed)
            out = np.full(OBS_SIZE, 7.0, dtype=np.float32)
            while True:
                for seat in range(n):
                    expected = reference_encode(game, seat)
                    assert np.array_equal(encode(game, seat), expected)
                    assert np.array_equal(encoders[seat](game, seat), expected)
                    assert encode(game, seat, out=out) is out and np.array_equal(out, expected)
                    assert expected.min() >= 0.0 and expected.max() <= 1.0
                    checked += 1
                if game.done:
                    break
                legal = game.legal_actions()
                game.step(legal[rng.integers(len(legal))])
    assert checked > 10_000


def test_env_observation_is_a_fresh_array_each_time():
    e = grinch_env.env()
    e.reset(seed=0)
    a = e.observe("player_1")
    b = e.observe("player_1")
    assert a["observation"] is not b["observation"] and np.array_equal(a["observation"], b["observation"])
    a["observation"][:] = 0
    assert e.observe("player_1")["observation"].sum() > 0


def test_encoder_called_at_random_moments_equals_the_reference():
    # The env asks only the actor's observation, so an Encoder's templates are brought up to date
    # across several scores and rounds at once; here the gaps are random.
    rng = np.random.default_rng(0)
    checked = 0
    for n in range(2, 7):
        for seed in range(6):
            game = Game(n, rng=seed, first_grinch=seed % n, num_rounds=None if seed % 2 else 2)
            encoder = Encoder()
            while True:
                for seat in range(n):
                    if rng.random() < 0.15 or game.done:
                        assert np.array_equal(encoder(game, seat), reference_encode(game, seat))
                        checked += 1
                if game.done:
                    break
                legal = game.legal_actions()
                game.step(legal[rng.integers(len(legal))])
    assert checked > 1500


def test_pile_log_is_read_only_and_piles_replaced_makes_the_encoder_rebuild():
    game = Game(2, rng=0, bonus_layout="none")  # seat 1 is the first Who: it discards first
    log = game.pile_log
    assert game.current == 1 and log == []
    card = game.hands[1][0]
    game.step(card)
    assert game.pile_log is log and log == [1] and game.piles[1] == [card]
    with pytest.raises(AttributeError):
        game.pile_log = []
    encoder = Encoder()
    assert np.array_equal(encoder(game, 0), reference_encode(game, 0))
    # An edit the log cannot see: the encoder keeps its pile features until the game says the piles were replaced.
    game.piles[1].append(game.hands[0].pop())
    assert not np.array_equal(encoder(game, 0), reference_encode(game, 0))
    game.piles_replaced()
    assert game.pile_log == [] and game.pile_log is not log
    assert np.array_equal(encoder(game, 0), reference_encode(game, 0))


def test_action_mask_forms():
    game = Game(3, rng=0)
    mask = grinch_env.grinch.encoding.action_mask(game, game.current)
    assert mask.dtype == np.int8 and mask.shape == (62,) and mask.flags.writeable
    assert np.flatnonzero(mask).tolist() == game.legal_actions()
    out = np.ones(62, dtype=np.int8)
    assert grinch_env.grinch.encoding.action_mask(game, (game.current + 1) % 3, out=out) is out and not out.any()
    assert np.array_equal(grinch_env.grinch.encoding.action_mask(game, game.current, out=out), mask)

"""Diagnosis tests of the learner on the Grinch: tokens v2 read the score pads, v3 give an action's row values in open rows only, and the pad credit pays exactly the game's margin."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from grinch_env.games import get_game
from grinch_env.gnoming import tokens as gnoming_tokens
from grinch_env.grinch import tokens as rt
from grinch_env.grinch.game import Game
from training.learner.config import load_config
from training.learner.net import TokenNet
from training.learner.rollout import collect, pad_rewards, seat_gae_dense


def _pads(totals: list[int]) -> Game:
    """A 3-player game at its first decision whose score pads hold ``totals`` (each in one row: Match, Run, 1st suit)."""
    game = Game(3, rng=0)
    for seat, (row, points) in enumerate(zip((5, 6, 0), totals)):
        game.score_sheet[seat][row] = points
        game.totals[seat] = points
    return game


def test_tokens_v2_read_totals_lead_and_banked_margin_in_points_over_100():
    assert rt.TOKENS_VERSION == 3 and gnoming_tokens.TOKENS_VERSION == 2
    game = _pads([40, 25, 61])
    d = rt.NUM_IDS
    st = rt.state_tokens(game, 0)
    seats = st[rt.S0:rt.S0 + 3]
    np.testing.assert_allclose(seats[:, d + 16], [0.40, 0.25, 0.61], atol=1e-6)  # totals / 100 (v1: / 450)
    np.testing.assert_allclose(seats[:, d + 17] * 100, [-21, -36, 21], atol=1e-4)  # lead over the best other seat
    assert st[rt.G0, d + rt.G_MARGIN] == pytest.approx((40 - (25 + 61) / 2) / 100)  # -0.03
    assert not st[rt.S0 + 3:rt.S0 + 6, d:].any()  # seats 3..5 are not at a table of 3
    # seat 1 sees itself first, then seat 2, then seat 0
    st1 = rt.state_tokens(game, 1)
    np.testing.assert_allclose(st1[rt.S0:rt.S0 + 3, d + 16], [0.25, 0.61, 0.40], atol=1e-6)
    np.testing.assert_allclose(st1[rt.S0:rt.S0 + 3, d + 17] * 100, [-36, 21, -21], atol=1e-4)
    assert st1[rt.G0, d + rt.G_MARGIN] == pytest.approx((25 - (61 + 40) / 2) / 100)  # -0.255
    # the rows: used flags and points / 75 (unchanged from v1)
    assert seats[0, d + 2 + 5] == 1 and seats[0, d + 9 + 5] == pytest.approx(40 / 75)
    # banked_margin reads the same number from float16 observations (how the rollout stores them)
    from grinch_env.grinch import encoding as enc

    obs = np.stack([enc.encode(game, s) for s in range(3)]).astype(np.float16)
    np.testing.assert_allclose(rt.banked_margin(obs), [-0.03, -0.255, (61 - 32.5) / 100], atol=1e-6)


def test_tokens_v3_give_a_discards_row_values_in_the_rows_still_open():
    from grinch_env.grinch import encoding as enc

    game = Game(3, rng=0)  # seat 1 (a Who) discards first, from W3 (card 5), O5 (33), P3 (41), P6 (47)
    game.score_sheet[1][4] = 12  # its Rainbow row is used
    game.totals[1] = 12
    assert game.current == 1 and sorted(game.hands[1]) == [5, 33, 41, 47] and game.legal_actions() == [5, 33, 41, 47]
    d = rt.NUM_IDS
    at = rt.encode_batch(enc.encode(game, 1)[None])[1][0]
    points = np.rint(at[:, d:d + 7] * rt.MAX_ROW_VALUE)
    # discarding P3 keeps W3 O5 P6: Wreaths 3, Noise 0, Ornaments 5, Presents 6, Rainbow (3 + 5 + 6 = 14) used -> 0, no Match, no Run
    np.testing.assert_array_equal(points[41], [3, 0, 5, 6, 0, 0, 0])
    np.testing.assert_array_equal(points[5], [0, 0, 5, 9, 0, 0, 0])  # keeps O5 P3 P6 (its Rainbow would be 11)
    assert not points[[5, 33, 41, 47], 4].any()
    # the draw actions' afterstates read the same open rows; a score action is unchanged (the observation's own row values)
    assert not points[rt.SCORE_BASE - 7:rt.SCORE_BASE, 4].any()
    # the same hand with every row open: the Rainbow comes back
    fresh = Game(3, rng=0)
    points_open = np.rint(rt.encode_batch(enc.encode(fresh, 1)[None])[1][0][:, d:d + 7] * rt.MAX_ROW_VALUE)
    np.testing.assert_array_equal(points_open[41], [3, 0, 5, 6, 14, 0, 0])
    np.testing.assert_array_equal(np.delete(points_open, 4, axis=1), np.delete(points, 4, axis=1))


def test_pad_rewards_by_hand_sum_to_the_game_margin():
    # Slot 0: seats 0,1,0,1,0, the game ends with t=4 (seat 0 +0.3, seat 1 -0.3), then one step of a finished slot.
    # Slot 1: a game still running at the end (no reward: every decision gets 0).
    seats = np.array([[0, 0], [1, 1], [0, 0], [1, 1], [0, 0], [1, 1]])
    dones = np.zeros((6, 2), bool)
    dones[4, 0] = True
    rewards = np.zeros((6, 2, 2), np.float32)
    rewards[4, 0] = [0.3, -0.3]
    phi = np.array([[0.0, 0.0], [0.0, 0.0], [0.10, 0.5], [-0.10, 0.5], [0.25, 0.5], [9.0, 9.0]], np.float32)
    step = pad_rewards(phi, seats, dones, rewards)
    # seat 0: 0.10 - 0, 0.25 - 0.10, 0.3 - 0.25; seat 1: -0.10 - 0, -0.3 - (-0.10)
    np.testing.assert_allclose(step[:, 0], [0.10, -0.10, 0.15, -0.20, 0.05, 0.0], atol=1e-6)
    np.testing.assert_array_equal(step[:, 1], np.zeros(6))
    assert step[[0, 2, 4], 0].sum() == pytest.approx(0.3) and step[[1, 3], 0].sum() == pytest.approx(-0.3)
    # returns (values 0, gamma = lambda = 1): the margin still to come = the game's margin less the banked one
    ret = seat_gae_dense(np.zeros((6, 2), np.float32), seats, dones, step, 1.0, 1.0)
    np.testing.assert_allclose(ret[:5, 0], [0.3, -0.3, 0.2, -0.2, 0.05], atol=1e-6)
    # GAE by hand, gamma 1, lambda 0.5, values v = [0.1, -0.2, 0.05, -0.1, 0.0]:
    # seat 0: d4 = 0.05, A4 = 0.05; d2 = 0.15 + 0 - 0.05 = 0.10, A2 = 0.125; d0 = 0.10 + 0.05 - 0.1 = 0.05, A0 = 0.1125
    # seat 1: d3 = -0.2 + 0.1 = -0.1, A3 = -0.1; d1 = -0.10 - 0.1 + 0.2 = 0.0, A1 = -0.05
    values = np.zeros((6, 2), np.float32)
    values[:5, 0] = [0.1, -0.2, 0.05, -0.1, 0.0]
    adv = seat_gae_dense(values, seats, dones, step, 1.0, 0.5)
    np.testing.assert_allclose(adv[:5, 0], [0.1125, -0.05, 0.125, -0.1, 0.05], atol=1e-6)
    # round_cut: the traces stop after t = 2 (seat 0) and t = 1 (seat 1), as at a round's score decisions:
    # A2 = d2 = 0.10, A0 = d0 + 0.5 A2 = 0.10; A1 = d1 = 0.0; A3 and A4 have no later decision of their seat
    cut = np.zeros((6, 2), bool)
    cut[[1, 2], 0] = True
    adv_cut = seat_gae_dense(values, seats, dones, step, 1.0, 0.5, cut)
    np.testing.assert_allclose(adv_cut[:5, 0], [0.10, 0.0, 0.10, -0.1, 0.05], atol=1e-6)
    np.testing.assert_array_equal(adv_cut[:, 1], adv[:, 1])  # no cut in slot 1
    # cut_ends (the round value's episodes): a cut decision does not bootstrap either. Seat 1's d1 = -0.10 - (-0.2) = 0.10
    # (not -0.10 + v3 + 0.2 = 0.0); seat 0's d2 = 0.15 - 0.05 = 0.10 as before (its next value, v4, is 0)
    adv_end = seat_gae_dense(values, seats, dones, step, 1.0, 0.5, cut, cut_ends=True)
    np.testing.assert_allclose(adv_end[:5, 0], [0.10, 0.10, 0.10, -0.1, 0.05], atol=1e-6)


@pytest.mark.parametrize("n", [2, 3, 5])
def test_pad_credit_returns_are_the_margin_still_to_come(n):
    """On real games: every decision's return is the game's margin less its seat's banked margin, and the first is the margin."""
    torch.manual_seed(0)
    net = TokenNet(d_model=16, heads=2, ff=16, value_global=True)
    engine = get_game("grinch").vector(num_envs=3, num_players=n, seed=0, reward_mode="margin")
    batch = collect(engine, net, "grinch", np.random.default_rng(n), gae_lambda=1.0, credit="pad")
    phi = rt.banked_margin(batch.obs.astype(np.float32))
    assert batch.games == 3 and np.abs(phi).max() > 0.1  # the pads do fill
    np.testing.assert_allclose(batch.returns, batch.outcomes - phi, atol=2e-5)
    # the first decisions (pads empty) are paid exactly the game's margin, which sums to 0 over a table
    first = phi == 0
    np.testing.assert_allclose(batch.returns[:3 * n][first[:3 * n]], batch.outcomes[:3 * n][first[:3 * n]], atol=2e-5)
    assert batch.outcomes.reshape(-1)[:3 * n].sum() == pytest.approx(0.0, abs=1e-5)


class _FirstLegal:
    """A fixed opponent for one seat: the lowest legal action."""

    name = "first_legal"

    def reset(self, seed=None) -> None:
        pass

    def act_batch(self, observations, masks):
        return np.array([np.flatnonzero(m)[0] for m in masks], dtype=np.int64)


def test_round_cut_stops_the_trace_at_score_decisions_and_is_pad_ppo_only():
    """One 2-player game, the network in seat 1 (its decisions are the batch, in order), lambda = gamma = 1: every
    return is the pad reward plus the next decision's return, except at a score decision, where it is the pad reward
    plus the next decision's value (the trace stops); the last decision's return is the margin still to come."""
    from grinch_env.grinch.game import SCORE_BASE
    from training.learner.rollout import Tables

    torch.manual_seed(0)
    net = TokenNet(d_model=16, heads=2, ff=16, value_global=True)

    def run(cut: bool):
        torch.manual_seed(1)  # the policy's samples
        engine = get_game("grinch").vector(num_envs=1, num_players=2, seed=0, reward_mode="margin")
        tables = Tables(learner_seat=np.array([1]), groups=[(np.array([0]), _FirstLegal())])
        return collect(engine, net, "grinch", np.random.default_rng(0), gae_lambda=1.0, credit="pad", tables=tables, round_cut=cut)

    b, full = run(True), run(False)
    np.testing.assert_array_equal(b.actions, full.actions)  # the same game: the cut changes only the targets
    assert b.games == 1 and len(b.actions) == 3 * 4 + 3 * 10  # 3 rounds as a Who (3 discards, a row), 3 as the Grinch (3 x (2 draws, a discard), a row)
    phi = rt.banked_margin(b.obs.astype(np.float32)).astype(np.float64)
    reward = np.append(phi[1:], b.outcomes[-1]) - phi  # the pad rewards: the banked margin's change to the next decision
    score = b.actions >= SCORE_BASE
    assert score.sum() == 6 and score[-1]
    nxt_ret, nxt_val = np.append(b.returns[1:], 0.0), np.append(b.values[1:], 0.0)
    np.testing.assert_allclose(b.returns, reward + np.where(score, nxt_val, nxt_ret), atol=1e-5)
    np.testing.assert_allclose(full.returns, b.outcomes - phi, atol=1e-5)  # without the cut: the Monte-Carlo margin still to come
    assert not np.allclose(b.returns[:-1], full.returns[:-1], atol=1e-3)
    with pytest.raises(ValueError, match="round_cut stops PPO's GAE trace"):
        collect(get_game("grinch").vector(num_envs=1, num_players=2, seed=0, reward_mode="margin"), net, "grinch",
                np.random.default_rng(0), round_cut=True)
    with pytest.raises(ValueError, match="ppo.round_cut stops PPO's GAE trace"):
        load_config(None, ["game=grinch", "num_players=2", "ppo.round_cut=true"])
    assert load_config(None, ["game=grinch", "num_players=2", "credit=pad", "ppo.round_cut=true"]).ppo.round_cut


def test_pad_credit_config_is_grinch_margin_only():
    assert load_config(None, ["game=grinch", "num_players=2", "credit=pad"]).credit == "pad"
    with pytest.raises(ValueError, match="credit='pad' needs game=grinch and reward_mode=margin"):
        load_config(None, ["game=gnoming", "credit=pad"])
    with pytest.raises(ValueError, match="credit='pad' needs game=grinch and reward_mode=margin"):
        load_config(None, ["game=grinch", "num_players=2", "credit=pad", "reward_mode=win"])
    engine = get_game("grinch").vector(num_envs=1, num_players=2, seed=0, reward_mode="win")
    with pytest.raises(ValueError, match="credit='pad' needs Grinch with reward_mode='margin'"):
        collect(engine, TokenNet(d_model=16, heads=2, ff=16), "grinch", np.random.default_rng(0), credit="pad")


def test_value_global_reads_the_global_token():
    torch.manual_seed(0)
    net = TokenNet(d_model=16, heads=2, ff=16, value_global=True)
    assert net.value[0].in_features == 32 and TokenNet(d_model=16, heads=2, ff=16).value[0].in_features == 16
    from grinch_env.grinch import encoding as enc

    st, at = (torch.from_numpy(x) for x in rt.encode_batch(enc.encode(_pads([40, 25, 61]), 0)[None]))
    with torch.no_grad():
        net.value[0].weight[:, :16] = 0  # blind to the pooled state: the value comes from the global token alone
        v0 = net(st, at)[2]
        st2 = st.clone()
        st2[:, rt.G0, rt.NUM_IDS + rt.G_MARGIN] = 0.5
        assert net(st2, at)[2] != v0


def test_pad_credit_with_every_table_size_in_one_rollout():
    """The long config's mixed tables (2-6 players in one engine): each seat's banked margin uses its own table's size."""
    torch.manual_seed(0)
    engine = get_game("grinch").vector(num_envs=5, num_players=[2, 3, 4, 5, 6], seed=0, reward_mode="margin")
    batch = collect(engine, TokenNet(d_model=16, heads=2, ff=16, value_global=True), "grinch", np.random.default_rng(0),
                    gae_lambda=1.0, credit="pad")
    assert batch.games == 5
    np.testing.assert_allclose(batch.returns, batch.outcomes - rt.banked_margin(batch.obs.astype(np.float32)), atol=2e-5)


def test_all_action_loss_moves_every_legal_action_by_its_q_above_the_policy_mean():
    """Two legal actions at 0.5 each with Q 0.1 and 0.3 (baseline 0.2), a masked third with Q 9: by hand the gradient
    on logit j is -p_j (Q_j - baseline) / scale = +0.05 and -0.05 (scale 1), 0 for the masked one; scale 2 halves it."""
    from training.learner.algos import all_action_loss
    from training.learner.net import MaskedCategorical

    mask = torch.tensor([[True, True, False]])
    q = torch.tensor([[0.1, 0.3, 9.0]])
    for scale, want in ((1.0, [0.05, -0.05, 0.0]), (2.0, [0.025, -0.025, 0.0])):
        logits = torch.zeros(1, 3, requires_grad=True)
        loss = all_action_loss(MaskedCategorical(logits, mask).probs, q, mask, scale)
        assert loss.item() == pytest.approx(0.0, abs=1e-7)
        loss.backward()
        np.testing.assert_allclose(logits.grad.numpy()[0], want, atol=1e-6)
    with pytest.raises(ValueError, match="ppo.all_action_coef = 1.0 reads the Q head"):
        load_config(None, ["game=grinch", "num_players=2", "ppo.all_action_coef=1.0"])


def test_ppo_update_with_the_q_head_trains_q_and_logs_both_losses():
    cfg = load_config(None, ["game=grinch", "num_players=2", "credit=pad", "num_envs=2", "minibatch_size=64", "ppo.q_coef=0.5",
                             "ppo.all_action_coef=1.0", "net.d_model=16", "net.heads=2", "net.ff=16"])
    from training.learner.algos import ppo_update

    torch.manual_seed(0)
    net = TokenNet(d_model=16, heads=2, ff=16, value_global=True)
    batch = collect(get_game("grinch").vector(num_envs=2, num_players=2, seed=0, reward_mode="margin"), net, "grinch",
                    np.random.default_rng(0), credit="pad")
    head = net.q.weight.detach().clone()
    stats = ppo_update(net, torch.optim.Adam(net.parameters(), lr=1e-3), batch, cfg, np.random.default_rng(0))
    assert stats["q_loss"] > 0 and stats["q_gap"] >= 0
    assert not torch.equal(head, net.q.weight)  # without q_coef the Q head gets no gradient in PPO


def test_round_value_targets_the_rounds_bank_and_round_baseline_scores_within_the_round():
    """One 2-player game, the network (with the round value head) in seat 1, lambda = gamma = 1.  Every decision's round
    return is the margin its seat banks from it to its next round's first decision (the score decisions' pad rewards;
    all other pad rewards are 0); with ``round_baseline`` a decision's advantage is that round return less its round
    value, a score decision's the whole game's return less its value; the value head's targets do not change."""
    from grinch_env.grinch.game import SCORE_BASE
    from training.learner.rollout import Tables

    torch.manual_seed(0)
    net = TokenNet(d_model=16, heads=2, ff=16, value_global=True, round_value=True)

    def run(baseline: bool):
        torch.manual_seed(1)
        engine = get_game("grinch").vector(num_envs=1, num_players=2, seed=0, reward_mode="margin")
        tables = Tables(learner_seat=np.array([1]), groups=[(np.array([0]), _FirstLegal())])
        return collect(engine, net, "grinch", np.random.default_rng(0), gae_lambda=1.0, credit="pad", tables=tables,
                       round_baseline=baseline)

    b, plain = run(True), run(False)
    np.testing.assert_array_equal(b.actions, plain.actions)
    phi = rt.banked_margin(b.obs.astype(np.float32)).astype(np.float64)
    score = np.flatnonzero(b.actions >= SCORE_BASE)
    assert len(score) == 6 and score[-1] == len(b.actions) - 1
    ends = np.append(phi[score[:-1] + 1], b.outcomes[-1])  # the banked margin at each next round's start (the game's at the end)
    start = 0
    for k, s in enumerate(score):
        np.testing.assert_allclose(b.round_returns[start:s + 1], ends[k] - phi[start:s + 1], atol=1e-5)
        start = s + 1
    assert len(set(np.round(b.round_returns, 5))) > 2  # the rounds bank different margins
    np.testing.assert_allclose(b.round_returns, plain.round_returns)
    np.testing.assert_allclose(b.returns, plain.returns)  # the whole game's: outcomes less the banked margin
    np.testing.assert_allclose(b.returns, b.outcomes - phi, atol=1e-5)
    is_score = b.actions >= SCORE_BASE
    np.testing.assert_allclose(b.advantages[is_score], (b.returns - b.values)[is_score], atol=1e-5)
    np.testing.assert_allclose(b.advantages[~is_score], (b.round_returns - b.round_values)[~is_score], atol=1e-5)
    np.testing.assert_allclose(plain.advantages, plain.returns - plain.values, atol=1e-5)
    assert b.round_values.std() > 0 and plain.round_values is not None
    # without the head: no round values; the baseline needs the head, PPO and pad credit
    no_head = collect(get_game("grinch").vector(num_envs=1, num_players=2, seed=0, reward_mode="margin"),
                      TokenNet(d_model=16, heads=2, ff=16), "grinch", np.random.default_rng(0), credit="pad")
    assert no_head.round_values is None and no_head.round_returns is not None
    with pytest.raises(ValueError, match="round_baseline reads the round value head"):
        collect(get_game("grinch").vector(num_envs=1, num_players=2, seed=0, reward_mode="margin"), TokenNet(d_model=16, heads=2, ff=16),
                "grinch", np.random.default_rng(0), credit="pad", round_baseline=True)


def test_round_value_config_and_update():
    from training.learner.algos import ppo_update

    with pytest.raises(ValueError, match="ppo.round_coef = 0.5 trains the round value head.*net.round_value=False"):
        load_config(None, ["game=grinch", "num_players=2", "credit=pad", "ppo.round_coef=0.5"])
    with pytest.raises(ValueError, match="ppo.round_coef = 0.5 trains the round value head.*credit=game"):
        load_config(None, ["game=grinch", "num_players=2", "net.round_value=true", "ppo.round_coef=0.5"])
    with pytest.raises(ValueError, match="ppo.round_baseline reads the round value head"):
        load_config(None, ["game=grinch", "num_players=2", "credit=pad", "net.round_value=true", "ppo.round_baseline=true"])
    cfg = load_config(None, ["game=grinch", "num_players=2", "credit=pad", "num_envs=2", "minibatch_size=64", "net.round_value=true",
                             "ppo.round_coef=0.5", "ppo.round_baseline=true", "net.d_model=16", "net.heads=2", "net.ff=16"])
    torch.manual_seed(0)
    net = TokenNet(**cfg.net.model_dump())
    batch = collect(get_game("grinch").vector(num_envs=2, num_players=2, seed=0, reward_mode="margin"), net, "grinch",
                    np.random.default_rng(0), credit="pad", round_baseline=True)
    head = net.round_value[-1].weight.detach().clone()
    stats = ppo_update(net, torch.optim.Adam(net.parameters(), lr=1e-3), batch, cfg, np.random.default_rng(0))
    assert stats["round_value_loss"] > 0 and "round_explained_variance" in stats
    assert not torch.equal(head, net.round_value[-1].weight)  # only round_coef gives the round head a gradient


@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("n", [2, 4, 6])
def test_reveal_hands_fills_every_other_seats_known_block_with_its_hand(n, backend):
    """A scalar game a few decisions in, loaded into the batched engine: the revealed observation is the seat's own
    observation except that relative seat j's "known in hand" block holds exactly the hand of seat (current + j) % n."""
    from grinch_env.grinch import encoding as enc

    game = Game(n, rng=n)
    rng = np.random.default_rng(n)
    for _ in range(3 * n):
        game.step(int(rng.choice(game.legal_actions())))
    from grinch_env.grinch.vector import VectorGrinch

    engine = VectorGrinch(1, n, seed=0, backend=backend)
    obs, _, seat = engine.load_games([game])
    assert seat[0] == game.current
    shown = engine.reveal_hands(obs, np.array([0]))
    blocks = np.zeros(enc.OBS_SIZE, bool)
    for j in range(1, n):
        lo = enc.SEAT_BLOCK + j * enc.SEAT_STRIDE + enc.KNOWN_IN_HAND
        blocks[lo:lo + 48] = True
        assert sorted(np.flatnonzero(shown[0, lo:lo + 48])) == sorted(game.hands[(game.current + j) % n])
    np.testing.assert_array_equal(shown[0, ~blocks], obs[0, ~blocks])  # nothing else changes, the own hand included
    assert sorted(np.flatnonzero(shown[0, :48])) == sorted(game.hands[game.current])
    assert not np.array_equal(shown, obs)  # the other hands were hidden
    # and after the engine's own steps (the loaded game plays on as the scalar one within its round)
    start_round, checked = game.round, 0
    for _ in range(4):
        action = int(game.legal_actions()[-1])
        game.step(action)
        obs, _, seat = engine.step(np.array([action]))[:3]
        if game.round != start_round or game.done:
            break
        shown = engine.reveal_hands(obs, np.array([0]))
        for j in range(1, n):
            lo = enc.SEAT_BLOCK + j * enc.SEAT_STRIDE + enc.KNOWN_IN_HAND
            assert sorted(np.flatnonzero(shown[0, lo:lo + 48])) == sorted(game.hands[(game.current + j) % n])
        checked += 1
    assert checked >= 1


def test_oracle_critic_values_read_the_revealed_hands_and_the_policy_does_not():
    from training.learner.algos import ppo_update

    torch.manual_seed(0)
    net = TokenNet(d_model=16, heads=2, ff=16, value_global=True, round_value=True)

    def run(oracle: bool):
        torch.manual_seed(1)
        engine = get_game("grinch").vector(num_envs=2, num_players=3, seed=0, reward_mode="margin")
        return collect(engine, net, "grinch", np.random.default_rng(0), credit="pad", oracle_critic=oracle)

    b, plain = run(True), run(False)
    np.testing.assert_array_equal(b.actions, plain.actions)  # the policy reads the same observations
    np.testing.assert_allclose(b.logprobs, plain.logprobs, atol=1e-6)
    assert plain.critic_obs is None and b.critic_obs.shape == b.obs.shape
    with torch.no_grad():
        _, _, v, rv = (x.numpy() for x in net.heads(*_encode_obs(b.critic_obs)))
        v_obs = net(*_encode_obs(b.obs))[2].numpy()
    np.testing.assert_allclose(b.values, v, atol=1e-5)
    np.testing.assert_allclose(b.round_values, rv, atol=1e-5)  # both value heads read the revealed hands
    assert not np.allclose(b.values, v_obs, atol=1e-4)
    np.testing.assert_allclose(plain.values, v_obs, atol=1e-5)
    assert (b.critic_obs.astype(np.float32) >= b.obs.astype(np.float32)).all()  # only cards added (the hidden ones)
    # the update's value loss is read on the revealed observations (lr 0: one pass over one minibatch, nothing moves)
    cfg = load_config(None, ["game=grinch", "num_players=3", "credit=pad", "minibatch_size=4096", "ppo.update_epochs=1",
                             "ppo.oracle_critic=true", "net.d_model=16", "net.heads=2", "net.ff=16", "net.round_value=true",
                             "ppo.round_coef=0.5"])
    stats = ppo_update(net, torch.optim.SGD(net.parameters(), lr=0.0), b, cfg, np.random.default_rng(0))
    assert stats["value_loss"] == pytest.approx(0.5 * float(((v - b.returns) ** 2).mean()), rel=1e-4)
    assert stats["round_value_loss"] == pytest.approx(0.5 * float(((rv - b.round_returns) ** 2).mean()), rel=1e-4)
    with pytest.raises(ValueError, match="ppo.oracle_critic reveals the Grinch's hidden hands"):
        load_config(None, ["game=gnoming", "ppo.oracle_critic=true"])
    with pytest.raises(ValueError, match="oracle_critic reads the hidden hands"):
        collect(get_game("gnoming").vector(num_envs=1, num_players=3, seed=0, reward_mode="margin"), net, "gnoming",
                np.random.default_rng(0), oracle_critic=True)


def _encode_obs(obs):
    from training.learner.rollout import encode

    return encode("grinch", obs.astype(np.float32))


def test_seat_hands_give_every_seat_token_its_hands_row_values():
    """``encode_batch(seat_hands=True)``: a hand-made hand in relative seat 1's "known in hand" block (what
    ``reveal_hands`` writes) gets its row values checked by hand, a used row reads 0; the own hand's from the
    observation's own hand; without the option those columns are 0 and nothing else differs."""
    from grinch_env.grinch import encoding as enc
    from grinch_env.grinch import tokens as rt
    from grinch_env.grinch.cards import card_id
    from grinch_env.grinch.scoring import bonus_points, row_scores

    game = Game(3, rng=5)
    obs = enc.encode(game, game.current)[None].copy()
    lo = enc.SEAT_BLOCK + 1 * enc.SEAT_STRIDE + enc.KNOWN_IN_HAND
    obs[0, lo:lo + 48] = 0
    # Wreaths 1-4, Noise 4, Ornaments 4 (first copies, no bonus): Wreaths 1+2+3+4 = 10, Noise 4, Ornaments 4, Presents 0,
    # Rainbow 4+4+4 = 12, Match (three 4s) 10, Run 1-4 15; no bonus card
    for card in (card_id(0, 1, 0), card_id(0, 2, 0), card_id(0, 3, 0), card_id(0, 4, 0), card_id(1, 4, 0), card_id(2, 4, 0)):
        obs[0, lo + card] = 1
    d, col = rt.NUM_IDS + rt.S_HAND, rt.S0 + 1
    st = rt.encode_batch(obs, seat_hands=True)[0]
    np.testing.assert_allclose(st[0, col, d:d + 7] * 30, [10, 4, 4, 0, 12, 10, 15], atol=1e-5)
    assert st[0, col, d + 7] == 0 and st[0, col, d + 8] * 75 == pytest.approx(15)  # the best open row writes 15 (scale 30 + 45)
    obs[0, enc.ROW_USED + 7 * 1 + 6] = 1  # seat 1 has used its Run row
    st = rt.encode_batch(obs, seat_hands=True)[0]
    np.testing.assert_allclose(st[0, col, d:d + 7] * 30, [10, 4, 4, 0, 12, 10, 0], atol=1e-5)
    assert st[0, col, d + 8] * 75 == pytest.approx(12)  # Rainbow is now its best
    own = game.hands[game.current]
    np.testing.assert_allclose(st[0, rt.S0, d:d + 7] * 30, row_scores(own), atol=1e-5)
    assert st[0, rt.S0, d + 7] * 45 == pytest.approx(bonus_points(own))
    assert not st[0, rt.S0 + 2, d:d + 9].any()  # seat 2: nothing known in its hand
    assert not st[0, rt.S0 + 3:rt.C0, d:d + 9].any()  # absent seats
    plain, plain_actions = rt.encode_batch(obs)
    assert not plain[0, rt.S0:rt.C0, d:d + 9].any()
    st, actions = rt.encode_batch(obs, seat_hands=True)
    st[:, rt.S0:rt.C0, d:d + 9] = 0
    np.testing.assert_array_equal(st, plain)
    np.testing.assert_array_equal(actions, plain_actions)


def test_action_cards_give_discards_and_pile_draws_the_moved_cards_columns():
    """``encode_batch(action_cards=True)``: a hand-made hand {N1', P6} and relative seat 1's pile top O2'; the discard
    tokens carry their card's columns and the pile draw its top card's, checked by hand against the standard layout
    (suit one-hot, rank / 6, bonus points / 10, the bonus's suit one-hot, its count / 3); an empty pile, the draw pile
    and the score actions read 0 there; without the option those columns are 0 and nothing else differs."""
    from grinch_env.grinch import encoding as enc
    from grinch_env.grinch.cards import card_id
    from grinch_env.grinch.game import DRAW_DISCARD_BASE, DRAW_PILE_ACTION, SCORE_BASE

    game = Game(3, rng=5)
    obs = enc.encode(game, game.current)[None].copy()
    n1b, p6, o2b = card_id(1, 1, 1), card_id(3, 6, 0), card_id(2, 2, 1)  # 13, 46, 27
    obs[0, :48] = 0
    obs[0, [n1b, p6]] = 1
    for j in range(6):
        obs[0, enc.SEAT_BLOCK + j * enc.SEAT_STRIDE + enc.PILE_TOP:][:48] = 0
    obs[0, enc.SEAT_BLOCK + 1 * enc.SEAT_STRIDE + enc.PILE_TOP + o2b] = 1
    cols = slice(rt.NUM_IDS + rt.A_CARD, rt.NUM_IDS + rt.A_CARD + 11)
    _, at = rt.encode_batch(obs, action_cards=True)
    # N1' (standard layout: 10 points when 3 Ornaments are held): Noise, rank 1, bonus 10, Ornaments, count 3
    np.testing.assert_allclose(at[0, n1b, cols], [0, 1, 0, 0, 1 / 6, 1.0, 0, 0, 1, 0, 1.0], atol=1e-6)
    np.testing.assert_allclose(at[0, p6, cols], [0, 0, 0, 1, 1.0, 0, 0, 0, 0, 0, 0], atol=1e-6)  # P6: no bonus
    # O2' on relative seat 1's pile (5 points when 1 Wreath is held): Ornaments, rank 2, bonus 5, Wreaths, count 1
    np.testing.assert_allclose(at[0, DRAW_DISCARD_BASE + 1, cols], [0, 0, 1, 0, 2 / 6, 0.5, 1, 0, 0, 0, 1 / 3], atol=1e-6)
    assert not at[0, [DRAW_PILE_ACTION, DRAW_DISCARD_BASE, DRAW_DISCARD_BASE + 2], cols].any()  # the draw pile; empty piles
    assert not at[0, SCORE_BASE:, cols].any()
    plain = rt.encode_batch(obs)[1]
    assert not plain[..., cols].any()
    at[..., cols] = 0
    np.testing.assert_array_equal(at, plain)


def test_token_options_reach_every_encoder_of_the_network():
    """``net.token_options: [action_cards]``: the rollout, the deterministic play and the PPO update encode with
    ``action_cards`` (the network's choices and the update's losses are those of the tokens with the columns, not
    without), the checkpoint's network keeps the option; a Gnoming config or encoder asking for one is refused, as
    are an unknown option and one listed twice."""
    from training.learner.algos import ppo_update
    from training.learner.rollout import encode, greedy_actions

    torch.manual_seed(0)
    net = TokenNet(d_model=16, layers=1, heads=2, ff=16, value_global=True, action_card_ids=False, token_options=["action_cards"])
    with torch.no_grad():  # the moved card's rank column (dense 12 + 4) weighs heavily in the action embedding
        net.action_embed.dense.weight[:, rt.A_CARD + 4] += 5.0
        net.logit.weight.mul_(100.0)  # undo the near-uniform start: a policy whose log-probabilities tell the tokens apart
    engine = get_game("grinch").vector(num_envs=4, num_players=2, seed=0, reward_mode="margin")
    torch.manual_seed(1)
    b = collect(engine, net, "grinch", np.random.default_rng(0), credit="pad")
    obs = b.obs.astype(np.float32)
    with torch.no_grad():
        logits, _, v = net(*encode("grinch", obs, options=["action_cards"]))
        logits_plain = net(*encode("grinch", obs))[0]
    m = torch.from_numpy(b.masks.astype(bool))
    logp = torch.log_softmax(logits.masked_fill(~m, -1e9), 1).gather(1, torch.from_numpy(b.actions)[:, None]).squeeze(1)
    np.testing.assert_allclose(b.logprobs, logp.numpy(), atol=1e-5)
    np.testing.assert_allclose(b.values, v.numpy(), atol=1e-5)
    discard = b.masks[:, :48].sum(1) >= 2
    choice = logits.masked_fill(~m, -1e9).argmax(1).numpy()
    np.testing.assert_array_equal(greedy_actions(net, "grinch", obs, b.masks), choice)
    assert (choice[discard] != logits_plain.masked_fill(~m, -1e9).argmax(1).numpy()[discard]).any()  # the columns change choices
    cfg = load_config(None, ["game=grinch", "num_players=2", "credit=pad", "minibatch_size=4096", "ppo.update_epochs=1",
                             "net.d_model=16", "net.heads=2", "net.ff=16", "net.value_global=true", "net.action_card_ids=false",
                             "net.token_options=[action_cards]"])
    stats = ppo_update(net, torch.optim.SGD(net.parameters(), lr=0.0), b, cfg, np.random.default_rng(0))
    assert stats["value_loss"] == pytest.approx(0.5 * float(((v.numpy() - b.returns) ** 2).mean()), rel=1e-4)
    assert stats["approx_kl"] == pytest.approx(0.0, abs=1e-7) and stats["clip_fraction"] == 0.0  # the update re-reads the rollout's policy
    from pathlib import Path

    from training.learner.formats import RUN_FORMAT
    from training.learner.rollout import tokens_module
    from training.learner.search import net_from_checkpoint

    ckpt = {"format": RUN_FORMAT, "config": cfg.model_dump(), "model": net.state_dict(), "tokens_version": tokens_module("grinch").TOKENS_VERSION}
    loaded, _ = net_from_checkpoint(ckpt, Path("run.pt"))
    assert loaded.token_options == ("action_cards",)
    both = encode("grinch", obs, options=["action_cards", "card_after"])
    for got, want in zip(both, rt.encode_batch(obs, action_cards=True, card_after=True)):
        np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(greedy_actions(loaded, "grinch", obs, b.masks), choice)
    with pytest.raises(ValueError, match=r"net.token_options \['action_cards'\] are input options of the Grinch's tokens: they need game=grinch"):
        load_config(None, ["game=gnoming", "net.token_options=[action_cards]"])
    with pytest.raises(ValueError, match="lists an option twice"):
        load_config(None, ["game=grinch", "num_players=2", "net.token_options=[card_after, card_after]"])
    with pytest.raises(ValueError, match="card_colors"):
        load_config(None, ["game=grinch", "num_players=2", "net.token_options=[card_colors]"])
    with pytest.raises(ValueError, match=r"it needs game='grinch' and options from \['action_cards', 'card_after', 'extend'\], got game 'gnoming'"):
        encode("gnoming", np.zeros((1, 10), np.float32), options=["action_cards"])


def test_oracle_rows_critic_reads_the_revealed_hands_row_values():
    """``oracle_rows``: collect's values and the update's value loss come from the revealed observations encoded with
    ``seat_hands``; the option needs the oracle critic and the Grinch."""
    from training.learner.algos import ppo_update
    from training.learner.rollout import encode

    torch.manual_seed(0)
    net = TokenNet(d_model=16, heads=2, ff=16, value_global=True, round_value=True)
    torch.manual_seed(1)
    engine = get_game("grinch").vector(num_envs=2, num_players=2, seed=0, reward_mode="margin")
    b = collect(engine, net, "grinch", np.random.default_rng(0), credit="pad", oracle_critic=True, oracle_rows=True)
    with torch.no_grad():
        _, _, v, rv = (x.numpy() for x in net.heads(*encode("grinch", b.critic_obs.astype(np.float32), seat_hands=True)))
        v_plain = net(*encode("grinch", b.critic_obs.astype(np.float32)))[2].numpy()
    np.testing.assert_allclose(b.values, v, atol=1e-5)
    np.testing.assert_allclose(b.round_values, rv, atol=1e-5)
    assert not np.allclose(b.values, v_plain, atol=1e-4)  # the row values reached the value head
    cfg = load_config(None, ["game=grinch", "num_players=2", "credit=pad", "minibatch_size=4096", "ppo.update_epochs=1",
                             "ppo.oracle_critic=true", "ppo.oracle_rows=true", "net.d_model=16", "net.heads=2", "net.ff=16",
                             "net.round_value=true", "ppo.round_coef=0.5"])
    stats = ppo_update(net, torch.optim.SGD(net.parameters(), lr=0.0), b, cfg, np.random.default_rng(0))
    assert stats["value_loss"] == pytest.approx(0.5 * float(((v - b.returns) ** 2).mean()), rel=1e-4)
    assert stats["round_value_loss"] == pytest.approx(0.5 * float(((rv - b.round_returns) ** 2).mean()), rel=1e-4)
    with pytest.raises(ValueError, match="set ppo.oracle_critic=true too"):
        load_config(None, ["game=grinch", "num_players=2", "credit=pad", "ppo.oracle_rows=true"])
    with pytest.raises(ValueError, match="oracle_rows gives the asymmetric critic"):
        collect(engine, net, "grinch", np.random.default_rng(0), credit="pad", oracle_rows=True)
    with pytest.raises(ValueError, match="seat_hands gives the seat tokens the Grinch's hand values: it needs game='grinch'"):
        encode("gnoming", np.zeros((1, 10), np.float32), seat_hands=True)


def test_banked_points_weigh_the_others_totals_and_points_rewards_by_hand():
    """Totals 40 / 25 / 61: own points 0.40 / 0.25 / 0.61; half the others' mean: (40 - 0.5 x 43) / 100 = 0.185, (25 - 0.5 x 50.5) / 100 = -0.0025."""
    from grinch_env.grinch import encoding as enc
    from training.learner.rollout import _points_rewards

    game = _pads([40, 25, 61])
    obs = np.stack([enc.encode(game, s) for s in range(3)]).astype(np.float16)
    np.testing.assert_allclose(rt.banked_points(obs, 0.0), [0.40, 0.25, 0.61], atol=1e-6)
    np.testing.assert_allclose(rt.banked_points(obs, 0.5), [0.185, -0.0025, 0.4475], atol=1e-6)
    np.testing.assert_allclose(rt.banked_points(obs, 1.0), rt.banked_margin(obs), atol=1e-6)
    totals = np.array([[30, 50, 10, 0, 0, 0], [20, 60, 0, 0, 0, 0]])
    np.testing.assert_allclose(_points_rewards(totals, np.array([3, 2]), 0.5),
                               [[0.15, 0.40, -0.10, 0, 0, 0], [-0.10, 0.50, 0, 0, 0, 0]], atol=1e-6)
    np.testing.assert_allclose(_points_rewards(totals, np.array([3, 2]), 0.0), [[0.3, 0.5, 0.1, 0, 0, 0], [0.2, 0.6, 0, 0, 0, 0]], atol=1e-6)


def _seat1_game(**kw):
    """One 2-player game, the network in seat 1 (its decisions are the batch, in order), the lowest legal action in seat 0."""
    from training.learner.rollout import Tables

    torch.manual_seed(0)
    net = TokenNet(d_model=16, heads=2, ff=16, value_global=True)
    torch.manual_seed(1)
    engine = get_game("grinch").vector(num_envs=1, num_players=2, seed=0, reward_mode="margin")
    tables = Tables(learner_seat=np.array([1]), groups=[(np.array([0]), _FirstLegal())])
    batch = collect(engine, net, "grinch", np.random.default_rng(0), credit="pad", tables=tables, **kw)
    return batch, engine


def test_pad_others_zero_pays_each_seat_its_own_points():
    """The same game as with the margin, but each return is the seat's final total less its banked total, over 100."""
    b, engine = _seat1_game(pad_others=0.0, gae_lambda=1.0)
    margin, _ = _seat1_game(gae_lambda=1.0)
    np.testing.assert_array_equal(b.actions, margin.actions)  # the payments change only the targets
    own = rt.seat_totals(b.obs.astype(np.float32))[:, 0].astype(np.float64)
    final = engine.last_totals[0, 1]
    assert own[0] == 0 and 0 < own[-1] <= final and final > 0
    np.testing.assert_allclose(b.returns, (final - own) / 100, atol=1e-5)
    np.testing.assert_allclose(margin.returns, margin.outcomes - rt.banked_margin(b.obs.astype(np.float32)), atol=1e-5)
    np.testing.assert_allclose(b.outcomes, margin.outcomes)  # the logged outcome stays the game's margin
    net = TokenNet(d_model=16, heads=2, ff=16)
    with pytest.raises(ValueError, match="pad_others weighs the others' totals"):
        collect(get_game("grinch").vector(num_envs=1, num_players=2, seed=0, reward_mode="margin"), net, "grinch",
                np.random.default_rng(0), pad_others=0.0)
    with pytest.raises(ValueError, match="pad_others = 0.0 weighs the others' totals in pad credit's payments: it needs credit=pad"):
        load_config(None, ["game=grinch", "num_players=2", "pad_others=0"])
    with pytest.raises(ValueError, match="less than or equal to 1"):
        load_config(None, ["game=grinch", "num_players=2", "credit=pad", "pad_others=1.5"])
    assert load_config(None, ["game=grinch", "num_players=2", "credit=pad", "pad_others=0.5"]).pad_others == 0.5


def test_card_after_gives_every_card_token_the_hand_with_that_card_added_or_removed():
    """Seat 1 holds W3 (card 5), O5 (33), P3 (41), P6 (47), its Rainbow used: with P4 (42) the hand W3 O5 P3 P4 P6
    scores Wreaths 3, Noise 0, Ornaments 5, Presents 13, Rainbow used, no Match, Run 3-4-5-6 = 15, and both bonuses
    hold (W3 +5 with a Present, P3 +5 with an Ornament): 10; a card of the hand reads the hand without it (the
    discard's afterstate: without P3, W3's +5 only)."""
    from grinch_env.grinch import encoding as enc

    game = Game(3, rng=0)
    game.score_sheet[1][4] = 12
    game.totals[1] = 12
    obs = enc.encode(game, 1)[None]
    d, ca = rt.NUM_IDS, rt.C_AFTER
    plain = rt.encode_batch(obs)[0][0]
    st, at = rt.encode_batch(obs, card_after=True)
    cards = st[0, rt.C0:]
    points = np.rint(cards[:, d + ca:d + ca + 7] * rt.MAX_ROW_VALUE)
    np.testing.assert_array_equal(points[42], [3, 0, 5, 13, 0, 0, 15])
    bonus = cards[:, d + ca + 7] * rt._layout("standard").scales.bonus
    assert bonus[42] == pytest.approx(10.0) and bonus[41] == pytest.approx(5.0)
    np.testing.assert_array_equal(points[41], [3, 0, 5, 6, 0, 0, 0])  # P3 out: as the discard's token
    np.testing.assert_allclose(cards[[5, 33, 41, 47], d + ca:d + ca + 8], at[0, [5, 33, 41, 47], d:d + 8], atol=1e-6)
    # without the flag those columns are 0 and everything else is the same
    assert not plain[rt.C0:, d + ca:d + ca + 8].any()
    st[0, rt.C0:, d + ca:d + ca + 8] = 0
    np.testing.assert_array_equal(st[0], plain)


def _check_card_option(option: str) -> None:
    """A network option that reads the moved card's columns (``hand_pool``, ``afterstate_head``): refused without
    ``action_cards`` by the network and by the config, recorded in the network's config only when on (older configs
    unchanged), kept by a checkpoint, and the loaded network plays as the saved one."""
    from pathlib import Path

    from training.learner.formats import RUN_FORMAT
    from training.learner.rollout import greedy_actions, tokens_module
    from training.learner.search import net_from_checkpoint

    with pytest.raises(ValueError, match=rf"{option} reads the moved card's columns of the action tokens: it needs token_options to hold 'action_cards'"):
        TokenNet(d_model=16, heads=2, ff=16, **{option: 8})
    with pytest.raises(ValueError, match=rf"net.{option} reads the moved card's columns .* it needs net.token_options to hold 'action_cards'"):
        load_config(None, ["game=grinch", "num_players=2", f"net.{option}=8"])
    cfg = load_config(None, ["game=grinch", "num_players=2", "net.d_model=16", "net.heads=2", "net.ff=16", "net.action_card_ids=false",
                             "net.token_options=[action_cards]", f"net.{option}=8"])
    torch.manual_seed(0)
    net = TokenNet(**cfg.net.model_dump())
    assert net.config[option] == 8 and option not in TokenNet(d_model=16, heads=2, ff=16).config
    ckpt = {"format": RUN_FORMAT, "config": cfg.model_dump(), "model": net.state_dict(), "tokens_version": tokens_module("grinch").TOKENS_VERSION}
    loaded, _ = net_from_checkpoint(ckpt, Path("run.pt"))
    assert getattr(loaded, option) == 8
    engine = get_game("grinch").vector(num_envs=4, num_players=2, seed=0, reward_mode="margin")
    b = collect(engine, net, "grinch", np.random.default_rng(0), credit="pad")
    obs = b.obs.astype(np.float32)
    np.testing.assert_array_equal(greedy_actions(loaded, "grinch", obs, b.masks), greedy_actions(net, "grinch", obs, b.masks))


def _n1_p6_o2_obs() -> np.ndarray:
    """``[1, 1337]``: a 3-player observation whose hand is {N1', P6} and whose only pile card is O2' on relative seat 1's
    top (nothing under it, nothing known in a hand): the hand-made position of the card-column tests."""
    from grinch_env.grinch import encoding as enc
    from grinch_env.grinch.cards import card_id

    game = Game(3, rng=5)
    obs = enc.encode(game, game.current)[None].copy()
    obs[0, :48] = 0
    obs[0, [card_id(1, 1, 1), card_id(3, 6, 0)]] = 1
    for j in range(6):
        obs[0, enc.SEAT_BLOCK + j * enc.SEAT_STRIDE:][:4 * 48] = 0
    obs[0, enc.SEAT_BLOCK + 1 * enc.SEAT_STRIDE + enc.PILE_TOP + card_id(2, 2, 1)] = 1
    return obs


def test_hand_pool_reads_each_actions_afterstate_hand_and_the_unseen_cards():
    """``net.hand_pool``: with the card MLP made the identity on a card's 11 rules columns and the hand MLP removed, each
    action's pooled afterstate is the sum of its kept cards' columns, checked by hand on the hand {N1', P6} with relative
    seat 1's pile top O2': discarding N1' keeps P6, drawing O2' holds all three, the draw pile and the rows the hand
    itself; the unseen cards are the other 45 (/ 8).  The option needs ``action_cards`` (network and config), a
    checkpoint keeps it, and the network still plays."""

    from torch import nn

    from grinch_env.grinch.cards import card_id
    from grinch_env.grinch.game import DRAW_DISCARD_BASE, DRAW_PILE_ACTION, SCORE_BASE
    from training.learner.rollout import net_tokens

    n1b, p6 = card_id(1, 1, 1), card_id(3, 6, 0)
    obs = _n1_p6_o2_obs()
    net = TokenNet(d_model=16, layers=1, heads=2, ff=16, action_card_ids=False, token_options=["action_cards"], hand_pool=11)
    with torch.no_grad():
        for layer in (net.card_mlp[0], net.card_mlp[2]):
            layer.weight.copy_(torch.eye(11))
            layer.bias.zero_()
    net.hand_mlp = nn.Identity()
    with torch.no_grad():
        pooled, now = net._afterstate_hands(*net_tokens(net, "grinch", obs))
        pooled, now = pooled[0].numpy(), now[0].numpy()  # [A, 22]: afterstate, unseen; [22]: the hand, unseen (the value's)
    n1_cols = [0, 1, 0, 0, 1 / 6, 1.0, 0, 0, 1, 0, 1.0]  # Noise, rank 1, +10 when 3 Ornaments are held
    p6_cols = [0, 0, 0, 1, 1.0, 0, 0, 0, 0, 0, 0]
    o2_cols = [0, 0, 1, 0, 2 / 6, 0.5, 1, 0, 0, 0, 1 / 3]  # Ornaments, rank 2, +5 when 1 Wreath is held
    hand = np.add(n1_cols, p6_cols)
    np.testing.assert_allclose(pooled[n1b, :11], p6_cols, atol=1e-6)
    np.testing.assert_allclose(pooled[p6, :11], n1_cols, atol=1e-6)
    np.testing.assert_allclose(pooled[DRAW_DISCARD_BASE + 1, :11], hand + o2_cols, atol=1e-6)
    for a in (DRAW_PILE_ACTION, DRAW_DISCARD_BASE, SCORE_BASE, SCORE_BASE + 6):  # the draw pile, an empty pile, the rows
        np.testing.assert_allclose(pooled[a, :11], hand, atol=1e-6)
    # unseen: 12 Wreaths, 11 of each other suit; ranks 168 - 1 - 6 - 2 = 159; bonuses 80 - 10 - 5 points; 10 of the 12 bonus
    # cards (N1' names Ornaments, O2' Wreaths: 3 name each suit); counts 4 x 1 + 8 x 1/3, less N1' (1) and O2' (1/3)
    unseen = [12, 11, 11, 11, 159 / 6, 6.5, 2, 3, 2, 3, 3 + 7 / 3]
    np.testing.assert_allclose(pooled[:, 11:], np.tile(np.divide(unseen, 8), (len(pooled), 1)), atol=1e-5)
    np.testing.assert_allclose(now, np.concatenate([hand, np.divide(unseen, 8)]), atol=1e-5)

    _check_card_option("hand_pool")


def test_extend_counts_the_unseen_cards_that_raise_each_open_row_of_every_afterstate():
    """``encode_batch(extend=True)``: per discard, draw pile and pile draw, and per open row, how many unseen cards would
    raise that row of the afterstate hand, / 12; checked by hand on the hand {W3, N4, O5, P5} (no pile cards, so the
    other 44 cards are unseen; the Match row used), then against the scoring rules card by card (``hand_values`` of
    the afterstate with each unseen card added) on positions of real games."""
    from grinch_env.grinch import encoding as enc
    from grinch_env.grinch.cards import card_id
    from grinch_env.grinch.game import DRAW_PILE_ACTION, SCORE_BASE

    game = Game(3, rng=5)
    obs = enc.encode(game, game.current)[None].copy()
    w3, n4, o5, p5 = card_id(0, 3, 0), card_id(1, 4, 0), card_id(2, 5, 0), card_id(3, 5, 0)
    obs[0, :48] = 0
    obs[0, [w3, n4, o5, p5]] = 1
    for j in range(6):
        obs[0, enc.SEAT_BLOCK + j * enc.SEAT_STRIDE:][:4 * 48] = 0
    obs[0, enc.ROW_USED:enc.ROW_USED + 7] = [0, 0, 0, 0, 0, 1, 0]  # Match used
    cols = slice(rt.NUM_IDS + rt.A_EXTEND, rt.NUM_IDS + rt.A_EXTEND + 7)
    _, at = rt.encode_batch(obs, extend=True)
    # The hand itself (the draw pile): 11 unseen cards of each suit; Rainbow: W 4-6 (6), N 5-6 (4), O 6 (2), P 6 (2);
    # Match (a third 5: 6 unseen) is used; Run: a 2 or a 6 makes 2-5 or 3-6 (8 + 8)
    np.testing.assert_allclose(at[0, DRAW_PILE_ACTION, cols] * 12, [11, 11, 11, 11, 14, 0, 16], atol=1e-5)
    # discarding W3 keeps {N4, O5, P5}: any unseen Wreath now raises the Rainbow (11 + 4 + 2 + 2); no run of 4 is one card away
    np.testing.assert_allclose(at[0, w3, cols] * 12, [11, 11, 11, 11, 19, 0, 0], atol=1e-5)
    # discarding P5 keeps {W3, N4, O5}: Presents any (11), W 4-6, N 5-6, O 6; a 2 or a 6 still makes a run of 4
    np.testing.assert_allclose(at[0, p5, cols] * 12, [11, 11, 11, 11, 6 + 4 + 2 + 11, 0, 16], atol=1e-5)
    assert not at[0, SCORE_BASE:, cols].any()
    plain = rt.encode_batch(obs)[1]
    assert not plain[..., cols].any()
    at[..., cols] = 0
    np.testing.assert_array_equal(at, plain)

    rng = np.random.default_rng(3)
    positions = []
    for seed in range(6):
        g = Game(2 + seed % 4, rng=seed)
        for _ in range(int(rng.integers(0, 60))):
            if g.done:
                break
            g.step(int(rng.choice(np.flatnonzero(np.frombuffer(bytes(g.legal_mask()), np.int8)))))
        if not g.done:
            positions.append(enc.encode(g, g.current))
    obs = np.stack(positions).astype(np.float32)
    _, at = rt.encode_batch(obs, extend=True)
    hand = obs[:, :48]
    seats = obs[:, enc.SEAT_BLOCK:enc.AT_TABLE].reshape(len(obs), 6, 4, 48)
    unseen = (hand + seats.max(2).sum(1) == 0).astype(np.float32)
    eye = np.eye(48, dtype=np.float32)
    after = np.concatenate([hand[:, None] * (1 - eye), hand[:, None], np.minimum(hand[:, None] + seats[:, :, 1], 1)], axis=1)  # [B, 55, 48]
    base, _ = rt.hand_values(after)
    more, _ = rt.hand_values(np.minimum(after[:, :, None, :] + eye, 1))  # [B, 55, 48 added cards, 7]
    want = ((more > base[:, :, None]) * unseen[:, None, :, None]).sum(2) * (obs[:, None, enc.ROW_USED:enc.ROW_USED + 7] < 0.5) / 12
    np.testing.assert_allclose(at[:, :SCORE_BASE, cols], want, atol=1e-6)
    assert want[..., 4:].any() and want[..., 6].any()  # the positions do exercise the Rainbow and Run counts
    # the largest counts a rule can meet (a Grinch's 6 cards plus a drawn top: 7 fives; all 8), and a hand a 4 completes
    fives = [card_id(s, 5, c) for s in range(4) for c in range(2)]
    hands = np.zeros((3, 1, 48), np.float32)  # three observers, one hand each, every card not in it unseen
    hands[0, 0, fives[:7]] = 1
    hands[1, 0, fives] = 1
    hands[2, 0, fives[:3] + [card_id(0, 1, 0), card_id(1, 2, 0), card_id(2, 3, 0)]] = 1  # W5 W5' N5 W1 N2 O3
    got = rt._extend_counts(hands, 1 - hands.max(1))
    np.testing.assert_array_equal(got[:, 0], [[10, 10, 10, 11, 8, 0, 0],  # a 6 of each suit raises the Rainbow; 30 for Match already
                                              [10, 10, 10, 10, 8, 0, 0],
                                              [9, 10, 11, 12, 2 + 2 + 6 + 12, 5, 8]])  # a fourth 5 (5 unseen); a 4 makes 1-5


def test_afterstate_head_reads_each_actions_kept_hand_cell_by_cell():
    """``net.afterstate_head``: the head's input, checked by hand on the hand {N1', P6} with relative seat 1's pile top
    O2': discarding N1' keeps the Presents-6 cell; drawing O2' holds the Noise-1, Ornaments-2 and Presents-6 cells and
    the bonus cells of N1' and O2'; the draw pile and the rows the hand itself; the unseen cards fill every other cell
    twice, once where a copy is placed, and the 10 other bonus cells; then the action's, the global and the own seat's
    dense columns.  The head adds to the logits (a zero output layer leaves the network's own); it needs
    ``action_cards``; a checkpoint keeps it."""

    from grinch_env.grinch.cards import card_id
    from grinch_env.grinch.game import DRAW_DISCARD_BASE, DRAW_PILE_ACTION, SCORE_BASE
    from training.learner.rollout import net_tokens

    n1b, p6 = card_id(1, 1, 1), card_id(3, 6, 0)
    obs = _n1_p6_o2_obs()
    torch.manual_seed(0)
    net = TokenNet(d_model=16, layers=1, heads=2, ff=16, action_card_ids=False, token_options=["action_cards"], afterstate_head=8)
    st, at = net_tokens(net, "grinch", obs)
    x = net._afterstate_input(st, at)[0].numpy()  # [62, 36 + 36 + 3 x 32]
    cell = {"N1": 1 * 6 + 0, "O2": 2 * 6 + 1, "P6": 3 * 6 + 5}  # suit x 6 + rank - 1
    bonus = {"N1'": 24 + 1 * 3 + 0, "O2'": 24 + 2 * 3 + 1}  # 24 + suit x 3 + rank - 1
    want = np.zeros((62, 36), np.float32)
    want[n1b, cell["P6"]] = 1  # discarding N1' keeps P6
    want[p6, [cell["N1"], bonus["N1'"]]] = 1  # discarding P6 keeps N1'
    want[DRAW_DISCARD_BASE + 1, [cell["N1"], cell["O2"], cell["P6"], bonus["N1'"], bonus["O2'"]]] = 1
    hand = [DRAW_PILE_ACTION, DRAW_DISCARD_BASE, *range(DRAW_DISCARD_BASE + 2, SCORE_BASE), *range(SCORE_BASE, 62)]
    want[np.ix_(hand, [cell["N1"], cell["P6"], bonus["N1'"]])] = 1
    legal_cards = [n1b, p6]
    np.testing.assert_array_equal(x[legal_cards + hand + [DRAW_DISCARD_BASE + 1], :36], want[legal_cards + hand + [DRAW_DISCARD_BASE + 1]])
    unseen = np.full(36, 2.0, np.float32)
    unseen[[cell["N1"], cell["O2"], cell["P6"]]] = 1
    unseen[24:] = 1
    unseen[[bonus["N1'"], bonus["O2'"]]] = 0
    np.testing.assert_array_equal(x[:, 36:72] * 2, np.tile(unseen, (62, 1)))
    d = rt.NUM_IDS
    np.testing.assert_array_equal(x[:, 72:104], at[0, :, d:].numpy())
    np.testing.assert_array_equal(x[:, 104:], np.tile(np.concatenate([st[0, 0, d:].numpy(), st[0, 1, d:].numpy()]), (62, 1)))

    with torch.no_grad():
        logits, q, _ = net(st, at)
        net.after_logit.weight.zero_()
        net.after_logit.bias.zero_()
        net.after_q.weight.zero_()
        net.after_q.bias.zero_()
        plain_logits, plain_q, _ = net(st, at)
        without = TokenNet(d_model=16, layers=1, heads=2, ff=16, action_card_ids=False, token_options=["action_cards"])
        missing, unexpected = without.load_state_dict(net.state_dict(), strict=False)
        assert not missing and {k.split(".")[0] for k in unexpected} == {"after_mlp", "after_logit", "after_q"}
        own_logits, own_q, _ = without(st, at)
    assert not torch.allclose(logits, plain_logits) and not torch.allclose(q, plain_q)  # the head adds to both
    torch.testing.assert_close(plain_logits, own_logits)
    torch.testing.assert_close(plain_q, own_q)
    _check_card_option("afterstate_head")

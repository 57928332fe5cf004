"""The masked distribution, per-seat GAE and one PPO update, on hand-made numbers."""

import math

import numpy as np
import pytest
import torch

from training.config import PPOConfig
from training.model import MaskedCategorical, PolicyValueNet
from training.ppo import ppo_update, seat_gae


def test_masked_distribution_gives_masked_actions_zero_probability_and_entropy():
    logits = torch.tensor([[1.0, 2.0, 3.0, 0.5]])
    mask = torch.tensor([[1, 0, 1, 0]], dtype=torch.int8)
    dist = MaskedCategorical(logits, mask)
    p1 = math.e / (math.e + math.e**3)
    p3 = math.e**3 / (math.e + math.e**3)
    assert dist.probs[0].tolist() == pytest.approx([p1, 0.0, p3, 0.0], abs=1e-7)
    assert dist.probs[0, 1].item() == 0.0 and dist.probs[0, 3].item() == 0.0
    # Entropy over the two legal actions only; the masked ones add exactly 0.
    assert dist.entropy().item() == pytest.approx(-(p1 * math.log(p1) + p3 * math.log(p3)), abs=1e-6)
    torch.manual_seed(0)
    samples = MaskedCategorical(logits.expand(5000, 4), mask.expand(5000, 4)).sample()
    assert set(samples.tolist()) == {0, 2}
    assert dist.log_prob(torch.tensor([1])).item() < -1e7


def test_single_legal_action_has_probability_one_and_zero_entropy():
    dist = MaskedCategorical(torch.tensor([[5.0, -2.0, 0.0]]), torch.tensor([[0, 1, 0]]))
    assert dist.probs[0].tolist() == [0.0, 1.0, 0.0]
    assert dist.entropy().item() == 0.0


def test_an_all_zero_mask_is_an_error():
    with pytest.raises(ValueError, match="at least one action"):
        MaskedCategorical(torch.zeros(2, 3), torch.tensor([[1, 0, 0], [0, 0, 0]]))


def test_seat_gae_credits_each_seat_its_terminal_reward_over_its_own_decisions():
    # One game slot, seats 0 and 1 alternate; the game ends on step 4 (seat 0 acts last),
    # then a second game starts at step 5 and is still running when the rollout ends.
    seats = np.array([[0], [1], [0], [1], [0], [1]])
    values = np.array([[0.1], [0.2], [0.3], [0.4], [0.5], [0.6]], dtype=np.float32)
    dones = np.array([[False], [False], [False], [False], [True], [False]])
    rewards = np.zeros((6, 1, 6), dtype=np.float32)
    rewards[4, 0, :2] = [1.0, -1.0]
    adv, complete = seat_gae(values, seats, dones, rewards, gamma=1.0, gae_lambda=1.0)
    # lambda = 1, gamma = 1: advantage = the seat's terminal reward - value.
    assert adv[:5, 0].tolist() == pytest.approx([0.9, -1.2, 0.7, -1.4, 0.5])
    assert complete[:, 0].tolist() == [True, True, True, True, True, False]
    adv, _ = seat_gae(values, seats, dones, rewards, gamma=1.0, gae_lambda=0.5)
    # Seat 0: step 4: 1 - 0.5 = 0.5; step 2: (0.5 - 0.3) + 0.5 * 0.5 = 0.45; step 0: (0.3 - 0.1) + 0.5 * 0.45 = 0.425.
    # Seat 1: step 3: -1 - 0.4 = -1.4; step 1: (0.4 - 0.2) + 0.5 * -1.4 = -0.5.
    assert adv[:5, 0].tolist() == pytest.approx([0.425, -0.5, 0.45, -1.4, 0.5])


def test_a_ppo_update_raises_the_probability_of_the_advantaged_action():
    torch.manual_seed(0)
    net = PolicyValueNet([16])
    obs = torch.zeros(64, 1337)
    obs[:, 0] = 1.0
    masks = torch.zeros(64, 62, dtype=torch.int8)
    masks[:, [3, 7]] = 1
    actions = torch.tensor([3, 7] * 32)
    with torch.no_grad():
        dist, values = net.distribution(obs, masks)
        p_before = dist.probs[0, 3].item()
        logprobs = dist.log_prob(actions)
    advantages = torch.where(actions == 3, 1.0, -1.0)
    batch = {"obs": obs, "masks": masks, "actions": actions, "logprobs": logprobs, "values": values,
             "advantages": advantages, "returns": values + advantages}
    stats = ppo_update(net, torch.optim.Adam(net.parameters(), lr=1e-2), batch, PPOConfig(minibatch_size=32), np.random.default_rng(0))
    with torch.no_grad():
        after = net.distribution(obs, masks)[0].probs[0]
    assert after[3].item() > p_before + 0.05
    assert after.sum().item() == pytest.approx(1.0) and after[3].item() + after[7].item() == pytest.approx(1.0)
    assert set(stats) == {"policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction", "explained_variance"}


def test_action_features_give_greedy_values_and_exact_row_scores():
    from grinch_env.agents import make_agent
    from grinch_env.grinch.encoding import action_mask, encode
    from grinch_env.grinch.features import FEATURE_SCALE, action_features
    from grinch_env.grinch.game import DRAW_PILE_ACTION, SCORE_BASE, Game
    from grinch_env.grinch.scoring import bonus_points, row_scores
    from training.model import greedy_values

    game = Game(3, rng=5)
    greedy = make_agent("greedy", seed=0)
    rng = np.random.default_rng(1)
    checked_scores = 0
    while not game.done:
        seat = game.current
        obs, mask = encode(game, seat), action_mask(game, seat)
        feats = action_features(obs[None], mask[None])[0]
        values = greedy_values(obs[None], mask[None])[0]
        legal = np.flatnonzero(mask)
        assert np.all(feats[mask == 0] == 0) and np.all(values[mask == 0] == 0)
        # Greedy's move is always among the best greedy values (the draw pile is a mean of rows there, not greedy's mean of maxima).
        if len(legal) > 1 and DRAW_PILE_ACTION not in legal:
            assert values[greedy.act(obs, mask)] == pytest.approx(values[legal].max())
        if legal[0] >= SCORE_BASE:
            hand = game.hands[seat]
            assert feats[legal[0], :7].tolist() == pytest.approx([r / FEATURE_SCALE for r in row_scores(hand)])
            assert feats[legal[0], 7] == pytest.approx(bonus_points(hand) / FEATURE_SCALE)
            expected = [(row_scores(hand)[a - SCORE_BASE] + bonus_points(hand)) / FEATURE_SCALE for a in legal]
            assert values[legal].tolist() == pytest.approx(expected)
            checked_scores += 1
        game.step(int(legal[rng.integers(len(legal))]))
    assert checked_scores == 18  # 6 rounds x 3 players


@pytest.mark.parametrize("num_players", [2, 4, 6])
def test_margin_baseline_reads_the_margin_reward_from_the_final_observation(num_players):
    from grinch_env.grinch.encoding import encode
    from grinch_env.grinch.game import Game, terminal_rewards

    game = Game(num_players, rng=num_players)
    rng = np.random.default_rng(0)
    while not game.done:
        legal = game.legal_actions()
        game.step(legal[rng.integers(len(legal))])
    obs = torch.from_numpy(np.stack([encode(game, s) for s in range(num_players)]))
    margin = PolicyValueNet([8], margin_baseline=True).margin_so_far(obs)
    assert margin.tolist() == pytest.approx(terminal_rewards(game.totals, "margin"), abs=1e-6)

"""The label-quality test of training.learner.labels: its branches replay the real game, its summary by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from grinch_env.agents import make_agent
from grinch_env.games import get_game
from training.learner.labels import branch_value, label_quality, main, summary, t_975

AGENT = "checkpoints/learner_gnoming_league_373min"


@pytest.fixture(autouse=True)
def _one_thread():
    torch.set_num_threads(1)


def test_the_branch_of_the_action_taken_replays_the_real_round():
    spec = get_game("gnoming")
    searcher = make_agent(f"{AGENT}:search=1,samples=2,top_k=2,horizon=round", num_players=3, game="gnoming", seed=0).search

    def network(obs, mask):
        return int(searcher.prior(np.asarray(obs, np.float32), np.asarray(mask).astype(bool))[0])

    agents = [None, make_agent("search", num_players=3, game="gnoming", seed=1), make_agent("search", num_players=3, game="gnoming", seed=2)]
    for s in (1, 2):
        agents[s].reset(s)
    state, encoder = spec.new_game(3, 5), spec.encoder()
    branches: list[tuple[int, float]] = []  # (round, branch value) at each of seat 0's decisions in the first round
    ends: dict[int, float] = {}
    while state.round < 1 and not state.done:
        seat = state.current
        view = encoder.observe(state, seat)
        if seat == 0:
            action = network(view["observation"], view["action_mask"])
            branches.append((state.round, branch_value(state, action, 0, network, agents, spec)))
        else:  # the stochastic search opponents: a branch plays deep copies, so the real ones are not moved
            action = int(agents[seat].act(view["observation"], view["action_mask"]))
        before = state.round
        state.step(action)
        if state.round != before or state.done:
            ends[before] = float(state.rewards("margin")[0])
    assert len(ends) == 1 and len(branches) > 20
    assert all(value == ends[r] for r, value in branches)  # every branch of the taken action ends as the real round did


def test_summary_by_hand():
    records = [{"net": 9, "label": 10, "v_net": 0.0, "v_label": 0.1}, {"net": 1, "label": 2, "v_net": 0.05, "v_label": 0.0},
               {"net": 3, "label": 4, "v_net": 0.2, "v_label": 0.2}, {"net": 5, "label": 6, "v_net": -0.1, "v_label": 0.1},
               {"net": 7, "label": 7}]
    s = summary(records)
    # differences 0.1, -0.05, 0, 0.2: mean 0.0625, sample sd sqrt(0.036875 / 3) = 0.110868, t(3) = 3.182
    assert (s["labelled"], s["differ"], s["better"], s["worse"], s["equal"]) == (5, 4, 2, 1, 1)
    assert s["mean_gain"] == pytest.approx(0.0625)
    half = 3.182 * math.sqrt(0.036875 / 3) / 2
    assert s["ci"] == pytest.approx((0.0625 - half, 0.0625 + half))
    assert summary([{"net": 1, "label": 1}]) == {"labelled": 1, "differ": 0, "better": 0, "worse": 0, "equal": 0}
    assert (t_975(1), t_975(4), t_975(25), t_975(500)) == (12.706, 2.776, 2.042, 1.96)


def test_one_candidate_labels_nothing_and_the_horizon_must_be_round(capsys):
    # top_k=1 is the network's own choice: the search looks at one candidate and labels no decision
    assert label_quality(AGENT, "samples=2,top_k=1,horizon=round", "greedy", 3, games=1) == []
    with pytest.raises(ValueError, match="horizon=round"):
        label_quality(AGENT, "samples=2,top_k=2,horizon=0", "greedy", 3, games=1)
    assert main(["--agent", AGENT, "--search", "samples=2,top_k=2,horizon=round", "--opponent", "greedy", "--games", "1", "--decisions", "6"]) == 0
    out = capsys.readouterr().out
    assert "labelled decisions 6;" in out and "2 x greedy, 1 games (seed 0)" in out


def test_a_labeller_agent_labels_every_decision_with_a_choice(capsys):
    # the network labelling itself: every decision with two or more legal actions is labelled, none differs
    same = label_quality(AGENT, opponent="greedy", num_players=3, games=1, labeller=AGENT)
    assert len(same) > 10 and all(r["label"] == r["net"] and "v_label" not in r for r in same)
    # greedy labelling the same game (the network plays its own moves either way): the same decisions, branches where it differs
    greedy = label_quality(AGENT, opponent="greedy", num_players=3, games=1, labeller="greedy")
    assert [r["net"] for r in greedy] == [r["net"] for r in same]
    differ = [r for r in greedy if r["label"] != r["net"]]
    assert differ and all("v_label" in r and "v_net" in r for r in differ)
    assert all("v_label" not in r for r in greedy if r["label"] == r["net"])
    assert main(["--agent", AGENT, "--labeller", "greedy", "--opponent", "greedy", "--games", "1"]) == 0
    out = capsys.readouterr().out
    assert "labelled by greedy's choices against 2 x greedy" in out and f"labelled decisions {len(greedy)}; the label differs from the network's choice in {len(differ)}" in out

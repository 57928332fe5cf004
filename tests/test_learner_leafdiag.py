"""The value-leaf diagnostic (training/learner/leafdiag.py): its leaves on hand-checked positions, and its CLI."""

from __future__ import annotations

import numpy as np
import pytest

from tests.test_learner_search import PriorNet, _checkpoint, _grinch_last_score
from training.learner.leafdiag import main, values_of
from training.learner.search import NetSearch

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def test_the_leaves_value_the_grinchs_last_decision_exactly():
    """Seat 1's last decision of a 2-player Grinch game (47 against 56): row 2 (action 57) ends it 50 to 56, row 4
    (action 59) 60 to 56. Every copy ends the game, so every leaf is the terminal margin / 100, whatever the value head says."""
    obs, mask = _grinch_last_score()
    seeds = np.arange(3)
    for horizon in (0, "round"):
        search = NetSearch(
            PriorNet(57, value=0.9), "grinch", "ppo", credit="game", reward_mode="margin", samples=3, top_k=2, horizon=horizon
        )
        vals, ends = values_of(search, obs, np.array([57, 59]), seeds)
        assert vals.tolist() == pytest.approx([-0.06, 0.04]) and ends == 6


def test_a_horizon_0_leaf_mid_round_is_the_value_head_and_no_copy_ends_the_round():
    """Gnoming at 3 players, seed 2, every seat playing its lowest legal action to seat 0's first discard ([12, 13]):
    no candidate ends the round, the totals are 0, so the horizon-0 leaf is the stand-in value head's 0.25 for both."""
    from grinch_env.gnoming.encoding import encode
    from grinch_env.gnoming.game import Game

    g = Game(3, rng=2)
    for _ in range(8):
        g.step(min(g.legal_actions()))
    assert (g.current, str(g.phase), g.legal_actions()) == (0, "discard", [12, 13])
    search = NetSearch(PriorNet(12, value=0.25), "gnoming", "ppo", credit="round", samples=2, top_k=2, horizon=0)
    vals, ends = values_of(search, encode(g, 0), np.array([12, 13]), np.arange(2))
    assert vals.tolist() == pytest.approx([0.25, 0.25]) and ends == 0


def test_the_cli_prints_one_line_per_leaf_over_the_decisions_it_saw(tmp_path, capsys):
    run = _checkpoint(tmp_path, "gnoming", 3)
    assert main(["--agent", run, "--games", "1", "--samples", "1", "--top_k", "2", "--decisions", "4"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "4 decisions with >= 2 legal actions diagnosed, 1 games, samples=1, top_k=2"
    assert [line.split(":")[0] for line in out[1::2][:3]] == ["h0_old", "h0_own", "mc"]
    mc = out[5]
    assert "= MC argmax 1.000" in mc and "within-decision 1.000" in mc  # the MC leaf agrees with itself
    assert out[-1].startswith("phases {")

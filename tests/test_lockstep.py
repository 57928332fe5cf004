"""Many games at once in one process (grinch_env.evaluation.tournament.run_games_lockstep, evaluate(lockstep=G)):
the same games as one at a time, with the learner's decisions of all games batched into one network call."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from grinch_env.agents import make_agent
from grinch_env.evaluation.evaluate import evaluate, main
from training.learner import search as search_module
from training.learner.config import load_config
from training.learner.run import Trainer
from training.learner.search import NetSearchAgent, SearchOptions, TimedLearnerAgent

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _run(tmp_path, game: str, n: int) -> str:
    """A fresh (untrained, seeded) learner run directory."""
    recipe = ["credit=round"] if game == "gnoming" else ["credit=pad", "net.value_global=true"]  # the games' PPO recipes (configs/ppo_*.yaml)
    trainer = Trainer(load_config(None, [f"game={game}", *recipe, f"checkpoint_dir={tmp_path}", "run_name=net", f"num_players={n}", "num_envs=2"]))
    trainer.save()
    return str(tmp_path / "net")


def _games(result) -> list:
    return [(g["index"], g["deal"], g["lineup"], g["totals"], g["winners"], g["rounds"]) for g in result.games]


@pytest.fixture
def batch_sizes(monkeypatch):
    """Record the number of decisions of every batched call of the learner's agents."""
    sizes: list[int] = []
    for cls in (NetSearchAgent, TimedLearnerAgent):
        original = cls.act_together

        def spy(agents, observations, masks, _original=original):
            sizes.append(len(agents))
            return _original(agents, observations, masks)

        monkeypatch.setattr(cls, "act_together", staticmethod(spy))
    return sizes


@pytest.mark.parametrize("game,n,agents", [("grinch", 3, ["greedy", "random"]), ("gnoming", 4, ["greedy", "random"])])
def test_agents_without_a_batch_key_play_the_same_games(game, n, agents):
    one = evaluate(agents, num_players=n, num_games=7, seed=5, game=game)
    many = evaluate(agents, num_players=n, num_games=7, seed=5, game=game, lockstep=3)
    assert _games(many) == _games(one) and [g["index"] for g in many.games] == list(range(7))
    assert many.per_agent == one.per_agent


class CountingNet(torch.nn.Module):
    """A stand-in network whose outputs are exact in floating point whatever the batch (counts of nonzero inputs):
    logits 0.1 x (nonzero features of the action's token) - 0.001 x action id, value 0.01 x (nonzero features of the
    state).  With it the batched search must play exactly the games of the search one decision at a time."""

    token_options = ()  # the tokens' input options it reads (TokenNet's): none

    def forward(self, state: torch.Tensor, actions: torch.Tensor):
        ids = torch.arange(actions.shape[1], dtype=torch.float32)
        logits = 0.1 * (actions != 0).sum(-1).float() - 0.001 * ids
        value = 0.01 * (state != 0).flatten(1).sum(1).float()
        return logits, logits.clone(), value


@pytest.mark.parametrize("game,n,horizon,credit", [("gnoming", 3, 2, "round"), ("gnoming", 3, 0, "round"), ("grinch", 2, "round", "pad"),
                                                   ("grinch", 3, 1, "pad")])
def test_batched_searches_play_the_same_games(batch_sizes, game, n, horizon, credit):
    options = SearchOptions(search=True, samples=2, top_k=3, horizon=horizon)
    agent = NetSearchAgent(CountingNet(), game, "ppo", credit, "margin", options, "counting", [n], seed=0, batch_key="counting")
    opponent = "random" if game == "gnoming" else "greedy"
    games = 2 if game == "gnoming" else 4  # a Gnoming game holds about five times the Grinch's decisions
    search_module.TIMING.clear()
    one = evaluate([agent, opponent], num_players=n, num_games=games, seed=2, game=game)
    decisions_one = search_module.TIMING["counting"][0]
    assert batch_sizes == []  # one game at a time: every decision through act()
    search_module.TIMING.clear()
    many = evaluate([agent, opponent], num_players=n, num_games=games, seed=2, game=game, lockstep=games)
    assert _games(many) == _games(one)
    # every decision of the searcher went through a batched call, and some calls held decisions of several games
    assert sum(batch_sizes) == decisions_one == search_module.TIMING["counting"][0] > 0
    assert max(batch_sizes) > 1


def test_the_network_alone_is_batched_too(tmp_path, batch_sizes):
    run = _run(tmp_path, "gnoming", 3)
    search_module.TIMING.clear()
    many = evaluate([run, "random"], num_players=3, num_games=3, seed=4, game="gnoming", lockstep=3)
    assert many.num_games == 3 and sum(batch_sizes) == sum(d for d, _ in search_module.TIMING.values()) > 0 and max(batch_sizes) == 3


def test_a_batched_forward_pass_agrees_with_single_ones_to_rounding(tmp_path):
    """The trained network's outputs depend on the batch they are computed in only by float rounding (padding, kernels):
    the reason the games of a real network are the same with lockstep play up to the rare near-tie."""
    from grinch_env.games import get_game
    from training.learner.rollout import encode

    agent = make_agent(_run(tmp_path, "gnoming", [3, 5]), num_players=3, game="gnoming")
    engine = get_game("gnoming").vector(num_envs=4, num_players=5, seed=1)
    obs, mask, _ = engine.reset(seed=1)
    for _ in range(7):
        obs, mask, _, _, _ = engine.step(np.array([np.flatnonzero(m)[-1] for m in mask]))
    batched = agent.net(*encode("gnoming", obs))
    for i in range(len(obs)):
        single = agent.net(*encode("gnoming", obs[i : i + 1]))
        for b, s in zip(batched, single):
            width = s.shape[1] if s.dim() > 1 else None
            assert torch.allclose(b[i, :width] if width else b[i], s[0], atol=1e-5)


@pytest.mark.parametrize("horizon", [3, "round"])
def test_choose_many_equals_choose_one_by_one(horizon):
    from grinch_env.games import get_game
    from training.learner.search import NetSearch

    search = NetSearch(CountingNet(), "gnoming", "ppo", credit="round", samples=3, top_k=3, horizon=horizon)
    engine = get_game("gnoming").vector(num_envs=6, num_players=3, seed=9)
    obs, mask, _ = engine.reset(seed=9)
    for _ in range(5):
        obs, mask, _, _, _ = engine.step(np.array([np.flatnonzero(m)[0] for m in mask]))
    one = [search.choose(o, m.astype(bool), np.random.default_rng(i)) for i, (o, m) in enumerate(zip(obs, mask))]
    last_one = search.last
    many = search.choose_many(list(obs), [m.astype(bool) for m in mask], [np.random.default_rng(i) for i in range(6)])
    assert many == one and search.last == last_one
    assert sum(len(np.flatnonzero(m)) > 1 for m in mask) >= 2  # at least two of the decisions were searched


def test_processes_and_lockstep_together_play_the_same_games():
    one = evaluate(["greedy", "random"], num_players=2, num_games=9, seed=1)
    both = evaluate(["greedy", "random"], num_players=2, num_games=9, seed=1, processes=2, lockstep=2)
    assert _games(both) == _games(one)


def test_a_bad_lockstep_says_what_is_allowed(capsys):
    with pytest.raises(ValueError, match=r"lockstep must be an int >= 1 \(games played at once in a process\), got 0"):
        evaluate(["greedy", "random"], num_players=2, num_games=2, lockstep=0)
    with pytest.raises(SystemExit) as exit_:
        main(["--agents", "greedy,random", "--players", "2", "--games", "2", "--lockstep", "-1", "--no-progress"])
    assert exit_.value.code == 2
    assert "lockstep must be an int >= 1" in capsys.readouterr().err


def test_lockstep_chunks_shrink_so_that_every_worker_has_tasks():
    from grinch_env.evaluation.evaluate import lockstep_chunk

    assert lockstep_chunk(300, 2, 20) == 20  # 300 // (4 * 20 * 2) = 1: one lockstep row of 20 games a task
    assert lockstep_chunk(1200, 2, 20) == 80  # 1200 // 160 = 7, capped at 4 x 20
    assert lockstep_chunk(300, 8, 10) == 10  # 300 // 320 = 0: never below one row
    assert lockstep_chunk(640, 2, 10) == 40  # 640 // 80 = 8, capped at 4 x 10
    assert lockstep_chunk(240, 2, 10) == 30  # 240 // 80 = 3

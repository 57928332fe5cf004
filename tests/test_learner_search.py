"""The learned agent with network-guided determinised search (training/learner/search.py) and learner checkpoints as harness agents."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from grinch_env.agents import make_agent
from grinch_env.evaluation.evaluate import evaluate
from training.learner.config import load_config
from training.learner.run import Trainer
from training.learner.search import NetSearch, NetSearchAgent, main

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


# configs/ppo_gnoming.yaml's and configs/ppo_grinch.yaml's runner settings (the learner's own keys)
RECIPES = {"gnoming": ["game=gnoming", "num_players=3", "reward_mode=margin", "credit=round"],
           "grinch": ["game=grinch", "num_players=2", "reward_mode=margin", "credit=pad", "learning_rate=0.003", "net.value_global=true"]}


def _checkpoint(tmp_path, game: str, num_players, name: str = "net") -> str:
    """Save a fresh (untrained, seeded) learner run and return its run directory."""
    sizes = num_players if isinstance(num_players, list) else [num_players]
    over = [f"checkpoint_dir={tmp_path}", f"run_name={name}", f"num_players={num_players}", f"num_envs={2 * len(sizes)}"]
    trainer = Trainer(load_config(None, RECIPES[game] + over))
    trainer.save()
    return str(tmp_path / name)


class PriorNet(torch.nn.Module):
    """A stand-in network: its policy prefers ``preferred`` (logit 5), then lower action ids (logit -0.01 * id); its value head says ``value``."""

    token_options = ()  # the tokens' input options it reads (TokenNet's): none

    def __init__(self, preferred: int, value: float = 0.0) -> None:
        super().__init__()
        self.preferred = preferred
        self.v = value

    def forward(self, state: torch.Tensor, actions: torch.Tensor):
        logits = -0.01 * torch.arange(actions.shape[1], dtype=torch.float32).expand(actions.shape[0], -1).clone()
        logits[:, self.preferred] = 5.0
        return logits, logits.clone(), torch.full((actions.shape[0],), self.v)


def _grinch_last_score() -> tuple[np.ndarray, np.ndarray]:
    """The Grinch at 2 players, seed 13 played at random to the last round's score phase of seat 1 (the game's last decision).

    Seat 1 (the Grinch) holds W4 N2 N5 N6 O3 with total 47 against seat 0's 56 (seat 0 has scored this round);
    its unused rows are 2 (action 57, 3 points: total 50, loses) and 4 (action 59, 13 points: total 60, wins).
    """
    from grinch_env.grinch import encoding as enc
    from grinch_env.grinch.game import Game
    from grinch_env.grinch.scoring import resolve_layout

    g = Game(2, rng=13)
    r = np.random.default_rng(13)
    while not (str(g.phase) == "score" and g.round == g.num_rounds - 1 and g.pos == 1):
        g.step(int(r.choice(g.legal_actions())))
    assert (g.current, g.totals, g.legal_actions(), sorted(g.hands[1])) == (1, [56, 47], [57, 59], sorted([15, 23, 20, 7, 28]))
    scales = enc.Scales(resolve_layout("standard"))
    return enc.encode(g, 1, scales), np.frombuffer(bytes(g.legal_mask()), np.int8).astype(bool)


def test_search_plays_the_winning_row_although_the_prior_prefers_the_losing_one():
    obs, mask = _grinch_last_score()
    search = NetSearch(PriorNet(57), "grinch", "ppo", credit="game", reward_mode="win", samples=4, top_k=2, horizon="end")
    assert search.choose(obs, mask, np.random.default_rng(0)) == 59
    assert search.last == {"prior": [57, 59], "candidates": [57, 59], "values": [-1.0, 1.0]}
    margin = NetSearch(PriorNet(57), "grinch", "ppo", credit="game", reward_mode="margin", samples=2, top_k=2, horizon="round")
    assert margin.choose(obs, mask, np.random.default_rng(0)) == 59
    assert margin.last["values"] == pytest.approx([(50 - 56) / 100, (60 - 56) / 100])  # (own - other) / 100
    # horizon=0 reads the leaf right after the candidate: here the game is over, so the leaf is the result.
    zero = NetSearch(PriorNet(57), "grinch", "ppo", reward_mode="win", samples=2, top_k=2, horizon=0)
    assert zero.choose(obs, mask, np.random.default_rng(0)) == 59 and zero.last["values"] == [-1.0, 1.0]
    # top_k=1 is the prior's choice, unsearched.
    one = NetSearch(PriorNet(57), "grinch", "ppo", samples=4, top_k=1, horizon="end")
    assert one.choose(obs, mask, np.random.default_rng(0)) == 57 and one.last["values"] is None


def test_a_flat_value_keeps_the_priors_choice():
    """Gnoming's first round, before any score: with a value head that says 0.25 everywhere every candidate's leaf is
    0.25 (+ the margin of the zero totals), so the search keeps the prior's first choice among its top_k."""
    from grinch_env.gnoming.encoding import encode
    from grinch_env.gnoming.game import Game

    g = Game(3, rng=2)
    r = np.random.default_rng(2)
    for _ in range(12):
        g.step(int(r.choice(g.legal_actions())))
    legal = g.legal_actions()
    assert g.round == 0 and g.totals == [0, 0, 0] and len(legal) >= 3
    obs, mask = encode(g, g.current), np.frombuffer(bytes(g.legal_mask()), np.int8).astype(bool)
    preferred = legal[-1]
    for horizon in (0, 2):
        search = NetSearch(PriorNet(preferred, value=0.25), "gnoming", "ppo", credit="round", samples=3, top_k=3, horizon=horizon)
        assert search.choose(obs, mask, np.random.default_rng(1)) == preferred
        assert search.last["candidates"] == [preferred] + legal[:2] and search.last["values"] == pytest.approx([0.25] * 3)


@pytest.mark.parametrize("game,n", [("gnoming", 3), ("grinch", 2)])
def test_top_k_1_plays_the_networks_greedy_choice(tmp_path, game, n):
    run = _checkpoint(tmp_path, game, n)
    net_alone = make_agent(run, num_players=n, game=game)
    searched = make_agent(f"{run}:search=1,samples=2,top_k=1,horizon=2", num_players=n, game=game, seed=0)
    assert isinstance(searched, NetSearchAgent)
    from grinch_env.games import get_game

    engine = get_game(game).vector(num_envs=8, num_players=n, seed=3)
    obs, mask, _ = engine.reset(seed=3)
    compared = 0
    for _ in range(30):
        for o, m in zip(obs, mask):
            assert searched.act(o, m) == net_alone.act(o, m)
            compared += 1
        obs, mask, _, _, _ = engine.step(net_alone.act_batch(obs, mask))
    assert compared == 240


def test_search_never_sees_hidden_cards():
    """Two Gnoming states that differ only in face-down cards give the same observation, so the same search result."""
    from grinch_env.gnoming.encoding import encode
    from grinch_env.gnoming.game import Game

    g = Game(3, rng=5)
    r = np.random.default_rng(5)
    for _ in range(12):
        g.step(int(r.choice(g.legal_actions())))
    me = g.current
    down = [(s, p) for s in range(3) for p in range(9) if not g.face_up[s][p] and s != me]
    (s1, p1), (s2, p2) = next((a, b) for a in down for b in down if g.layouts[a[0]][a[1]] != g.layouts[b[0]][b[1]])
    h = g.clone()
    h.layouts[s1][p1], h.layouts[s2][p2] = g.layouts[s2][p2], g.layouts[s1][p1]
    assert h.layouts != g.layouts
    obs_g, obs_h = encode(g, me), encode(h, me)
    assert np.array_equal(obs_g, obs_h)
    mask = np.frombuffer(bytes(g.legal_mask()), np.int8).astype(bool)
    assert mask.sum() >= 2
    torch.manual_seed(0)
    from training.learner.net import TokenNet

    net = TokenNet(d_model=16, layers=1, heads=2, ff=32).eval()
    results = []
    for obs in (obs_g, obs_h):
        search = NetSearch(net, "gnoming", "ppo", credit="round", samples=3, top_k=3, horizon=4)
        results.append((search.choose(obs, mask, np.random.default_rng(9)), search.last))
    assert results[0] == results[1] and results[0][1]["values"] is not None


def test_multi_size_checkpoints_accept_every_listed_size(tmp_path):
    run = _checkpoint(tmp_path, "gnoming", [3, 5])
    for n in (3, 5):
        assert make_agent(f"{run}:search=1,samples=2", num_players=n, game="gnoming").num_players == [3, 5]
    with pytest.raises(ValueError, match=re.escape(f"checkpoint {run!r} was trained for num_players=[3, 5], not 4")):
        make_agent(run, num_players=4, game="gnoming")
    res = evaluate([f"{run}:search=1,samples=2,top_k=2,horizon=2", "greedy", "greedy", "greedy", "greedy"], num_players=5, num_games=1,
                   seed=0, game="gnoming")
    assert res.num_games == 1 and sum(a["wins"] for a in res.per_agent.values()) == pytest.approx(1.0)


def test_bad_options_say_what_is_allowed(tmp_path):
    run = _checkpoint(tmp_path, "gnoming", 3)
    file = f"{run}/latest.pt"
    allowed = "allowed: search: 0 or 1"
    cases = {
        f"{run}:search=1,depth=3": f"learner checkpoint {file!r}: unknown option(s) ['depth']; {allowed}",
        f"{run}:samples=4": f"learner checkpoint {file!r}: options ['samples'] need search=1 (without it the network plays alone)",
        f"{run}:search=2": f"learner checkpoint {file!r}: search must be 0 or 1",
        f"{run}:search=1,samples=0": f"learner checkpoint {file!r}: samples must be an int >= 1",
        f"{run}:search=1,top_k=x": f"learner checkpoint {file!r}: top_k must be an int >= 1",
        f"{run}:search=1,horizon=turn": f"learner checkpoint {file!r}: horizon must be an int >= 0 (decisions played before the value head is read at the searcher's own turn; 0: its first own decision after the candidate; default 8), "
                                        "'round' (to the round's end) or 'end' (to the game's end), got 'turn'",
    }
    for spec, message in cases.items():
        with pytest.raises(ValueError) as err:
            make_agent(spec, num_players=3, game="gnoming")
        assert str(err.value).startswith(message), (spec, str(err.value))
    # A checkpoint that is not the token network's takes no search options (an afterstate run's takes play and generation).
    with pytest.raises(ValueError, match=re.escape("unknown option(s) ['samples']")):
        make_agent("checkpoints/champion_gnoming:samples=3", num_players=5, game="gnoming")


def test_the_search_cli_prints_win_share_interval_and_cost(tmp_path, capsys):
    run = _checkpoint(tmp_path, "gnoming", 3)
    assert main(["--agent", f"{run}:search=1,samples=2,top_k=2,horizon=2", "--opponent", "random", "--players", "3", "--games", "2"]) == 0
    out = capsys.readouterr().out
    line = out.strip().splitlines()[-1]
    assert re.fullmatch(r"net/latest:search\(samples=2,top_k=2,horizon=2\) vs 2 x random, 3 players, 2 games \(seed 0\): win share "
                        r"\d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\] \(parity 0\.333\); \d+\.\d ms per decision over \d+ decisions; wall \d+ s", line), line
    assert main(["--agent", f"{run}:search=1,foo=1", "--games", "1"]) == 2
    assert "unknown option(s) ['foo']" in capsys.readouterr().err


def test_the_evaluation_cli_takes_learner_specs_with_search_options(tmp_path, capsys):
    from grinch_env.evaluation.evaluate import main as evaluate_main

    run = _checkpoint(tmp_path, "gnoming", [3, 4])
    agents = f"{run}:search=1,samples=2,top_k=2,horizon=0,greedy,{run}"
    assert evaluate_main(["--game", "gnoming", "--agents", agents, "--players", "3", "--games", "3", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "Gnoming A Round: 3 games, 3 players" in out
    rows = [line.split()[1] for line in out.splitlines() if re.match(r"^\S+\s+3\s+\d\.\d{3} \[", line)]
    assert len(rows) == 3, out  # three agents (the searching learner, greedy, the learner alone), 3 seats each
    with pytest.raises(SystemExit) as exit_:
        evaluate_main(["--game", "gnoming", "--agents", f"{run}:search=1,width=2,greedy,greedy", "--games", "3", "--no-progress"])
    assert exit_.value.code == 2
    assert "unknown option(s) ['width']; allowed: search: 0 or 1" in capsys.readouterr().err


@pytest.mark.parametrize("horizon", [2, "round"])
def test_grinch_games_play_through_with_network_rollouts(tmp_path, horizon):
    run = _checkpoint(tmp_path, "grinch", 2)
    agent = make_agent(f"{run}:search=1,samples=2,top_k=2,horizon={horizon}", num_players=2, game="grinch", seed=0)
    res = evaluate([agent, "greedy"], num_players=2, num_games=1, seed=0, game="grinch")
    assert res.num_games == 1 and sum(a["seat_games"] for a in res.per_agent.values()) == 2
    assert agent.search.last["values"] is not None and len(agent.search.last["values"]) == 2


def test_horizon_0_reads_the_value_head_at_the_searchers_own_turn():
    """Gnoming at 3 players, seed 2, every seat playing its lowest legal action: seat 0's discard (action 12) passes
    the turn, then seat 1 draws (9), plays (0), discards (12), seat 2 the same, and seat 0 is to act again (draw).

    The value head was trained only on observations of the seat to act, so ``horizon=0`` plays the other seats on
    with the policy and reads it at seat 0's draw, not right after the discard (where seat 1 is to act)."""
    from grinch_env.gnoming.game import Game

    g = Game(3, rng=2)
    for _ in range(8):
        g.step(min(g.legal_actions()))
    assert (g.current, str(g.phase), g.legal_actions()) == (0, "discard", [12, 13])
    g.step(12)
    assert g.current == 1
    for own_turn, seen in ((True, [(1, 1)] * 3 + [(2, 2)] * 3 + [(0, 0)]), (False, [(1, 0)])):
        search = NetSearch(PriorNet(0, value=0.25), "gnoming", "ppo", credit="round", samples=1, top_k=2, horizon=0)
        search.own_turn_leaf = own_turn
        calls, observe = [], search.rules.observe
        search.rules.observe = lambda game, seat, calls=calls, observe=observe: calls.append((game.current, seat)) or observe(game, seat)
        leaf = g.clone()
        assert search.rollout([leaf], 0, 0).tolist() == [0.25]  # the value head's 0.25 plus the zero totals' margin 0
        assert calls == seen  # (seat to act, seat observed) at every network call
        assert (leaf.current, str(leaf.phase)) == ((0, "draw") if own_turn else (1, "draw"))


def test_a_pad_credit_leaf_adds_the_banked_score_pad_margin():
    """The Grinch at 2 players, seed 5 played at random to round 1's first discard (seat 0 to act, pads 17 to 0): a
    pad-credit value head predicts the margin still to come, so its leaf is V + (17 - 0) / 100; whole-game credit's is V."""
    from grinch_env.grinch import encoding as enc
    from grinch_env.grinch.game import Game
    from grinch_env.grinch.scoring import resolve_layout

    g = Game(2, rng=5)
    r = np.random.default_rng(5)
    while not (g.round == 1 and str(g.phase) != "score" and len(g.legal_actions()) >= 2):
        g.step(int(r.choice(g.legal_actions())))
    assert (g.current, str(g.phase), g.totals, g.legal_actions()) == (0, "discard", [17, 0], [6, 10, 18, 34])
    obs = enc.encode(g, 0, enc.Scales(resolve_layout("standard")))
    mask = np.frombuffer(bytes(g.legal_mask()), np.int8).astype(bool)
    for credit, leaf in (("pad", 0.25 + 0.17), ("game", 0.25)):
        search = NetSearch(PriorNet(18, value=0.25), "grinch", "ppo", credit=credit, reward_mode="margin", samples=2, top_k=3, horizon=0)
        assert search.choose(obs, mask, np.random.default_rng(0)) == 18
        assert search.last["candidates"] == [18, 6, 10] and search.last["values"] == pytest.approx([leaf] * 3)


def test_a_network_trained_with_the_oracle_critic_searches_only_to_the_games_end(tmp_path):
    """Its value head was trained on the other hands revealed, which a player cannot see: every leaf but the game's end
    would read it on an observation it never learned from, so the spec is refused with what is allowed."""
    over = [f"checkpoint_dir={tmp_path}", "run_name=oracle", "num_envs=2", "ppo.oracle_critic=true"]
    Trainer(load_config(None, RECIPES["grinch"] + over)).save()
    run = str(tmp_path / "oracle")
    for horizon in ("round", "0", "8"):
        with pytest.raises(ValueError, match=re.escape("was trained with ppo.oracle_critic") + ".*needs horizon=end"):
            make_agent(f"{run}:search=1,samples=2,horizon={horizon}", num_players=2, game="grinch")
    assert make_agent(f"{run}:search=1,samples=2,horizon=end", num_players=2, game="grinch").name.endswith("horizon=end)")
    assert make_agent(run, num_players=2, game="grinch").name == "oracle/latest"  # alone it reads only the policy

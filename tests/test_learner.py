"""Diagnosis tests of the general learner (training/learner): credit assignment, masks, fitting a known value, exact resume."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import torch

from grinch_env.games import get_game
from training.learner.algos import ppo_update
from training.learner.config import load_config
from training.learner.net import TokenNet
from training.learner.rollout import Batch, LearnerAgent, ShardPlayer, collect, encode, final_returns, seat_gae
from training.learner.run import Trainer, curve_series, final_report, minutes_to_beat, train


def test_final_returns_credit_each_decision_with_its_own_seats_reward():
    # One slot, 3 seats: a game of 5 decisions (seats 0,1,2,0,1) ending at t=4, then 2 decisions of a game still running.
    seats = np.array([[0], [1], [2], [0], [1], [2], [0]])
    dones = np.array([[0], [0], [0], [0], [1], [0], [0]], bool)
    rewards = np.zeros((7, 1, 3), np.float32)
    rewards[4, 0] = [0.5, -1.0, 0.5]  # seats 0 and 2 share the win
    rewards[6, 0] = [9.0, 9.0, 9.0]  # not a done step: never credited
    returns, complete = final_returns(seats, dones, rewards)
    assert returns[:, 0].tolist() == [0.5, -1.0, 0.5, 0.5, -1.0, 0.0, 0.0]
    assert complete[:, 0].tolist() == [True] * 5 + [False] * 2


def test_seat_gae_by_hand():
    # Seat 0 decides at t=0,2 (values 0.2, 0.6), seat 1 at t=1,3 (values -0.1, -0.4); the game ends at t=3:
    # seat 0 gets +1, seat 1 gets -1.  gamma = 1, lambda = 0.5, each seat's own decision sequence:
    # seat 0: delta_2 = 1 - 0.6 = 0.4, A_2 = 0.4; delta_0 = 0 + 0.6 - 0.2 = 0.4, A_0 = 0.4 + 0.5 * 0.4 = 0.6
    # seat 1: delta_3 = -1 + 0.4 = -0.6, A_3 = -0.6; delta_1 = -0.4 + 0.1 = -0.3, A_1 = -0.3 + 0.5 * -0.6 = -0.6
    values = np.array([[0.2], [-0.1], [0.6], [-0.4]], np.float32)
    seats = np.array([[0], [1], [0], [1]])
    dones = np.array([[0], [0], [0], [1]], bool)
    rewards = np.zeros((4, 1, 2), np.float32)
    rewards[3, 0] = [1.0, -1.0]
    adv, complete = seat_gae(values, seats, dones, rewards, gamma=1.0, gae_lambda=0.5)
    np.testing.assert_allclose(adv[:, 0], [0.6, -0.6, 0.4, -0.6], atol=1e-6)
    assert complete.all()
    # lambda = 1: every advantage is the seat's return minus the value (Monte-Carlo)
    adv1, _ = seat_gae(values, seats, dones, rewards, gamma=1.0, gae_lambda=1.0)
    np.testing.assert_allclose(adv1[:, 0], [0.8, -0.9, 0.4, -0.6], atol=1e-6)


def _engine(game: str, n: int, envs: int, reward_mode: str):
    return get_game(game).vector(num_envs=envs, num_players=n, seed=0, reward_mode=reward_mode)


def test_collected_actions_respect_the_masks_and_rewards_sum_to_zero():
    torch.manual_seed(0)
    net = TokenNet(d_model=16, heads=2, ff=16)
    # make illegal actions the most tempting ones: a mask that leaked would show at once
    with torch.no_grad():
        net.logit.bias.fill_(0.0)
    batch = collect(_engine("grinch", 2, 3, "win"), net, "grinch", np.random.default_rng(0))
    assert batch.games == 3 and batch.steps == len(batch.actions) == 3 * 84  # a 2-player Grinch game is 84 decisions
    assert batch.masks[np.arange(len(batch.actions)), batch.actions].all()
    # win reward at 2 players: each decision's return is its seat's +1 / -1 (or 0 in a tie); both seats of a game sum to 0
    assert set(np.unique(batch.outcomes)) <= {-1.0, 0.0, 1.0}
    assert batch.outcomes.sum() == 0.0


@pytest.mark.parametrize("game", ["grinch", "gnoming"])
def test_raw_dense_and_action_context_reach_the_action_mlp(game):
    """``raw_dense`` feeds each action token's dense columns to the action MLP as they are, ``action_context`` the
    encoded global and own-seat tokens: with every other input of the MLP's first layer zeroed, the logits move with the
    actions' dense columns only under raw_dense and with the global token only under action_context, and they tell
    actions apart only under raw_dense (the context is the same for every action)."""
    torch.manual_seed(0)
    engine = _engine(game, 3, 1, "margin")
    st, at = encode(game, engine.reset(seed=0)[0][:1])
    d = 16
    for raw, ctx in ((False, False), (True, False), (False, True), (True, True)):
        net = TokenNet(d_model=d, heads=2, ff=16, raw_dense=raw, action_context=ctx)
        first = net.action_mlp[0]
        assert first.in_features == (5 if ctx else 3) * d + (32 if raw else 0)
        assert net.config["raw_dense"] is raw and net.config["action_context"] is ctx
        with torch.no_grad():
            keep = torch.zeros(first.in_features, dtype=torch.bool)
            keep[3 * d:] = True  # the context tokens and the raw dense columns, whichever exist
            first.weight[:, ~keep] = 0
            base = net(st, at)[0]
            dense_moved = at.clone()
            dense_moved[0, :, 4] += 1.0  # every action's first dense column
            global_moved = st.clone()
            global_moved[0, 0, 4:] += 1.0  # the global token's dense columns
            # only an action's own columns tell actions apart: without raw_dense every logit is alike
            assert torch.allclose(base, base[:, :1].expand_as(base)) == (not raw)
            assert (not torch.allclose(net(st, dense_moved)[0], base)) == raw
            assert (not torch.allclose(net(global_moved, at)[0], base)) == ctx


@pytest.mark.parametrize("game", ["grinch", "gnoming"])
def test_action_card_ids_off_reads_what_an_action_does_not_which_card(game):
    """Without ``action_card_ids`` an action token's card columns do not reach its embedding: changing them leaves
    every output as it was, while the default network's logits move; the type, position and dense columns still count."""
    torch.manual_seed(0)
    st, at = encode(game, _engine(game, 3, 1, "margin").reset(seed=0)[0][:1])
    renamed = at.clone()
    renamed[..., 1] = (renamed[..., 1] + 7) % 50  # other card ids in the card and second-card columns
    renamed[..., 2] = (renamed[..., 2] + 3) % 50
    moved = at.clone()
    moved[..., 4] += 1.0  # the first dense column
    with torch.no_grad():
        off = TokenNet(d_model=16, heads=2, ff=16, action_card_ids=False)
        assert off.config["action_card_ids"] is False
        assert torch.equal(off(st, renamed)[0], off(st, at)[0])
        assert not torch.allclose(off(st, moved)[0], off(st, at)[0])
        on = TokenNet(d_model=16, heads=2, ff=16)
        assert not torch.allclose(on(st, renamed)[0], on(st, at)[0])


def test_ppo_update_raises_the_probability_of_an_advantaged_action():
    torch.manual_seed(0)
    net = TokenNet(d_model=16, heads=2, ff=16)
    cfg = load_config(None, ["game=grinch", "num_players=2", "minibatch_size=32", "learning_rate=0.01", "ppo.ent_coef=0"])
    batch = collect(_engine("grinch", 2, 1, "win"), net, "grinch", np.random.default_rng(1))
    rows = np.flatnonzero(batch.masks.sum(1) > 1)[:32]
    b = Batch(**{k: (v[rows] if isinstance(v, np.ndarray) else v) for k, v in batch.__dict__.items()})
    b.advantages = np.where(np.arange(len(rows)) % 2 == 0, 1.0, -1.0).astype(np.float32)  # reward the even rows' actions
    st, at = encode("grinch", b.obs)

    def logp():
        with torch.no_grad():
            logits = net(st, at)[0]
        dist = torch.distributions.Categorical(logits=torch.where(torch.from_numpy(b.masks.astype(bool)), logits, torch.tensor(-1e8)))
        return dist.log_prob(torch.from_numpy(b.actions)).numpy()

    before = logp()
    b.logprobs = before.astype(np.float32)
    for _ in range(3):
        ppo_update(net, torch.optim.Adam(net.parameters(), lr=cfg.learning_rate), b, cfg, np.random.default_rng(0))
    change = logp() - before
    assert change[::2].mean() > 0 > change[1::2].mean()


def _tiny(tmp_path, name: str = "ppo") -> list[str]:
    return ["game=grinch", "num_players=2", "num_envs=2", "minibatch_size=64", f"checkpoint_dir={tmp_path}",
            f"run_name={name}", "net.d_model=16", "net.heads=2", "net.ff=16", "eval.games=2", "eval.opponents=[random]"]


@pytest.mark.parametrize("shards", [1, 2])
def test_resume_is_exact(tmp_path, shards):
    kw = [f"shards={shards}"]
    straight = train(Trainer(load_config(None, _tiny(tmp_path / "a") + kw)), max_iterations=4, quiet=True)
    first = train(Trainer(load_config(None, _tiny(tmp_path / "b") + kw)), max_iterations=2, quiet=True)
    shutil.copytree(first.cfg.run_dir, tmp_path / "copy")
    resumed = train(Trainer.load(first.cfg.run_dir), max_iterations=4, quiet=True)
    assert resumed.iteration == straight.iteration == 4 and resumed.samples == straight.samples
    a, b = straight.net.state_dict(), resumed.net.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    oa, ob = straight.opt.state_dict()["state"], resumed.opt.state_dict()["state"]
    assert all(torch.equal(oa[i]["exp_avg"], ob[i]["exp_avg"]) for i in oa)
    assert straight.rng.bit_generator.state == resumed.rng.bit_generator.state
    assert straight.curve[-1] | {"wall_seconds": 0, "train_seconds": 0} == resumed.curve[-1] | {"wall_seconds": 0, "train_seconds": 0}
    assert (tmp_path / "b" / "ppo" / "curve.csv").read_text().count("\n") == 1 + len(resumed.curve)
    assert (tmp_path / "b" / "ppo" / "curve.png").stat().st_size > 0
    # a resume of a copied run goes on in the copy, to the same weights, and leaves the run it was copied from alone
    before = (tmp_path / "b" / "ppo" / "latest.pt").read_bytes()
    train(Trainer.load(tmp_path / "copy", [f"max_samples={straight.samples}"]), quiet=True)
    copy = Trainer.load(tmp_path / "copy")
    assert (copy.cfg.run_dir, copy.iteration) == (tmp_path / "copy", 4)
    assert all(torch.equal(a[k], copy.net.state_dict()[k]) for k in a)
    assert (tmp_path / "b" / "ppo" / "latest.pt").read_bytes() == before


def test_learning_rate_anneals_by_samples_and_resumes_exactly(tmp_path):
    """``learning_rate_final`` / ``anneal_samples``: the rate falls linearly with the learner samples and then holds;
    each update uses the rate at the samples before it; a run interrupted and resumed follows the same schedule to the
    same weights; the two keys go together."""
    from training.learner.run import learning_rate_at

    cfg = load_config(None, ["learning_rate=0.003", "learning_rate_final=0.0003", "anneal_samples=1000"])
    assert [learning_rate_at(cfg, n) for n in (0, 500, 1000, 5000)] == pytest.approx([0.003, 0.00165, 0.0003, 0.0003])
    assert learning_rate_at(load_config(None, ["learning_rate=0.003"]), 10**9) == 0.003
    anneal = ["learning_rate=0.003", "learning_rate_final=0.0003", "anneal_samples=400"]
    t = Trainer(load_config(None, _tiny(tmp_path / "s") + anneal))
    t.step()
    assert t.opt.param_groups[0]["lr"] == 0.003 and t.last_stats["learning_rate"] == 0.003
    before = t.samples
    assert 0 < before < 400
    t.step()
    assert t.opt.param_groups[0]["lr"] == pytest.approx(0.003 - 0.0027 * before / 400)
    straight = train(Trainer(load_config(None, _tiny(tmp_path / "a") + anneal)), max_iterations=4, quiet=True)
    first = train(Trainer(load_config(None, _tiny(tmp_path / "b") + anneal)), max_iterations=2, quiet=True)
    resumed = train(Trainer.load(first.cfg.run_dir), max_iterations=4, quiet=True)
    a, b = straight.net.state_dict(), resumed.net.state_dict()
    assert resumed.samples == straight.samples and all(torch.equal(a[k], b[k]) for k in a)
    plain = train(Trainer(load_config(None, _tiny(tmp_path / "c") + ["learning_rate=0.003"])), max_iterations=4, quiet=True).net.state_dict()
    assert not all(torch.equal(a[k], plain[k]) for k in a)  # the anneal, not the starting rate, changed the updates
    with pytest.raises(ValueError, match="learning_rate_final and anneal_samples set the learning rate's linear anneal together"):
        load_config(None, ["learning_rate_final=0.0003"])


def test_curve_lines_are_the_pairs_that_have_points():
    # a branch that drops sizes 4 and 5 and adds search at 3 only: greedy 3/4/5 before, greedy 3 and search 3 after
    point = lambda it, opp, n: {"iteration": it, "opponent": opp, "num_players": n, "win_share": 0.5, "half_width": 0.1}  # noqa: E731
    curve = [point(0, "greedy", 3), point(0, "greedy", 4), point(0, "greedy", 5), point(9, "greedy", 3), point(9, "search", 3)]
    lines = curve_series(curve)
    assert [(label, n, [r["iteration"] for r in rows]) for label, n, rows in lines] == [
        ("vs greedy 3p", 3, [0, 9]), ("vs greedy 4p", 4, [0]), ("vs greedy 5p", 5, [0]), ("vs search 3p", 3, [9])]
    one_size = [point(0, "random", 2), point(0, "greedy", 2), point(5, "random", 2)]
    assert [(label, [r["iteration"] for r in rows]) for label, _, rows in curve_series(one_size)] == [("vs random", [0, 5]), ("vs greedy", [0])]


def test_minutes_to_beat_is_the_first_point_whose_interval_clears_parity():
    point = lambda s, win, hw: {"train_seconds": s, "win_share": win, "half_width": hw}  # noqa: E731
    # 0.40 - 0.10 = 0.30 is under parity 1/3; 0.45 - 0.10 = 0.35 clears it (at 600 s: 10 min); the later dip does not undo it
    rows = [point(0, 0.20, 0.05), point(300, 0.40, 0.10), point(600, 0.45, 0.10), point(900, 0.30, 0.10)]
    assert minutes_to_beat(rows, 1 / 3) == 10.0
    assert minutes_to_beat(rows, 0.5) is None and minutes_to_beat(rows, None) is None
    assert minutes_to_beat([point(120, 0.5, 0.0)], 0.5) is None  # on parity is not above it


def test_learner_agent_plays_in_the_harness():
    from grinch_env.evaluation.evaluate import evaluate

    torch.manual_seed(0)
    agent = LearnerAgent(TokenNet(d_model=16, heads=2, ff=16), "gnoming")
    res = evaluate([agent, "random", "random"], num_players=3, num_games=3, seed=0, game="gnoming")
    assert res.per_agent[res.agents[0]]["seat_games"] == 3


def test_config_errors_name_the_key():
    with pytest.raises(ValueError, match="algoo"):
        load_config(None, ["algoo=ppo"])
    with pytest.raises(ValueError, match="num_players for Gnoming A Round must be an int in 3..7"):
        load_config(None, ["game=gnoming", "num_players=2"])
    with pytest.raises(ValueError, match="key=value"):
        load_config(None, ["algo"])
    with pytest.raises(ValueError, match="must divide"):
        load_config(None, ["net.d_model=30", "net.heads=4"])


def test_round_credit_pays_each_round_its_margin_and_adds_up_to_the_game():
    torch.manual_seed(0)
    net = TokenNet(d_model=16, heads=2, ff=16)
    # the same stream for the policy's samples: the same game twice
    whole = collect(_engine("gnoming", 3, 1, "margin"), net, "gnoming", np.random.default_rng(5), generator=torch.Generator().manual_seed(5))
    rounds = collect(_engine("gnoming", 3, 1, "margin"), net, "gnoming", np.random.default_rng(5), credit="round",
                     generator=torch.Generator().manual_seed(5))
    assert np.array_equal(whole.actions, rounds.actions) and whole.games == rounds.games == 1
    from grinch_env.gnoming import encoding as enc

    round_of = rounds.obs[:, enc.ROUND:enc.ROUND + 3].astype(np.float32).argmax(1)
    # a decision's seat is told apart by its game margin (the three differ in this game); within a round its outcome
    # is one number, and the three rounds' numbers add up to the game's margin
    sums = {}
    for v_round, r, v_game in zip(rounds.outcomes, round_of, whole.outcomes):
        sums.setdefault(float(v_game), {}).setdefault(int(r), set()).add(round(float(v_round), 6))
    assert len(sums) == 3  # the three seats' (distinct) game margins
    for game_margin, by_round in sums.items():
        assert sorted(by_round) == [0, 1, 2] and all(len(v) == 1 for v in by_round.values())
        assert sum(next(iter(v)) for v in by_round.values()) == pytest.approx(game_margin, abs=1e-5)


def test_one_run_trains_and_reports_on_several_table_sizes(tmp_path, monkeypatch):
    cfg = load_config(None, _tiny(tmp_path, "ppo") + ["num_players=[2, 3]", "eval.final_games=2"])
    assert cfg.table_sizes == [2, 3]
    trainer = Trainer(cfg)
    assert list(ShardPlayer(cfg).engine.num_players) == [2, 3]  # slot i plays the i-th size (cyclically)
    train(trainer, max_iterations=1, quiet=True)
    assert [(r["iteration"], r["num_players"]) for r in trainer.curve] == [(0, 2), (0, 3), (1, 2), (1, 3)]
    header, *rows = (tmp_path / "ppo" / "curve.csv").read_text().splitlines()
    assert "num_players" in header.split(",") and len(rows) == 4
    out = final_report(trainer, games=2)
    assert sorted(out) == ["random@2p", "random@3p"]
    assert (out["random@2p"]["parity"], out["random@3p"]["parity"]) == (0.5, pytest.approx(1 / 3))
    assert sorted(p.name for p in (tmp_path / "ppo" / "report").iterdir()) == ["summary.json", "vs_random_2p.txt", "vs_random_3p.txt"]
    # a report evaluates a run directory wherever it was copied to, writes the report there, and takes overrides for its opponents
    shutil.copytree(tmp_path / "ppo", tmp_path / "copy", ignore=shutil.ignore_patterns("report"))
    final_report(Trainer.load(tmp_path / "copy", ["eval.final_opponents=[greedy]"]), games=2)
    copied = json.loads((tmp_path / "copy" / "report" / "summary.json").read_text())
    assert sorted(copied) == ["greedy@2p", "greedy@3p"] and copied["greedy@3p"]["games"] == 2
    # a second report into the same directory adds its matches and keeps the earlier ones
    final_report(Trainer.load(tmp_path / "copy", ["eval.final_opponents=[random]", "num_players=[3, 2]"]), games=3)
    merged = json.loads((tmp_path / "copy" / "report" / "summary.json").read_text())
    assert sorted(merged) == ["greedy@2p", "greedy@3p", "random@2p", "random@3p"]
    assert [merged[k]["games"] for k in sorted(merged)] == [2, 2, 3, 3]
    assert sorted(json.loads((tmp_path / "ppo" / "report" / "summary.json").read_text())) == ["random@2p", "random@3p"]
    # a report stopped part-way keeps the matches it finished
    import grinch_env.evaluation.evaluate as evaluation
    real, calls = evaluation.evaluate, []

    def stopped_at_the_second(*args, **kwargs):
        calls.append(kwargs["num_players"])
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    (tmp_path / "ppo" / "report" / "summary.json").unlink()
    monkeypatch.setattr(evaluation, "evaluate", stopped_at_the_second)
    with pytest.raises(KeyboardInterrupt):
        final_report(trainer, games=2)
    assert calls == [2, 3] and json.loads((tmp_path / "ppo" / "report" / "summary.json").read_text()) == {"random@2p": out["random@2p"]}


def test_table_size_lists_are_checked():
    with pytest.raises(ValueError, match="num_players for Gnoming A Round must be an int in 3..7"):
        load_config(None, ["game=gnoming", "num_players=[3, 8]", "num_envs=32"])
    with pytest.raises(ValueError, match="lists a table size twice"):
        load_config(None, ["game=gnoming", "num_players=[3, 3]", "num_envs=32"])
    with pytest.raises(ValueError, match=r"num_envs \(32\) must be a multiple of the number of table sizes \(5\)"):
        load_config(None, ["game=gnoming", "num_players=[3, 4, 5, 6, 7]", "num_envs=32"])


def test_a_checkpoint_with_retired_options_still_loads_and_a_dmc_one_says_why_not(tmp_path):
    """Older checkpoints store ``algo: ppo``, a ``dmc:`` section and ``ppo.vine_*`` keys: the trainer and the agent loader
    drop them; a Deep Monte-Carlo run (``algo: dmc``, whose network learned Q only) is refused, saying why."""
    from training.checkpoint import atomic_torch_save
    from training.learner.search import load_learner_agent

    trainer = Trainer(load_config(None, _tiny(tmp_path)))
    state = trainer.state()
    state["config"] = {**state["config"], "algo": "ppo", "dmc": {"epsilon_start": 0.2, "td_lambda": 1.0},
                       "ppo": {**state["config"]["ppo"], "vine_pairs": 0, "vine_coef": 1.0, "vine_form": "logistic"}}
    atomic_torch_save(state, tmp_path / "old" / "latest.pt")
    loaded = Trainer.load(tmp_path / "old", ["workers=2"])
    assert loaded.cfg.run_dir == tmp_path / "old" and loaded.cfg.workers == 2 and loaded.cfg.shards == 1
    assert all(torch.equal(v, loaded.net.state_dict()[k]) for k, v in trainer.net.state_dict().items())
    assert load_learner_agent(tmp_path / "old").act_batch is not None
    state["config"]["algo"] = "dmc"
    atomic_torch_save(state, tmp_path / "dmc" / "latest.pt")
    with pytest.raises(ValueError, match=r"algo='dmc' \(Deep Monte-Carlo\), a retired family"):
        Trainer.load(tmp_path / "dmc")
    with pytest.raises(ValueError, match=r"a run of algo 'dmc' \(Deep Monte-Carlo\), a retired family"):
        load_learner_agent(tmp_path / "dmc")
    with pytest.raises(ValueError, match="dmc"):  # a config file of the retired family is refused outright
        load_config(None, ["dmc.td_lambda=0.5"])

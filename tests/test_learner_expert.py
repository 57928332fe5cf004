"""Expert iteration with the learned network (training/learner/expert.py): exact resume, distillation, the checkpoint as an agent."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import torch

from grinch_env.agents import make_agent
from training.learner.expert import ExpertRun, anchor_kl, load_config, main, soft_target_loss, train
from training.learner.rollout import greedy_actions

TINY = ["init=null", "net.d_model=16", "net.heads=2", "net.ff=32", "games_per_generation=1", "label_fraction=0.1", "search.samples=2",
        "search.top_k=2", "search.horizon=1", "epochs=1", "eval_games=0", "generations=2"]


def _cfg(tmp_path, name: str, extra: list[str] | None = None):
    return load_config("configs/learner_gnoming_expert.yaml", TINY + [f"checkpoint_dir={tmp_path}", f"run_name={name}"] + (extra or []))


@pytest.mark.parametrize("extra", [[], ["target=soft", "kl_coef=0.5"]])
def test_resume_continues_exactly(tmp_path, extra):
    straight = train(ExpertRun(_cfg(tmp_path, "a", extra)), quiet=True)
    first = train(ExpertRun(_cfg(tmp_path, "b", extra)), generations=1, quiet=True)
    assert first.generation == 1
    shutil.copytree(tmp_path / "b", tmp_path / "copy")
    resumed = train(ExpertRun.load(tmp_path / "b"), quiet=True)
    assert resumed.generation == straight.generation == 2
    for k, v in straight.net.state_dict().items():
        assert torch.equal(v, resumed.net.state_dict()[k]), k
    drop = ("cpu_seconds", "wall_seconds")
    assert [{k: v for k, v in r.items() if k not in drop} for r in straight.log] == [{k: v for k, v in r.items() if k not in drop} for r in resumed.log]
    assert all(r["labels"] > 0 and r["decisions"] > r["labels"] for r in straight.log)
    copy = train(ExpertRun.load(tmp_path / "copy"), quiet=True)  # a copied run goes on in its copy, to the same network
    assert (copy.cfg.run_dir, copy.generation) == (tmp_path / "copy", 2)
    assert all(torch.equal(v, copy.net.state_dict()[k]) for k, v in straight.net.state_dict().items())


def test_distillation_fits_the_search_labels(tmp_path):
    """On 16 fixed positions labelled with one of their legal actions each, distillation makes it the network's choice at each."""
    from grinch_env.games import get_game

    run = ExpertRun(_cfg(tmp_path, "d", ["epochs=300", "minibatch_size=16", "learning_rate=0.003"]))
    engine = get_game("gnoming").vector(num_envs=16, num_players=3, seed=1)
    obs, mask, _ = engine.reset(seed=1)
    rng = np.random.default_rng(0)
    for _ in range(40):  # random play, to positions that differ
        obs, mask, _, _, _ = engine.step((rng.random(mask.shape) * mask).argmax(1))
    labels = np.array([np.flatnonzero(m)[i % int(m.sum())] for i, m in enumerate(mask)], np.int64)
    assert (mask.sum(1) >= 2).all() and len(set(labels.tolist())) >= 3
    data = {"obs": obs.astype(np.float16), "masks": mask.astype(np.int8), "labels": labels, "targets": np.zeros(16, np.float32)}
    before = greedy_actions(run.net, "gnoming", "ppo", obs, mask)
    assert not np.array_equal(before, labels)
    stats = run.distil(data)
    assert np.array_equal(greedy_actions(run.net, "gnoming", "ppo", obs, mask), labels)
    assert stats["label_agreement"] > 0.5


def test_the_soft_target_and_the_anchor_kl_on_hand_made_logits():
    # actions 0..3, logits 0, 0, ln 3, 0; the search's candidates 2 and 0 with mean values 0.1 and 0.0, temperature 0.1:
    # target softmax(1, 0) = (0.731059, 0.268941); the policy over {2, 0} is (3/4, 1/4);
    # cross-entropy = 0.731059 * ln(4/3) + 0.268941 * ln 4 = 0.210318 + 0.372830 = 0.583148
    logits = torch.tensor([[0.0, 0.0, float(np.log(3.0)), 0.0]])
    loss = soft_target_loss(logits, torch.tensor([[2, 0, -1]]), torch.tensor([[0.1, 0.0, 5.0]]), 0.1)
    assert loss.item() == pytest.approx(0.583148, abs=1e-5)
    # the anchor uniform over the legal actions 0 and 2, the policy (1/4, 3/4) there: KL = 0.5 ln(0.5/0.25) + 0.5 ln(0.5/0.75)
    mask = torch.tensor([[True, False, True, False]])
    kl = anchor_kl(torch.zeros(1, 4), logits, mask)
    assert kl.item() == pytest.approx(0.5 * np.log(2.0) + 0.5 * np.log(2.0 / 3.0), abs=1e-6)  # 0.143841
    assert anchor_kl(logits, logits, mask).item() == pytest.approx(0.0, abs=1e-7)


def _labelled_positions(run_seed: int = 1):
    from grinch_env.games import get_game

    engine = get_game("gnoming").vector(num_envs=16, num_players=3, seed=run_seed)
    obs, mask, _ = engine.reset(seed=run_seed)
    rng = np.random.default_rng(0)
    for _ in range(40):
        obs, mask, _, _, _ = engine.step((rng.random(mask.shape) * mask).argmax(1))
    return obs, mask


def test_soft_targets_order_the_candidates_and_the_anchor_holds_the_rest(tmp_path):
    """Each position's two candidates: the network's last-ranked legal action valued 0.05 above its first-ranked. Soft
    distillation turns the pair around at every position; with the KL term the policy ends nearer the anchor."""
    from training.learner.rollout import encode

    obs, mask = _labelled_positions()
    legal = torch.from_numpy(mask.astype(bool))
    st, at = encode("gnoming", obs)
    kls = {}
    for kl_coef in (0.0, 5.0):
        run = ExpertRun(_cfg(tmp_path, f"s{kl_coef}", ["epochs=150", "minibatch_size=16", "learning_rate=0.003", "target=soft",
                                                       "temperature=0.01", f"kl_coef={kl_coef}"]))
        with torch.no_grad():
            logits, _, _ = run.net(st, at)
        first, last = logits.masked_fill(~legal, -1e9).argmax(1), (-logits).masked_fill(~legal, -1e9).argmax(1)
        assert (first != last).all()
        cands = torch.stack([last, first], 1).numpy()
        data = {"obs": obs.astype(np.float16), "masks": mask.astype(np.int8), "labels": cands[:, 0].copy(),
                "targets": np.zeros(16, np.float32), "cands": cands, "cand_values": np.tile(np.array([[0.05, 0.0]], np.float32), (16, 1))}
        stats = run.distil(data)
        with torch.no_grad():
            after, _, _ = run.net(st, at)
        rows = torch.arange(16)
        assert (after[rows, last] > after[rows, first]).all()
        assert (stats["anchor_kl"] > 0) == (kl_coef > 0)
        kls[kl_coef] = anchor_kl(logits, after, legal).item()
    assert kls[5.0] < kls[0.0]


def test_the_checkpoint_is_a_harness_agent_and_bad_input_is_refused(tmp_path, capsys):
    run = train(ExpertRun(_cfg(tmp_path, "h", ["generations=1"])), quiet=True)
    agent = make_agent(str(tmp_path / "h"), num_players=3, game="gnoming")
    searched = make_agent(f"{tmp_path / 'h'}:search=1,samples=2,top_k=1", num_players=3, game="gnoming")
    from grinch_env.games import get_game

    engine = get_game("gnoming").vector(num_envs=4, num_players=3, seed=2)
    obs, mask, _ = engine.reset(seed=2)
    want = greedy_actions(run.net, "gnoming", "ppo", obs, mask)
    assert np.array_equal(agent.act_batch(obs, mask), want) and np.array_equal(searched.act_batch(obs, mask), want)
    with pytest.raises(ValueError, match="games_per_generation\n  Input should be greater than or equal to 1"):
        load_config("configs/learner_gnoming_expert.yaml", ["games_per_generation=0"])
    with pytest.raises(ValueError, match="Extra inputs are not permitted"):
        load_config("configs/learner_gnoming_expert.yaml", ["samples=3"])
    with pytest.raises(ValueError, match="search.horizon must be an int >= 0, 'round' or 'end', got 'turn'"):
        load_config("configs/learner_gnoming_expert.yaml", ["search.horizon=turn"])
    assert main(["--config", "configs/learner_gnoming_expert.yaml", "--set", f"checkpoint_dir={tmp_path}", "--set", "run_name=h"]) == 2
    assert f"{tmp_path / 'h' / 'latest.pt'} exists" in capsys.readouterr().err
    assert main(["--resume", str(tmp_path / "nothing")]) == 2
    assert "cannot resume" in capsys.readouterr().err


def test_against_an_opponent_only_the_learners_seat_is_recorded_and_workers_change_nothing(tmp_path):
    """League setting: the network plays seat index % n against copies of the opponent.  The data are exactly the
    network's decisions with a choice in the game its seed deals (replayed here by hand), and the same with 2 workers."""
    from grinch_env.games import get_game
    from training.learner.expert import play_game
    from training.learner.rollout import encode

    extra = ["opponent=greedy", "learner_play=greedy", "label_fraction=0.5", "games_per_generation=2"]
    run = ExpertRun(_cfg(tmp_path, "l", extra))
    data = play_game(run.net, run.cfg, 1, 3, 77)
    # by hand: seat 1 is the network (its first choice), seats 0 and 2 greedy agents seeded from the game's stream
    spec = get_game("gnoming")
    rng = np.random.default_rng(77)
    agents = {}
    for s in (0, 2):
        agents[s] = make_agent("greedy", num_players=3, game="gnoming", seed=int(rng.integers(2**31)))
        agents[s].reset(int(rng.integers(2**31)))
    game = spec.new_game(3, int(rng.integers(2**62)))
    encoder = spec.encoder()
    mine = []
    while not game.done:
        view = encoder.observe(game, game.current)
        obs, mask = view["observation"], np.asarray(view["action_mask"]).astype(bool)
        if game.current != 1:
            game.step(int(agents[game.current].act(obs, mask)))
            continue
        st, at = encode("gnoming", obs[None])
        with torch.no_grad():
            logits, _, _ = run.net(st, at)
        action = int(np.flatnonzero(mask)[0]) if mask.sum() < 2 else int(logits[0].masked_fill(~torch.from_numpy(mask), -1e9).argmax())
        if mask.sum() >= 2:
            mine.append(obs.astype(np.float16))
        game.step(action)
    assert len(mine) == len(data["labels"]) > 10
    assert np.array_equal(np.stack(mine), data["obs"])
    labelled = data["labels"] >= 0
    assert 0 < labelled.sum() < len(labelled)
    assert (data["masks"][labelled, data["labels"][labelled]] == 1).all()  # every label is legal
    one = ExpertRun(_cfg(tmp_path, "w1", extra)).play()
    two = ExpertRun(_cfg(tmp_path, "w2", extra + ["workers=2"])).play()
    assert one.keys() == two.keys() and all(np.array_equal(one[k], two[k]) for k in one)
    league = load_config("configs/learner_gnoming_expert_league.yaml")
    assert (league.opponent, league.learner_play, league.num_players, league.search.horizon) == ("search", "greedy", 5, "round")
    with pytest.raises(ValueError, match="opponent 'nobody' is not an agent of Gnoming A Round"):
        load_config("configs/learner_gnoming_expert.yaml", ["opponent=nobody"])


def test_the_grinch_plays_a_league_generation_with_the_margin_still_to_come_as_value_target(tmp_path):
    """The Grinch's value head (pad credit) predicts the margin still to come on top of the banked score pads: each
    decision's value target is the deciding seat's final margin minus the margin its pads had banked at the decision."""
    from grinch_env.games import get_game
    from training.learner.expert import play_game

    cfg = load_config("configs/learner_grinch_expert_league.yaml", TINY + [f"checkpoint_dir={tmp_path}", "learner_play=greedy"])
    assert (cfg.game, cfg.num_players, cfg.opponent, cfg.credit) == ("grinch", 2, "greedy", "pad")
    run = ExpertRun(cfg)
    data = play_game(run.net, cfg, 0, 2, 5)
    assert len(data["labels"]) > 10 and (data["labels"] >= 0).any()
    # the same game replayed by hand (seat 0 the network's first choice, seat 1 greedy): every target is seat 0's
    # final margin reward
    from training.learner.rollout import encode

    spec = get_game("grinch")
    rng = np.random.default_rng(5)
    greedy = make_agent("greedy", num_players=2, game="grinch", seed=int(rng.integers(2**31)))
    greedy.reset(int(rng.integers(2**31)))
    game = spec.new_game(2, int(rng.integers(2**62)))
    encoder = spec.encoder()
    banked = []
    while not game.done:
        view = encoder.observe(game, game.current)
        obs, mask = view["observation"], np.asarray(view["action_mask"]).astype(bool)
        if game.current == 1:
            game.step(int(greedy.act(obs, mask)))
            continue
        if mask.sum() >= 2:  # a recorded decision: seat 0's pads as they stand, (own total - the other's) / 100
            banked.append((game.totals[0] - game.totals[1]) / 100)
        st, at = encode("grinch", obs[None])
        with torch.no_grad():
            logits, _, _ = run.net(st, at)
        game.step(int(logits[0].masked_fill(~torch.from_numpy(mask), -1e9).argmax()))
    final = (game.totals[0] - game.totals[1]) / 100
    assert final == game.rewards("margin")[0] and len(banked) == len(data["targets"]) and len(set(banked)) >= 3
    assert data["targets"].tolist() == [np.float32(final - b) for b in banked]


def test_the_grinch_search_reads_the_networks_credit_and_a_mismatched_init_is_refused(tmp_path):
    """A pad-credit value head predicts the margin still to come: the expert's search must add the banked pads at its
    round-end leaves, as the harness's search of the same checkpoint does (a search that read it as the game's margin
    ignored every point the round banks), and an init network whose credit differs from the config's is refused."""
    from grinch_env.games import get_game
    from training.learner.search import NetSearch

    cfg = load_config("configs/learner_grinch_expert_league.yaml", TINY + [f"checkpoint_dir={tmp_path}", "run_name=pad", "generations=1",
                                                                         "search.horizon=round"])
    run = train(ExpertRun(cfg), quiet=True)
    agent = make_agent(f"{tmp_path / 'pad'}:search=1,samples=2,top_k=2,horizon=round", num_players=2, game="grinch", seed=0)
    spec = get_game("grinch")
    game = spec.new_game(2, 11)
    for _ in range(5):  # into the round: the searcher's pads bank at the round's end inside every rollout
        game.step(int(np.flatnonzero(np.frombuffer(bytes(game.legal_mask()), np.int8))[0]))
    view = spec.encoder().observe(game, game.current)
    obs, mask = view["observation"], np.asarray(view["action_mask"]).astype(bool)
    ours = NetSearch(run.net, "grinch", "ppo", run.cfg.credit, "margin", 2, 2, "round")
    ours.choose(obs, mask, np.random.default_rng(3))
    agent.search.choose(obs, mask, np.random.default_rng(3))
    assert ours.last["values"] == agent.search.last["values"] and len(ours.last["values"]) == 2
    game_credit = NetSearch(run.net, "grinch", "ppo", "game", "margin", 2, 2, "round")
    game_credit.choose(obs, mask, np.random.default_rng(3))
    assert game_credit.last["values"] != ours.last["values"]
    with pytest.raises(ValueError, match=f"init '{tmp_path / 'pad'}' was trained with credit='pad' .* not 'game': set credit: pad"):
        ExpertRun(load_config("configs/learner_grinch_expert_league.yaml", TINY + [f"checkpoint_dir={tmp_path}", f"init={tmp_path / 'pad'}",
                                                                                   "credit=game"]))
    with pytest.raises(ValueError, match="credit='pad' needs game=grinch and reward_mode=margin"):
        load_config("configs/learner_gnoming_expert.yaml", ["credit=pad"])
    own = torch.load(tmp_path / "pad" / "latest.pt", weights_only=False)  # a network whose value head predicts own points
    own["config"]["pad_others"] = 0.5
    torch.save(own, tmp_path / "own.pt")
    with pytest.raises(ValueError, match="was trained with pad_others=0.5 .* expert iteration needs pad_others 1"):
        ExpertRun(load_config("configs/learner_grinch_expert_league.yaml", TINY + [f"checkpoint_dir={tmp_path}", f"init={tmp_path / 'own.pt'}"]))


def test_the_grinch_expert_config_starts_from_the_afterstate_recipes_run():
    """configs/learner_grinch_expert.yaml: self-play from the network configs/learner_grinch_afterstate.yaml trains (its
    run directory), searched and valued as that network's pad credit."""
    from training.learner.config import load_config as learner_config

    cfg = load_config("configs/learner_grinch_expert.yaml")
    first = learner_config("configs/learner_grinch_afterstate.yaml")
    assert cfg.init == str(first.run_dir) == "checkpoints/learner_grinch_afterstate"
    assert (cfg.game, cfg.num_players, cfg.opponent, cfg.credit, cfg.reward_mode) == ("grinch", 2, None, "pad", "margin")
    assert (first.game, first.num_players, first.credit, first.reward_mode, first.net.afterstate_head) == ("grinch", 2, "pad", "margin", 128)
    assert (cfg.search.samples, cfg.search.top_k, cfg.search.horizon, cfg.target, cfg.label_fraction) == (8, 3, "round", "choice", 1.0)


def _burn(seconds: float) -> None:
    import time

    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_the_cpu_count_takes_in_the_workers_and_the_run_writes_its_curve(tmp_path):
    """A generation's workers are other processes: their CPU is in the run's seconds (the curve's x axis) once joined.
    The curve starts at generation 0 (the starting network) and adds a row per generation, in the learner's format."""
    import csv
    import multiprocessing
    import time

    from training.learner.expert import _cpu_seconds

    before, own = _cpu_seconds(), time.process_time()
    child = multiprocessing.get_context("spawn").Process(target=_burn, args=(0.5,))
    child.start()
    child.join()
    assert _cpu_seconds() - before >= 0.5 and time.process_time() - own < 0.25

    run = train(ExpertRun(_cfg(tmp_path, "c", ["eval_games=6", "workers=2", "games_per_generation=2"])), quiet=True)
    with open(tmp_path / "c" / "curve.csv") as f:
        rows = list(csv.DictReader(f))
    assert [(r["iteration"], r["opponent"], r["num_players"]) for r in rows] == [("0", "greedy", "3"), ("1", "greedy", "3"), ("2", "greedy", "3")]
    assert [int(r["samples"]) for r in rows] == [0, run.log[1]["decisions"], run.log[1]["decisions"] + run.log[2]["decisions"]]
    assert [int(r["games"]) for r in rows] == [0, 2, 4]
    assert [float(r["train_seconds"]) for r in rows] == [r["cpu_seconds"] for r in run.log]
    assert [float(r["win_share"]) for r in rows] == [r["vs_greedy_3p"][0] for r in run.log]
    assert 0 < run.log[1]["cpu_seconds"] < run.log[2]["cpu_seconds"] and 0 < run.log[1]["wall_seconds"] < run.log[2]["wall_seconds"]
    assert all(0 < r["entropy"] and r["explained_variance"] <= 1 for r in run.log[1:])
    assert (tmp_path / "c" / "curve.png").stat().st_size > 10_000

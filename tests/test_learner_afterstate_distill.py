"""The ``distill`` stage of the Grinch's afterstate run (training.learner.afterstate_distill): which discards it records and
with what worth, that the fine-tuning learns a known preference, exact resume, the cache, and the config's errors."""

import numpy as np
import pytest
import torch

from grinch_env.agents import make_agent
from training.learner.afterstate import NUM_FEATURES, Value, mlp
from training.learner.afterstate_distill import SEED_STREAM, agreement, distill, look_of, looked_ahead, play_game
from training.learner.afterstate_run import AfterstateRun, DistillSection, explorer_of, game_seeds, load_config, train
from training.train import main

TINY = ["games_per_generation=6", "value.steps=30", "value.width=16", "later.steps=30", "later.width=8", "eval_games=2", "final_games=0",
        "generations=1", "distill.games=4", "distill.steps=20", "distill.held_out=0.5"]


def _tiny(tmp_path, *extra: str):
    return load_config(None, [f"checkpoint_dir={tmp_path}", *TINY, *extra])


def _weights(run: AfterstateRun) -> list[np.ndarray]:
    return [t.numpy() for f in run.fitted for part in ("value", "later") for t in f[part]["model"].values()]


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    """One tiny run's first fit (its explorer and look-ahead play the stage's games)."""
    run = train(AfterstateRun(load_config(None, [f"checkpoint_dir={tmp_path_factory.mktemp('fit')}", *TINY[:7], "generations=1"])), quiet=True)
    return run.fitted[0]


def test_a_game_records_every_legal_afterstate_of_the_discards_the_lookahead_values(fitted):
    explorer, look = explorer_of(fitted, 1.0, "random"), look_of(fitted)
    rec = play_game(explorer, look, 2, seed=11)
    # 2 players, 6 rounds: each seat's last discard of each round (a 6-card hand: 6 afterstates) and the Who's second
    # discard of each round (5 cards: 5 afterstates); no other discard is the look-ahead's own
    assert sorted(rec["kind"].tolist()) == [4] * 6 + [5] * 12
    per_decision = np.bincount(rec["decision"])
    assert per_decision.tolist() == [6 if k == 5 else 5 for k in rec["kind"]] and len(rec["y"]) == 12 * 6 + 6 * 5 == 102
    assert rec["x"].shape == (102, NUM_FEATURES) and np.all(np.diff(rec["decision"]) >= 0)
    # a kept 5-card hand's afterstate holds 5 cards (the suit x rank counts are /2), a kept 4-card hand's 4
    kept = rec["x"][:, :24].sum(1) * 2
    assert kept.tolist() == [5.0 if rec["kind"][d] == 5 else 4.0 for d in rec["decision"]]
    # the same game replayed from its seed, the worths are the look-ahead's of the same positions: the records are a function of the seed
    again = play_game(explorer_of(fitted, 1.0, "random"), look_of(fitted), 2, seed=11)
    assert all(np.array_equal(rec[k], again[k]) for k in rec)


def test_looked_ahead_names_a_rounds_last_discard_and_a_whos_second():
    from grinch_env.games import get_game
    from grinch_env.grinch import encoding as enc

    spec = get_game("grinch")
    game, encoder = spec.new_game(2, 3), spec.encoder()
    seen, rng = [], np.random.default_rng(0)
    while game.round == 0:
        view = encoder.observe(game, game.current)
        obs, mask = np.asarray(view["observation"], np.float32), np.asarray(view["action_mask"]).astype(bool)
        if mask[:48].any():
            seen.append((int(obs[:48].sum()), bool(obs[enc.GRINCH_SEAT] > 0.5), looked_ahead(obs, mask)))
        game.step(int(rng.choice(np.flatnonzero(mask))))
    # each discard decision of round 0: (hand size, the Grinch's?, kept size the look-ahead values it at or 0)
    for size, grinch, kind in seen:
        assert kind == (5 if size == 6 else 4 if size == 5 and not grinch else 0)
    assert {(s, g) for s, g, _ in seen} >= {(6, True), (6, False), (5, False), (5, True)}


def test_distill_teaches_v_the_lookahead_preference_and_keeps_the_monte_carlo_targets():
    torch.manual_seed(0)
    base = Value(mlp(4, 16), 10.0, 2.0)
    rng = np.random.default_rng(0)
    # 200 decisions of 2 afterstates; the look-ahead values the one whose first input is 0 at 13 points, the other at 10
    x = rng.uniform(-1, 1, (400, 4)).astype(np.float32)
    x[:, 0] = np.tile([1.0, 0.0], 200)
    y = (10.0 + 3.0 * (1 - x[:, 0])).astype(np.float32)
    look = {"x": x, "y": y, "decision": np.repeat(np.arange(200), 2), "kind": np.full(200, 5)}
    mc_x = rng.uniform(-1, 1, (500, 4)).astype(np.float32)
    mc_y = base(mc_x).astype(np.float32)  # the Monte Carlo targets: what base already says
    cfg = DistillSection(games=2, steps=400, batch_size=64, learning_rate=3e-3, held_out=0.25)
    tuned, stats = distill(base, mc_x, mc_y, look, cfg, seed=0)
    assert stats["agree_before"] < 0.5 and stats["agree"] == 1.0 and stats["lost"] == 0.0
    assert stats["lost_before"] == pytest.approx(3.0 * (1 - stats["agree_before"]))  # each disagreement loses the 3 points
    assert (tuned.mu, tuned.sd) == (10.0, 2.0) and stats["mc_explained_variance_before"] == 1.0
    assert agreement(tuned, x[300:], y[300:], look["decision"][300:]) == (1.0, 0.0)  # the held-out quarter: decisions 150..199
    with pytest.raises(ValueError, match="leave none to train on with held_out 0.25: play more distill games"):
        distill(base, mc_x, mc_y, {k: v[:2] for k, v in look.items()}, cfg, seed=0)


def test_the_stage_is_one_more_generation_and_resumes_exactly(tmp_path):
    straight = train(AfterstateRun(_tiny(tmp_path / "a")), quiet=True)
    assert straight.generation == 2 and straight.distilled and straight.cfg.stages == 2
    last, before = straight.fitted[1], straight.fitted[0]
    assert last["later"] is before["later"]  # W (and G, had it one) the last fit's own
    assert not all(torch.equal(last["value"]["model"][k], before["value"]["model"][k]) for k in before["value"]["model"])
    assert last["distilled"] == {"games": 4, "steps": 20, "batch_size": 256, "learning_rate": 3e-4, "held_out": 0.5, "seed": None, "from_generation": 0}
    row = straight.log[-1]
    assert row["generation"] == 1 and row["distilled"] is True and row["games"] == 4 and row["decisions"] == 4 * 18 and row["records"] == 4 * 102
    curve = [line.split(",") for line in (straight.cfg.run_dir / "curve.csv").read_text().splitlines()[1:]]
    assert [c[:3] for c in curve] == [["0", "0", "0"], ["1", "216", "6"], ["2", str(216 + 408), "10"]]  # random, the fit, the stage
    assert float(curve[-1][9]) == row["mc_explained_variance_after"]
    data = dict(np.load(straight.cfg.run_dir / "data" / "distill.npz"))
    assert data["seeds"].tolist() == straight.distill_seeds() == game_seeds(1, SEED_STREAM, 4)  # the run's seed + 1
    # in pieces: the fits, then (resumed) the stage; the same weights
    first = train(AfterstateRun(_tiny(tmp_path / "b")), generations=1, quiet=True)
    assert first.generation == 1 and not first.distilled
    resumed = train(AfterstateRun.load(first.cfg.run_dir), quiet=True)
    assert all(np.array_equal(a, b) for a, b in zip(_weights(straight), _weights(resumed), strict=True))
    # the stage's records are a cache: played again (by two workers) from the checkpoint's values, they are the same
    (straight.cfg.run_dir / "data" / "distill.npz").unlink()
    straight.cfg.workers = 2
    again = straight.distill_records()
    assert data.keys() == again.keys() and all(np.array_equal(data[k], again[k]) for k in data)
    # the agent is the distilled generation, its W and G the last fit's
    agent = make_agent(str(straight.cfg.run_dir), num_players=2, game="grinch")
    assert agent.name == "learner_grinch_afterstate_value/g1"
    # the stage added on resume to a run without it: the same weights as a run that had it from the start
    fits = train(AfterstateRun(_tiny(tmp_path / "c", "distill=null")), quiet=True)
    assert fits.generation == 1 and fits.cfg.stages == 1
    added = train(AfterstateRun.load(fits.cfg.run_dir, ["distill.games=4", "distill.steps=20", "distill.held_out=0.5"]), quiet=True)
    assert added.distilled and all(np.array_equal(a, b) for a, b in zip(_weights(straight), _weights(added), strict=True))


def test_a_distilled_run_ends_with_its_distillation_and_bad_configs_say_what_is_allowed(tmp_path):
    run = train(AfterstateRun(_tiny(tmp_path)), quiet=True)
    with pytest.raises(ValueError, match=r"the run ends with its distillation of generation 0's fit .*: its generations \(1\) and distill cannot change"):
        AfterstateRun.load(run.cfg.run_dir, ["generations=3"])
    with pytest.raises(ValueError, match="its generations \\(1\\) and distill cannot change"):
        AfterstateRun.load(run.cfg.run_dir, ["distill.steps=40"])
    assert AfterstateRun.load(run.cfg.run_dir, ["eval_games=4"]).generation == 2  # the evaluation's keys may change
    assert main(["--resume", str(run.cfg.run_dir)]) == 0  # nothing left to do
    plain = train(AfterstateRun(_tiny(tmp_path / "plain", "generations=2", "distill=null")), quiet=True)
    with pytest.raises(ValueError, match="the run holds 2 fitted generations, more than generations 1: .* set generations=2"):
        AfterstateRun.load(plain.cfg.run_dir, ["generations=1", "distill={}"])
    with pytest.raises(ValueError, match="distill is the Grinch's .* leave distill out"):
        load_config(None, ["game=gnoming", "num_players=3", "distill={}"])
    with pytest.raises(ValueError, match="distill.games"):
        load_config(None, ["distill.games=1"])
    with pytest.raises(ValueError, match=r"--set seed.games: seed is 0, not a section with keys"):
        load_config(None, ["seed=0", "seed.games=3"])
    with pytest.raises(ValueError, match="gamez"):
        load_config(None, ["distill.gamez=10"])

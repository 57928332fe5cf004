"""The learner against fixed opponents (``opponents:`` in a learner config): who plays which seat, what is learned from, resume."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import yaml

from grinch_env.games import get_game
from training.learner.config import load_config
from training.learner.net import TokenNet
from training.learner.rollout import ShardPlayer, Tables, collect, shard_opponent_slots
from training.learner.run import Trainer, train


class StepLog:
    """The batched engine, logging every step's seats, actions and active slots."""

    def __init__(self, engine) -> None:
        self.engine = engine
        self.num_envs = engine.num_envs
        self.reward_mode = engine.reward_mode
        self.num_players = engine.num_players
        self.seats: list[np.ndarray] = []
        self.actions: list[np.ndarray] = []
        self.active: list[np.ndarray] = []
        self._active = np.ones(engine.num_envs, bool)

    def reset(self, seed=None):
        obs, mask, seat = self.engine.reset(seed=seed)
        self._seat = seat.copy()
        return obs, mask, seat

    def step(self, actions):
        self.seats.append(self._seat.copy())
        self.actions.append(np.asarray(actions).copy())
        self.active.append(self._active.copy())
        obs, mask, seat, rewards, dones = self.engine.step(actions)
        self._active &= ~dones
        self._seat = seat.copy()
        return obs, mask, seat, rewards, dones


class LastLegal:
    """A fixed opponent: the highest legal action; it logs how many decisions it was asked for."""

    name = "last_legal"

    def __init__(self) -> None:
        self.asked = 0

    def reset(self, seed=None) -> None:
        pass

    def act_batch(self, observations, masks):
        self.asked += len(masks)
        return np.array([np.flatnonzero(m)[-1] for m in masks], dtype=np.int64)


@pytest.mark.parametrize("game,n", [("grinch", 2), ("gnoming", 3)])
def test_only_the_learner_seat_is_learned_from_and_the_opponent_plays_the_rest(game, n):
    torch.manual_seed(0)
    net = TokenNet(d_model=16, heads=2, ff=16)
    engine = StepLog(get_game(game).vector(num_envs=3, num_players=n, seed=0, reward_mode="margin"))
    opp = LastLegal()
    # slot 0: self-play; slot 1: the learner in seat 1; slot 2: the learner in seat 0
    tables = Tables(learner_seat=np.array([-1, 1, 0]), groups=[(np.array([1, 2]), opp)])
    batch = collect(engine, net, game, np.random.default_rng(0), tables=tables)
    seats, actions, active = np.stack(engine.seats), np.stack(engine.actions), np.stack(engine.active)
    learner = np.array([-1, 1, 0])
    mine = active & ((learner < 0) | (seats == learner))
    theirs = active & ~mine
    assert batch.games == 3 and batch.steps == int(active.sum())
    assert opp.asked == int(theirs.sum()) > 0
    assert len(batch.actions) == int(mine.sum())
    assert batch.actions.tolist() == actions[mine].tolist()  # time-major, slot order within a step: the record's order
    # every kept decision's outcome is its own seat's: slot 1 only seat 1, slot 2 only seat 0 (margin: zero-sum over the table)
    kept_slot = np.broadcast_to(np.arange(3), mine.shape)[mine]
    kept_seat = seats[mine]
    assert set(kept_seat[kept_slot == 1].tolist()) == {1} and set(kept_seat[kept_slot == 2].tolist()) == {0}
    assert set(kept_seat[kept_slot == 0].tolist()) == set(range(n))


def test_tables_must_name_an_agent_for_every_learner_slot():
    net = TokenNet(d_model=16, heads=2, ff=16)
    engine = get_game("grinch").vector(num_envs=2, num_players=2, seed=0, reward_mode="margin")
    with pytest.raises(ValueError, match="must be in a tables group"):
        collect(engine, net, "grinch", np.random.default_rng(0), tables=Tables(np.array([0, -1]), []))
    with pytest.raises(ValueError, match="one entry per game slot"):
        collect(engine, net, "grinch", np.random.default_rng(0), tables=Tables(np.array([0]), [(np.array([0]), LastLegal())]))


def test_trainer_fills_each_table_size_with_its_share_of_opponent_games():
    cfg = load_config(None, ["game=grinch", "num_players=[2, 4]", "num_envs=8", "opponents={greedy: 0.5, random: 0.25}"])
    placed = [(name, n, slots.tolist()) for name, n, slots in shard_opponent_slots(cfg)]
    # slot i has size [2, 4][i % 2]: 4 games per size; greedy takes the first 2 of each size, random the next 1, self-play the last
    assert placed == [("greedy", 2, [0, 2]), ("greedy", 4, [1, 3]), ("random", 2, [4]), ("random", 4, [5])]
    tables = ShardPlayer(cfg).tables(np.random.default_rng(0))
    seats = tables.learner_seat
    assert seats[[6, 7]].tolist() == [-1, -1]
    assert all(0 <= seats[i] < (2 if i % 2 == 0 else 4) for i in range(6))
    # 16 games in 2 shards: every shard's engine (8 games) holds each opponent's share of its own games, as above
    two = load_config(None, ["game=grinch", "num_players=[2, 4]", "num_envs=16", "shards=2", "opponents={greedy: 0.5, random: 0.25}"])
    assert [(name, n, slots.tolist()) for name, n, slots in shard_opponent_slots(two)] == placed and two.shard_games == 8


@pytest.mark.parametrize("override,message", [
    ("opponents={greedy: 0.3}", r"is 1\.2 games: pick a share that gives whole games \(a multiple of 1/4\)"),
    ("opponents={greedy: 0.75, random: 0.5}", "add up to 1.25; at most 1"),
    ("opponents={minimax: 0.5}", "'minimax' is not a Grinch Grow Your Heart agent"),
    ("opponents={greedy: 0}", r"in \(0, 1\], got 0"),
])
def test_bad_opponents_are_refused_with_what_is_allowed(override, message):
    with pytest.raises(ValueError, match=message):
        load_config(None, ["game=grinch", "num_players=2", "num_envs=4", override])


@pytest.mark.parametrize("shards", [1, 2])
def test_resume_with_opponents_is_exact(tmp_path, shards):
    def tiny(root):
        return [f"shards={shards}", "game=grinch", "num_players=[2, 3]", f"num_envs={4 * shards}", "minibatch_size=64", f"checkpoint_dir={root}", "run_name=r",
                "net.d_model=16", "net.heads=2", "net.ff=16", "eval.games=2", "eval.opponents=[random]", "opponents={random: 0.5}",
                "reward_mode=margin", "credit=pad"]

    straight = train(Trainer(load_config(None, tiny(tmp_path / "a"))), max_iterations=4, quiet=True)
    first = train(Trainer(load_config(None, tiny(tmp_path / "b"))), max_iterations=2, quiet=True)
    resumed = train(Trainer.load(first.cfg.run_dir), max_iterations=4, quiet=True)
    assert resumed.samples == straight.samples
    a, b = straight.net.state_dict(), resumed.net.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert straight.rng.bit_generator.state == resumed.rng.bit_generator.state


def _small(root, name):
    return ["game=grinch", "num_players=2", "num_envs=4", "minibatch_size=64", f"checkpoint_dir={root}", f"run_name={name}",
            "net.d_model=16", "net.heads=2", "net.ff=16", "eval.games=2", "eval.opponents=[random]"]


def test_a_branch_config_continues_the_run_exactly_as_resume_with_overrides(tmp_path):
    base = train(Trainer(load_config(None, _small(tmp_path, "base"))), max_iterations=2, quiet=True)
    changes = ["opponents={random: 0.5}", "learning_rate=0.002", "max_seconds=1e9"]
    by_resume = Trainer.load(base.cfg.run_dir, ["run_name=by_resume", *changes])
    assert by_resume.opt.param_groups[0]["lr"] == 0.002 and by_resume.iteration == 2
    train(by_resume, max_iterations=4, quiet=True)
    cfg = tmp_path / "branch.yaml"
    data = load_config(None, _small(tmp_path, "by_config") + changes[:2] + [f"branch_from={base.cfg.run_dir}"]).model_dump()
    cfg.write_text(yaml.safe_dump(data))
    branch = load_config(cfg, ["max_seconds=1e9"])
    train(Trainer.load(branch.branch_from, config=branch), for_seconds=0, quiet=True)  # a zero-length piece: saves the branch point
    by_config = train(Trainer.load(tmp_path / "by_config"), max_iterations=4, quiet=True)
    assert (tmp_path / "base" / "latest.pt").exists() and Trainer.load(tmp_path / "base").iteration == 2  # the branched run is untouched
    a, b = by_resume.net.state_dict(), by_config.net.state_dict()
    assert by_config.iteration == 4 and all(torch.equal(a[k], b[k]) for k in a)
    keys = ("iteration", "samples", "opponent", "win_share")
    assert [tuple(r[k] for k in keys) for r in by_config.curve[:len(base.curve)]] == [tuple(r[k] for k in keys) for r in base.curve]  # it goes on


def test_a_branch_keeps_the_network_and_says_so(tmp_path):
    base = train(Trainer(load_config(None, _small(tmp_path, "base"))), max_iterations=1, quiet=True, curve=False)
    with pytest.raises(ValueError, match=r"trained with net=.*keeps net \(start a fresh run with --config for another\)"):
        Trainer.load(base.cfg.run_dir, ["net.d_model=32"])
    with pytest.raises(ValueError, match="trained with game='grinch'"):
        Trainer.load(base.cfg.run_dir, config=load_config(None, _small(tmp_path, "other") + ["game=gnoming", "num_players=3"]))

"""The token PPO's shards played anywhere (training.learner.run with training.distributed): the weights after N
iterations depend on ``shards`` only, not on whether one process plays the shards in turn, two local worker processes
or two Ray actors play them, nor on a Ray actor dying part-way through an iteration (its shard is played again)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from training.learner.config import load_config
from training.learner.rollout import ShardPlayer, merge_batches, shard_opponent_slots
from training.learner.run import Trainer, train

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

GAMES = {  # tiny runs: 4 games an iteration in 2 shards; the Grinch's with a fixed opponent in one game of each shard
    "gnoming": ["game=gnoming", "num_players=3", "credit=round"],
    "grinch": ["game=grinch", "num_players=2", "credit=pad", "opponents={random: 0.5}", "net.value_global=true"],
}


def _cfg(root, game: str, name: str, *extra: str):
    return load_config(None, GAMES[game] + ["num_envs=4", "shards=2", "minibatch_size=128", f"checkpoint_dir={root}", f"run_name={name}",
                                            "net.d_model=8", "net.heads=2", "net.ff=8", "eval.games=2", "eval.opponents=[random]",
                                            *extra])


def _run(root, game: str, name: str, *extra: str) -> dict[str, torch.Tensor]:
    return train(Trainer(_cfg(root, game, name, *extra)), max_iterations=2, quiet=True, curve=False).net.state_dict()


def _same(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.fixture(scope="module")
def ray_session():
    """One private Ray instance for the module's tests, shut down after them."""
    ray = pytest.importorskip("ray")
    from training.distributed import init_ray

    init_ray("local", num_cpus=4, object_store_mb=256)
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def one_process(tmp_path_factory):
    """The reference: each game's weights after 2 iterations, its 2 shards played in turn in this process."""
    root = tmp_path_factory.mktemp("one")
    return {game: _run(root, game, game) for game in GAMES}


@pytest.mark.parametrize("game", list(GAMES))
def test_two_local_worker_processes_give_the_weights_of_one_process(tmp_path, one_process, game):
    assert _same(_run(tmp_path, game, "local2", "workers=2"), one_process[game])


@pytest.mark.parametrize("game", list(GAMES))
def test_ray_actors_give_the_same_weights_also_when_one_dies_during_an_iteration(tmp_path, monkeypatch, ray_session, one_process, game):
    from training.distributed import KILL_VARIABLE, Workers

    assert _same(_run(tmp_path, game, "ray2", "backend=ray", "workers=2"), one_process[game])
    replaced = []
    close = Workers.close

    def closing(self):
        replaced.append(self.replacements)
        close(self)

    monkeypatch.setattr(Workers, "close", closing)
    monkeypatch.setenv(KILL_VARIABLE, "0:2")  # actor 0 exits on its 2nd shard: the second iteration's first
    assert _same(_run(tmp_path, game, "killed", "backend=ray", "workers=2"), one_process[game])
    assert replaced == [1]  # the dead actor was replaced and its shard played again


def test_resume_may_move_the_shards_to_other_workers_but_keeps_their_number(tmp_path, one_process):
    """Killed after one iteration in this process, resumed on two local worker processes: the same weights; a resume with
    another number of shards is refused (the weights depend on it), a branch (a new config) may change it."""
    first = train(Trainer(_cfg(tmp_path, "grinch", "r")), max_iterations=1, quiet=True, curve=False)
    resumed = train(Trainer.load(first.cfg.run_dir, ["workers=2"]), max_iterations=2, quiet=True, curve=False)
    assert resumed.cfg.workers == 2 and resumed.iteration == 2 and _same(resumed.net.state_dict(), one_process["grinch"])
    with pytest.raises(ValueError, match=r"trained with shards=2; a resumed or branched run keeps shards \(its weights depend on the shards"):
        Trainer.load(first.cfg.run_dir, ["shards=1"])
    branch = Trainer.load(first.cfg.run_dir, config=_cfg(tmp_path, "grinch", "b", "shards=1"))
    assert branch.cfg.shards == 1 and branch.iteration == 2 and branch.cfg.run_dir == tmp_path / "b"


def test_shards_are_pure_functions_of_their_seeds_and_their_number_counts(tmp_path):
    """A shard's batch depends only on the weights and its seed (the same batch from a fresh player, whatever was played
    before); each shard seats the opponents in its own slots; one shard of 4 games is another run than 2 of 2."""
    cfg = _cfg(tmp_path, "grinch", "p")
    assert cfg.shard_games == 2 and [(name, n, slots.tolist()) for name, n, slots in shard_opponent_slots(cfg)] == [("random", 2, [0])]
    weights = Trainer(cfg).weights()
    players = [ShardPlayer(cfg), ShardPlayer(cfg)]
    for p in players:
        p.load(weights)
    players[1].play(7)
    a, b = players[0].play(11).batch, players[1].play(11).batch
    assert a.games == 2 and all(np.array_equal(getattr(a, k), getattr(b, k)) for k in ("obs", "actions", "logprobs", "returns", "advantages"))
    assert not np.array_equal(players[0].play(12).batch.actions, a.actions)
    both = merge_batches([a, b])
    assert both.games == 4 and len(both.actions) == 2 * len(a.actions) and np.array_equal(both.actions[len(a.actions):], b.actions)
    assert both.critic_obs is None and both.round_returns is not None
    one = train(Trainer(_cfg(tmp_path, "grinch", "s1", "shards=1")), max_iterations=1, quiet=True, curve=False).net.state_dict()
    two = train(Trainer(_cfg(tmp_path, "grinch", "s2")), max_iterations=1, quiet=True, curve=False).net.state_dict()
    assert not _same(one, two)


def test_shards_must_split_the_games_evenly():
    with pytest.raises(ValueError, match=r"num_envs \(6\) must be a multiple of shards x the number of table sizes \(2 x 2\)"):
        load_config(None, ["game=grinch", "num_players=[2, 3]", "num_envs=6", "shards=2"])
    with pytest.raises(ValueError, match=r"0.5 of 1 games per table size and shard \(4 shards\) is 0.5 games"):
        load_config(None, ["game=grinch", "num_players=2", "num_envs=4", "shards=4", "opponents={random: 0.5}"])
    with pytest.raises(ValueError, match="backend"):
        load_config(None, ["backend=slurm"])

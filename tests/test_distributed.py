"""training.distributed: ordered_map in this process, on local worker processes and on Ray actors, and the afterstate
learner's generations played on each: the fitted values are bit-identical, a Ray worker killed mid-run included.

The Ray tests need the ``[ray]`` extra and are skipped without it.  Ray starts once for the session (``ray_session`` in
conftest.py: 2 CPUs, a small object store, no dashboard) and is shut down at its end.
"""

import operator
from typing import Any

import pytest
import torch

import training.distributed as distributed
from training.distributed import KILL_VARIABLE, Workers, ordered_map, ray_available
from training.learner.afterstate_run import AfterstateConfig, AfterstateRun, train

needs_ray = pytest.mark.skipif(not ray_available(), reason="ray is not installed (pip install -e '.[ray]')")

GRINCH = {"num_players": 2, "generations": 2, "games_per_generation": 40, "value": {"steps": 50, "width": 16},
          "later": {"steps": 30, "width": 8}, "distill": {"games": 6, "steps": 20, "batch_size": 32}, "eval_games": 0, "final_games": 0}
GNOMING = {"game": "gnoming", "num_players": 3, "generations": 2, "games_per_generation": 12, "value": {"steps": 50, "width": 16},
           "eval_games": 0, "final_games": 0}


def _run(tmp_path, base: dict[str, Any], name: str, **where: Any) -> AfterstateRun:
    cfg = AfterstateConfig.model_validate({**base, "checkpoint_dir": str(tmp_path), "run_name": name, **where})
    return train(AfterstateRun(cfg), quiet=True)


def _leaves(tree: Any, path: str = "") -> dict[str, Any]:
    """Every leaf of a nested checkpoint structure by its path (tensors as they are)."""
    if isinstance(tree, dict):
        return {k: v for key in tree for k, v in _leaves(tree[key], f"{path}/{key}").items()}
    if isinstance(tree, (list, tuple)):
        return {k: v for i, item in enumerate(tree) for k, v in _leaves(item, f"{path}/{i}").items()}
    return {path: tree}


def _values(run: AfterstateRun) -> dict[str, Any]:
    """The leaves of ``latest.pt``'s ``values``, as saved."""
    return _leaves(torch.load(run.cfg.run_dir / "latest.pt", weights_only=True)["values"])


def _assert_same_values(a: AfterstateRun, b: AfterstateRun) -> None:
    va, vb = _values(a), _values(b)
    assert va.keys() == vb.keys()
    tensors = 0
    for key, x in va.items():
        y = vb[key]
        if isinstance(x, torch.Tensor):
            tensors += 1
            assert x.dtype == y.dtype and x.shape == y.shape and torch.equal(x, y), key  # bit for bit (no NaN in fitted weights)
        else:
            assert x == y, key
    assert tensors > 0


@pytest.fixture(scope="module")
def references(tmp_path_factory):
    """The one-process runs everything else is compared with (played once for the module)."""
    tmp = tmp_path_factory.mktemp("reference")
    return {"grinch": _run(tmp, GRINCH, "grinch"), "gnoming": _run(tmp, GNOMING, "gnoming")}


# ------------------------------------------------------------------ ordered_map
def test_ordered_map_runs_in_this_process_and_on_local_workers_in_task_order():
    tasks = list(range(-7, 13))
    assert ordered_map(abs, tasks) == [abs(t) for t in tasks]
    assert ordered_map(operator.mul, tasks, setup=int, setup_args=("3",)) == [3 * t for t in tasks]  # work(setup(*args), task)
    assert ordered_map(operator.mul, tasks, num_workers=2, setup=int, setup_args=("3",)) == [3 * t for t in tasks]
    assert ordered_map(abs, [], backend="local", num_workers=2) == []
    assert distributed.chunk_size(6000, 4) == 8 and distributed.chunk_size(40, 2) == 5 and distributed.chunk_size(3, 2) == 1


def test_bad_backends_and_a_missing_ray_are_clear_errors(monkeypatch):
    with pytest.raises(ValueError, match="backend must be 'local' or 'ray', got 'spark'"):
        ordered_map(abs, [1], backend="spark")
    with pytest.raises(ValueError, match="num_workers must be an int >= 1, got 0"):
        Workers("local", 0)
    monkeypatch.setattr(distributed, "ray_available", lambda: False)
    with pytest.raises(ValueError, match=r"backend is 'ray' but ray is not installed: pip install -e '\.\[ray\]'"):
        Workers("ray", 2)
    monkeypatch.setenv(KILL_VARIABLE, "one")
    monkeypatch.setattr(distributed, "ray_available", lambda: True)
    with pytest.raises(ValueError, match=f"{KILL_VARIABLE} takes <worker>:<k>"):
        Workers("ray", 2)


def test_the_afterstate_config_takes_the_backend_and_changes_it_on_resume(tmp_path):
    cfg = AfterstateConfig.model_validate({})
    assert (cfg.backend, cfg.workers, cfg.address) == ("local", 1, "local")
    with pytest.raises(ValueError, match="backend"):
        AfterstateConfig.model_validate({"backend": "spark"})
    with pytest.raises(ValueError, match="workers"):
        AfterstateConfig.model_validate({"workers": 0})
    run = _run(tmp_path, {**GRINCH, "games_per_generation": 6}, "resume", generations=1, distill=None)
    again = AfterstateRun.load(run.cfg.run_dir, ["backend=ray", "workers=3", "address=auto"])
    assert (again.cfg.backend, again.cfg.workers, again.cfg.address) == ("ray", 3, "auto")


@needs_ray
def test_ordered_map_on_ray_reruns_a_killed_workers_tasks(ray_session, monkeypatch):
    tasks = list(range(40))  # 8 chunks of 5 on 2 actors
    with Workers("ray", 2) as workers:
        assert workers.map(operator.mul, tasks, int, ("3",)) == [3 * t for t in tasks]
        assert workers.map(operator.mul, tasks, int, ("5",)) == [5 * t for t in tasks]  # the same actors, a new context
        pids = workers.collector.pids()
        assert len(set(pids)) == 2 and workers.replacements == 0
        workers.collector.kill(0)  # a lost worker between calls: its next chunk finds it dead, the replacement runs it
        assert workers.map(abs, [-t for t in tasks]) == tasks
        assert workers.replacements == 1 and workers.collector.pids()[0] not in pids
    monkeypatch.setenv(KILL_VARIABLE, "1:1")  # actor 1 exits on its first chunk (every actor is given one at once)
    assert ordered_map(operator.mul, tasks, backend="ray", num_workers=2, setup=int, setup_args=("7",)) == [7 * t for t in tasks]
    monkeypatch.setenv(KILL_VARIABLE, "1:2")  # on its second: in the first call or, if actor 0 took the rest of it, the second
    with Workers("ray", 2) as workers:
        assert workers.map(abs, tasks) == tasks and workers.map(operator.mul, tasks, int, ("2",)) == [2 * t for t in tasks]
        assert workers.replacements == 1


# ------------------------------------------------------------------ the afterstate learner
def test_local_workers_fit_the_same_values_as_one_process(references, tmp_path):
    _assert_same_values(references["grinch"], _run(tmp_path, GRINCH, "local2", workers=2))


@needs_ray
@pytest.mark.parametrize("kill", [None, "0:2"], ids=["ray", "ray-killed"])
def test_ray_workers_fit_the_same_values_as_one_process(references, ray_session, tmp_path, monkeypatch, kill):
    if kill:  # actor 0 exits on its second chunk of 5 games (in generation 0, or 1 if actor 1 took the rest of 0's games): its
        # replacement plays them again
        monkeypatch.setenv(KILL_VARIABLE, kill)
    run = _run(tmp_path, GRINCH, "ray", backend="ray", workers=2)
    assert run.worker_replacements == (1 if kill else 0)
    _assert_same_values(references["grinch"], run)


@needs_ray
def test_a_run_resumed_on_another_backend_fits_the_same_values(references, ray_session, tmp_path):
    first = train(AfterstateRun(AfterstateConfig.model_validate({**GRINCH, "checkpoint_dir": str(tmp_path), "run_name": "moved",
                                                                 "workers": 2})), generations=1, quiet=True)
    resumed = train(AfterstateRun.load(first.cfg.run_dir, ["backend=ray", "workers=2"]), quiet=True)
    assert resumed.cfg.backend == "ray" and resumed.generation == 3  # two generations and the distillation
    _assert_same_values(references["grinch"], resumed)


@needs_ray
def test_gnoming_on_local_and_killed_ray_workers_fits_the_same_values(references, ray_session, tmp_path, monkeypatch):
    _assert_same_values(references["gnoming"], _run(tmp_path, GNOMING, "local2", workers=2))
    monkeypatch.setenv(KILL_VARIABLE, "1:1")  # actor 1 exits on its first chunk of 2 games
    run = _run(tmp_path, GNOMING, "ray", backend="ray", workers=2)
    assert run.worker_replacements == 1
    _assert_same_values(references["gnoming"], run)

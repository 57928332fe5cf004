"""Scale-out experience collection: one seam (:class:`Collector`) with a local and a Ray implementation.

A training loop hands a collector a list of *tasks* (small, picklable: a seed,
a range of game indices) and one *shared* payload (the current weights and
whatever else every task reads); the collector returns one result per task, in
task order.  The loop never sees where the work ran.

* :class:`LocalCollector` runs the tasks in this process, one after another.
* :class:`RayCollector` runs them on ``num_workers`` Ray actors.  Each actor
  builds its context once (a batched engine, a policy network, opponents: the
  caller's ``setup`` function) and then runs ``work(context, shared, task)`` for
  every task it is given.  The shared payload is put into Ray's object store
  once per call, so N workers read one copy.  When an actor dies (a killed
  process, a lost node) it is replaced by a fresh one and its task is run
  again; because a task is a pure function of its arguments (it carries its
  own seeds), the re-collected result is the one the dead worker would have
  returned, and the learner's state and checkpoints never see the failure.

Nothing here knows a game: ``setup`` and ``work`` come from the caller
(:func:`rollout_collector` for PPO self-play, :func:`training.distill.collect_round`
for teacher labels), so a second game plugs in through its own engine factory
and policy constructor.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import random
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

Setup = Callable[[], Any]
Work = Callable[[Any, Any, Any], Any]


class Collector:
    """Runs tasks against a shared payload and returns their results in task order (the interface)."""

    num_workers: int = 1

    def run(self, tasks: Sequence[Any], shared: Any) -> list[Any]:  # pragma: no cover - interface
        raise NotImplementedError

    def close(self) -> None:
        """Release the workers (a no-op for the local collector)."""


class LocalCollector(Collector):
    """Runs every task in this process with one context built by ``setup`` (today's single-process path)."""

    def __init__(self, setup: Setup, work: Work) -> None:
        self.context = setup()
        self.work = work

    def run(self, tasks: Sequence[Any], shared: Any) -> list[Any]:
        return [self.work(self.context, shared, task) for task in tasks]


def ray_available() -> bool:
    """Return whether ``ray`` can be imported (the optional ``[ray]`` extra)."""
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return True


def init_ray(address: str = "local", num_cpus: int | None = None, object_store_mb: int | None = None) -> None:
    """Connect to Ray unless this process already is: ``local`` starts a private instance, ``auto`` joins ``ray start --head``'s cluster, anything else is a cluster address."""
    import ray

    if ray.is_initialized():
        return
    import grinch_env
    import training

    packages = [os.path.dirname(grinch_env.__file__), os.path.dirname(training.__file__)]
    # ray.init installs its own SIGTERM handler (exit at once); the trainers' handlers (finish the update, save) are put back after it.
    handlers = _signal_handlers()
    try:
        _connect(ray, address, packages, num_cpus, object_store_mb)
    finally:
        _restore_signal_handlers(handlers)


def _signal_handlers() -> dict[int, Any]:
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return {}
    return {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}


def _restore_signal_handlers(handlers: dict[int, Any]) -> None:
    import signal

    for sig, handler in handlers.items():
        if handler is not None:
            signal.signal(sig, handler)


def _connect(ray: Any, address: str, packages: list[str], num_cpus: int | None, object_store_mb: int | None) -> None:
    if address == "local":
        # Workers import this checkout's packages (not whichever copy site-packages points at).
        root = os.path.dirname(packages[0])
        path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
        ray.init(
            address="local",  # a new private instance even where `ray start` left a cluster running on this machine
            num_cpus=num_cpus or os.cpu_count(),
            include_dashboard=False,
            object_store_memory=None if object_store_mb is None else object_store_mb * 2**20,
            runtime_env={"env_vars": {"PYTHONPATH": path}},
        )
    else:
        # A cluster's nodes get this checkout's packages shipped with the job (nothing to install on them but the dependencies).
        try:
            ray.init(address=address, runtime_env={"py_modules": packages})
        except ConnectionError as err:
            where = "no Ray cluster is running on this machine" if address == "auto" else f"no Ray cluster answers at {address!r}"
            raise ValueError(f"distributed.address {address!r}: {where} ({str(err).splitlines()[0]}). Start one with `ray start --head` "
                             "(then address: auto), give the head node's address (host:6379 or ray://host:10001), "
                             "or set distributed.address: local for a private instance on this machine") from None


class _Worker:
    """The body of a Ray actor: builds its context once, then runs tasks (wrapped by ``ray.remote`` lazily)."""

    def __init__(self, setup: Setup, work: Work, torch_threads: int) -> None:
        torch.set_num_threads(torch_threads)
        self.context = setup()
        self.work = work

    def run(self, shared: Any, task: Any) -> Any:
        return self.work(self.context, shared, task)


class RayCollector(Collector):
    """Runs tasks on ``num_workers`` Ray actors; a dead actor is replaced and its task run again (up to ``max_retries`` times per task)."""

    def __init__(self, setup: Setup, work: Work, num_workers: int, num_cpus_per_worker: float = 1.0, torch_threads: int = 1,
                 max_retries: int = 3) -> None:
        import ray

        if num_workers < 1:
            raise ValueError(f"num_workers must be >= 1, got {num_workers}")
        self._ray = ray
        self._actor_class = ray.remote(num_cpus=num_cpus_per_worker, max_restarts=0)(_Worker)
        self._args = (setup, work, torch_threads)
        self.num_workers = num_workers
        self.max_retries = max_retries
        self.replacements = 0  # actors that died and were replaced, over the collector's life
        self.actors = [self._new_actor() for _ in range(num_workers)]
        self._before_wait: Callable[[RayCollector], None] | None = None  # test hook: runs once tasks are in flight

    def _new_actor(self) -> Any:
        return self._actor_class.remote(*self._args)

    def run(self, tasks: Sequence[Any], shared: Any) -> list[Any]:
        ray = self._ray
        shared_ref = ray.put(shared)  # one copy in the object store, read by every worker
        results: list[Any] = [None] * len(tasks)
        failures = [0] * len(tasks)
        queue = list(range(len(tasks)))
        pending: dict[Any, tuple[int, int]] = {}

        def submit(slot: int) -> None:
            index = queue.pop(0)
            pending[self.actors[slot].run.remote(shared_ref, tasks[index])] = (index, slot)

        for slot in range(min(self.num_workers, len(queue))):
            submit(slot)
        if self._before_wait is not None:
            self._before_wait(self)
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            index, slot = pending.pop(done[0])
            try:
                results[index] = ray.get(done[0])
            except ray.exceptions.RayActorError as err:  # the worker died (not an error raised by the task itself)
                failures[index] += 1
                if failures[index] > self.max_retries:
                    raise RuntimeError(f"task {index} lost its worker {failures[index]} times; giving up") from err
                self.replacements += 1
                self.actors[slot] = self._new_actor()
                queue.insert(0, index)  # collected again, first, by the replacement
            if queue:
                submit(slot)
        return results

    def kill(self, slot: int) -> None:
        """Kill worker ``slot`` without letting it restart (failure drills and tests)."""
        self._ray.kill(self.actors[slot], no_restart=True)

    def close(self) -> None:
        for actor in self.actors:
            self._ray.kill(actor, no_restart=True)
        self.actors = []


def make_collector(dist_cfg: Any, setup: Setup, work: Work, torch_threads: int = 1) -> Collector:
    """Return the collector that ``dist_cfg`` (a :class:`training.config.DistributedConfig`) asks for."""
    if dist_cfg.backend == "local":
        return LocalCollector(setup, work)
    if not ray_available():
        raise ValueError("distributed.backend is 'ray' but ray is not installed: pip install -e '.[ray]'")
    init_ray(dist_cfg.address, num_cpus=dist_cfg.num_cpus, object_store_mb=dist_cfg.object_store_mb)
    return RayCollector(setup, work, dist_cfg.num_workers, dist_cfg.num_cpus_per_worker, torch_threads, dist_cfg.max_retries)


# -------------------------------------------------------------- PPO self-play
# A worker owns a batched engine, a copy of the policy and an opponent pool; one
# task is a seed, the shared payload the current weights and the pool's
# snapshots.  The engine and network come from the trainer's own factories
# (training.selfplay.make_engine / build_model), so nothing here is game-specific.


def _numpy_state(state_dict: dict[str, torch.Tensor]) -> dict[str, np.ndarray]:
    """Return a state dict as numpy arrays (read zero-copy from Ray's object store)."""
    return {k: v.detach().cpu().numpy().copy() for k, v in state_dict.items()}


def _torch_state(state: dict[str, np.ndarray]) -> dict[str, torch.Tensor]:
    return {k: torch.from_numpy(np.array(v)) for k, v in state.items()}


def _rollout_setup(cfg_dict: dict[str, Any]) -> dict[str, Any]:
    from training.config import TrainConfig
    from training.selfplay import OpponentPool, build_model, make_engine

    cfg = TrainConfig.model_validate(cfg_dict)
    with torch.random.fork_rng(devices=[]):
        model = build_model(cfg)
    model.eval()
    return {"cfg": cfg, "engine": make_engine(cfg), "model": model, "pool": OpponentPool(cfg), "snapshots": []}


def _rollout_work(context: dict[str, Any], shared: dict[str, Any], seed: int) -> Any:
    """Return one worker's rollout for ``seed`` with the shared weights and snapshot pool."""
    from training.selfplay import collect_rollout

    model, pool = context["model"], context["pool"]
    model.load_state_dict(_torch_state(shared["weights"]))
    names = [name for name, _ in shared["snapshots"]]
    if names != context["snapshots"]:  # the driver's pool changed: mirror it (snapshots are frozen, so names identify them)
        pool.snapshots.clear()
        pool._snapshot_agents.clear()
        for name, state in shared["snapshots"]:
            pool.add_snapshot(name, _torch_state(state))
        context["snapshots"] = names
    seeds = np.random.SeedSequence(seed).generate_state(2)
    torch.manual_seed(int(seeds[1]))  # the policy's samples depend on the task alone, not on which worker ran it
    with torch.no_grad():
        return collect_rollout(context["engine"], model, pool, context["cfg"], np.random.default_rng(int(seeds[0])))


def merge_rollouts(parts: Sequence[Any]) -> Any:
    """Return one rollout holding every part's decisions in order: arrays concatenated, counts summed, win rates averaged over the parts that saw each kind."""
    first = parts[0]
    merged = {}
    for f in dataclasses.fields(first):
        values = [getattr(p, f.name) for p in parts]
        if values[0] is None:
            merged[f.name] = None
        elif isinstance(values[0], np.ndarray):
            # Always a copy: a worker's arrays arrive read-only from Ray's object store, and the learner's batch must be its own.
            merged[f.name] = np.concatenate(values)
        elif isinstance(values[0], dict):
            kinds = sorted({k for v in values for k in v})
            merged[f.name] = {k: float(np.mean([v[k] for v in values if k in v])) for k in kinds}
        else:
            merged[f.name] = sum(values)
    return type(first)(**merged)


@contextlib.contextmanager
def _own_python_random() -> Any:
    """Keep Ray's draws from python's global ``random`` (ids, retry jitter) out of the trainer's stream, which checkpoints save.

    Without it, a resumed run (which starts Ray at another point of that stream) ended on another python random state.
    """
    state = random.getstate()
    try:
        yield
    finally:
        random.setstate(state)


class RolloutCollector:
    """PPO rollouts from ``num_workers`` engines of ``num_envs`` games each: the trainer's distributed path."""

    def __init__(self, cfg: Any) -> None:
        setup = functools.partial(_rollout_setup, cfg.model_dump())
        with _own_python_random():
            self.collector = make_collector(cfg.distributed, setup, _rollout_work, cfg.torch_threads)

    def collect(self, model: torch.nn.Module, pool: Any, rng: np.random.Generator) -> Any:
        """Return one merged rollout; the task seeds are drawn from the trainer's ``rng`` (so resume stays exact)."""
        seeds = [int(s) for s in rng.integers(2**63, size=self.collector.num_workers)]
        shared = {"weights": _numpy_state(model.state_dict()), "snapshots": [(name, _numpy_state(sd)) for name, sd in pool.snapshots]}
        with _own_python_random():
            parts = self.collector.run(seeds, shared)
        return merge_rollouts(parts)

    def close(self) -> None:
        with _own_python_random():
            self.collector.close()


def rollout_collector(cfg: Any) -> RolloutCollector | None:
    """Return the distributed rollout collector for ``cfg``, or None for the default single-process path."""
    if cfg.distributed.backend == "local":
        return None
    return RolloutCollector(cfg)


# ------------------------------------------------------- distillation labels
# A worker plays data games with the teacher (and the round's student) exactly as
# training.distill's process pool does; one task is a chunk of game indices, the
# shared payload the round and the student's weights.

def _label_setup(cfg_dict: dict[str, Any], init_worker: Callable[..., None], play_game: Callable[[int], dict[str, np.ndarray]]) -> dict[str, Any]:
    return {"cfg": cfg_dict, "key": None, "init": init_worker, "play": play_game}


def _label_work(context: dict[str, Any], shared: tuple[int, bytes | None], indices: list[int]) -> list[dict[str, np.ndarray]]:
    """Return the labelled decisions of the data games ``indices`` of round ``shared[0]`` (student weights ``shared[1]``)."""
    if context["key"] != shared:  # a new round or student: rebuild the worker's teachers and student once
        context["init"](context["cfg"], *shared)
        context["key"] = shared
    return [context["play"](i) for i in indices]


def collect_labels(cfg: Any, round_index: int, student_state: bytes | None, init_worker: Callable[..., None],
                   play_game: Callable[[int], dict[str, np.ndarray]]) -> list[dict[str, np.ndarray]]:
    """Return one distillation round's per-game data, played on Ray workers in game order (``training.distill.collect_round``'s Ray path).

    ``init_worker(cfg_dict, round_index, student_state)`` and ``play_game(index)`` are distill's worker
    functions, passed in (pickled by reference) so that this module does not import ``training.distill``.
    """
    with _own_python_random():
        setup = functools.partial(_label_setup, cfg.model_dump(), init_worker, play_game)
        collector = make_collector(cfg.distributed, setup, _label_work, cfg.torch_threads)
        try:
            games = list(range(cfg.games_per_round))
            chunk = max(1, min(8, len(games) // (4 * collector.num_workers)))  # small enough to keep every worker busy to the end
            chunks = [games[i:i + chunk] for i in range(0, len(games), chunk)]
            return [game for part in collector.run(chunks, (round_index, student_state)) for game in part]
        finally:
            collector.close()


__all__ = ["Collector", "LocalCollector", "RayCollector", "RolloutCollector", "collect_labels", "init_ray", "make_collector", "merge_rollouts", "ray_available",
           "rollout_collector"]

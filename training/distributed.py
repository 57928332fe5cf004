"""Scale-out work for the trainers: run a list of tasks in this process, on local worker processes or on Ray actors, and
get one result per task, in task order.  Nothing here knows a game or a training family.

The trainers call :func:`ordered_map` (one call) or hold a :class:`Workers` open across calls (a context manager: its
Ray actors live until it closes, so a run's generations do not start them again)::

    results = ordered_map(work, tasks, backend="ray", num_workers=4, setup=setup, setup_args=(weights,))

* ``setup(*setup_args)`` builds a worker's context once per call (a network from the weights, an engine, opponents);
  ``work(context, task)`` then runs every task that worker is given.  Without ``setup``, ``work(task)``.
* ``backend="local"``, ``num_workers=1``: in this process, one task after another (``setup`` once).
* ``backend="local"``, ``num_workers>1``: :func:`grinch_env.parallel.worker_pool`'s spawned processes (one BLAS and
  OpenMP thread each), ``setup`` their initialiser.
* ``backend="ray"``: ``num_workers`` Ray actors (:func:`init_ray`: a private local instance, or the cluster at
  ``address``).  ``setup_args`` go into Ray's object store once per call, and each actor runs ``setup`` when a call's
  arguments are new to it.  The tasks go out in small chunks; when an actor dies (a killed process, a lost node) it is
  replaced by a fresh one and its chunk is run again (:class:`RayCollector`).  Because a task is a pure function of
  its arguments (it carries its own seeds), the re-run's result is the one the dead worker would have returned: the
  results, and what a trainer fits on them, do not change.

The seam underneath: :class:`Collector` (``run(tasks, shared)``), with :class:`LocalCollector` (this process) and
:class:`RayCollector` (actors that build a context once, then run ``work(context, shared, task)``; dead ones replaced).

Fault injection (drills and tests): with ``GRINCH_DISTRIBUTED_KILL=<worker>:<k>`` in the driver's environment when a
:class:`Workers` of the ray backend starts, its actor number ``<worker>`` (0-based) exits (``os._exit``) on its
``<k>``-th chunk (1-based, counted over the actor's life); its replacement does not.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import os
import random
from collections.abc import Callable, Sequence
from typing import Any, Literal

import torch

Setup = Callable[[], Any]
Work = Callable[[Any, Any, Any], Any]
Backend = Literal["local", "ray"]
KILL_VARIABLE = "GRINCH_DISTRIBUTED_KILL"


class Collector:
    """Runs tasks against a shared payload and returns their results in task order (the interface)."""

    num_workers: int = 1

    def run(self, tasks: Sequence[Any], shared: Any) -> list[Any]:  # pragma: no cover - interface
        raise NotImplementedError

    def close(self) -> None:
        """Release the workers (a no-op for the local collector)."""


class LocalCollector(Collector):
    """Runs every task in this process with one context built by ``setup``."""

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
        with _own_python_random():
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
            raise ValueError(f"address {address!r}: {where} ({str(err).splitlines()[0]}). Start one with `ray start --head` "
                             "(then address: auto), give the head node's address (host:6379 or ray://host:10001), "
                             "or set address: local for a private instance on this machine") from None


@contextlib.contextmanager
def _own_python_random() -> Any:
    """Keep Ray's draws from python's global ``random`` (ids, retry jitter) out of the caller's stream (which a trainer may save)."""
    state = random.getstate()
    try:
        yield
    finally:
        random.setstate(state)


class _Worker:
    """The body of a Ray actor: builds its context once, then runs tasks (wrapped by ``ray.remote`` lazily).

    ``die_on``: fault injection, exit the process (no cleanup) when the actor is given its ``die_on``-th task."""

    def __init__(self, setup: Setup, work: Work, torch_threads: int, die_on: int | None = None) -> None:
        torch.set_num_threads(torch_threads)
        self.context = setup()
        self.work = work
        self.die_on, self.calls = die_on, 0

    def run(self, shared: Any, task: Any) -> Any:
        self.calls += 1
        if self.calls == self.die_on:
            os._exit(1)
        return self.work(self.context, shared, task)

    def pid(self) -> int:
        return os.getpid()


class RayCollector(Collector):
    """Runs tasks on ``num_workers`` Ray actors; a dead actor is replaced and its task run again (up to ``max_retries`` times per task).

    ``kill_on``: fault injection, ``(worker, k)``: the first actor of slot ``worker`` exits on its ``k``-th task."""

    def __init__(self, setup: Setup, work: Work, num_workers: int, num_cpus_per_worker: float = 1.0, torch_threads: int = 1,
                 max_retries: int = 3, kill_on: tuple[int, int] | None = None) -> None:
        import ray

        if num_workers < 1:
            raise ValueError(f"num_workers must be >= 1, got {num_workers}")
        self._ray = ray
        self._actor_class = ray.remote(num_cpus=num_cpus_per_worker, max_restarts=0)(_Worker)
        self._args = (setup, work, torch_threads)
        self.num_workers = num_workers
        self.max_retries = max_retries
        self.replacements = 0  # actors that died and were replaced, over the collector's life
        with _own_python_random():
            self.actors = [self._new_actor(kill_on[1] if kill_on is not None and kill_on[0] == slot else None) for slot in range(num_workers)]
        self._before_wait: Callable[[RayCollector], None] | None = None  # test hook: runs once tasks are in flight

    def _new_actor(self, die_on: int | None = None) -> Any:
        return self._actor_class.remote(*self._args, die_on)

    def run(self, tasks: Sequence[Any], shared: Any) -> list[Any]:
        with _own_python_random():
            return self._run(tasks, shared)

    def _run(self, tasks: Sequence[Any], shared: Any) -> list[Any]:
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
                with contextlib.suppress(Exception):
                    ray.kill(self.actors[slot], no_restart=True)
                self.actors[slot] = self._new_actor()
                queue.insert(0, index)  # collected again, first, by the replacement
            if queue:
                submit(slot)
        return results

    def pids(self) -> list[int]:
        """The process ids of the live actors, by slot."""
        return self._ray.get([actor.pid.remote() for actor in self.actors])

    def kill(self, slot: int) -> None:
        """Kill worker ``slot`` without letting it restart (failure drills and tests)."""
        self._ray.kill(self.actors[slot], no_restart=True)

    def close(self) -> None:
        with _own_python_random():
            for actor in self.actors:
                self._ray.kill(actor, no_restart=True)
        self.actors = []


# ------------------------------------------------------------------ ordered_map
# A call's tasks go to the workers in chunks; each chunk carries the call's token, its setup and its arguments' object
# reference (wrapped in a list, so that Ray does not resolve it for every chunk): a worker builds its context when the
# token is new to it and reuses it for the rest of the call.

_POOL_CONTEXT: dict[str, Any] = {}  # a local worker process's context (worker_pool's initialiser writes it)
_tokens = itertools.count()


def _call(work: Callable[..., Any], context: Any, task: Any, has_setup: bool) -> Any:
    return work(context, task) if has_setup else work(task)


def _pool_init(setup: Callable[..., Any] | None, setup_args: Sequence[Any], torch_threads: int) -> None:
    torch.set_num_threads(torch_threads)
    _POOL_CONTEXT["context"] = None if setup is None else setup(*setup_args)
    _POOL_CONTEXT["has_setup"] = setup is not None


def _pool_work(work: Callable[..., Any], task: Any) -> Any:
    return _call(work, _POOL_CONTEXT["context"], task, _POOL_CONTEXT["has_setup"])


def _actor_setup() -> dict[str, Any]:
    return {"token": None, "context": None}


def _actor_work(state: dict[str, Any], shared: tuple[Any, ...], chunk: Sequence[Any]) -> list[Any]:
    token, work, setup, args_ref = shared
    if state["token"] != token:  # a new call: build this worker's context once
        import ray

        state["context"] = None if setup is None else setup(*ray.get(args_ref[0]))
        state["token"] = token
    return [_call(work, state["context"], task, setup is not None) for task in chunk]


def chunk_size(tasks: int, num_workers: int) -> int:
    """Tasks per chunk sent to a worker: at most 8, small enough that every worker has about four chunks."""
    return max(1, min(8, math.ceil(tasks / (4 * num_workers))))


def _kill_on() -> tuple[int, int] | None:
    value = os.environ.get(KILL_VARIABLE)
    if not value:
        return None
    worker, sep, k = value.partition(":")
    if not sep or not worker.strip().isdigit() or not k.strip().isdigit() or int(k) < 1:
        raise ValueError(f"{KILL_VARIABLE} takes <worker>:<k> (worker 0-based, k >= 1: its k-th chunk), got {value!r}")
    return int(worker), int(k)


class Workers:
    """Where :func:`ordered_map`'s tasks run, held open across calls (a context manager; :meth:`close` releases it).

    ``backend`` ``local`` with ``num_workers`` 1: this process; ``local`` with more: a spawned
    :func:`grinch_env.parallel.worker_pool` per call (its processes' start is a call's cost); ``ray``: ``num_workers``
    actors, started by the first call with tasks (Ray too, at ``address``, unless this process already is connected)
    and kept until :meth:`close`.  ``torch_threads``: torch's threads in each worker process (this process's own are left alone)."""

    def __init__(self, backend: Backend = "local", num_workers: int = 1, address: str = "local", *, torch_threads: int = 1,
                 max_retries: int = 3) -> None:
        if backend not in ("local", "ray"):
            raise ValueError(f"backend must be 'local' or 'ray', got {backend!r}")
        if not isinstance(num_workers, int) or isinstance(num_workers, bool) or num_workers < 1:
            raise ValueError(f"num_workers must be an int >= 1, got {num_workers!r}")
        if backend == "ray" and not ray_available():
            raise ValueError("backend is 'ray' but ray is not installed: pip install -e '.[ray]'")
        self.backend, self.num_workers, self.address, self.torch_threads = backend, num_workers, address, torch_threads
        self.max_retries, self.kill_on = max_retries, _kill_on() if backend == "ray" else None
        self.collector: RayCollector | None = None  # the Ray actors, started by the first call that has tasks
        self.closed = False

    def _actors(self) -> RayCollector:
        if self.closed:
            raise RuntimeError("these workers are closed")
        if self.collector is None:
            init_ray(self.address, num_cpus=max(os.cpu_count() or 1, self.num_workers) if self.address == "local" else None)
            self.collector = RayCollector(_actor_setup, _actor_work, self.num_workers, torch_threads=self.torch_threads,
                                          max_retries=self.max_retries, kill_on=self.kill_on)
        return self.collector

    @property
    def replacements(self) -> int:
        """Ray actors that died and were replaced (their chunks run again), over this object's life."""
        return 0 if self.collector is None else self.collector.replacements

    def map(self, work: Callable[..., Any], tasks: Sequence[Any], setup: Callable[..., Any] | None = None,
            setup_args: Sequence[Any] = ()) -> list[Any]:
        """One result per task, in task order: ``work(setup(*setup_args), task)`` (``work(task)`` without ``setup``)."""
        tasks = list(tasks)
        if not tasks:
            return []
        if self.backend == "local" and self.num_workers == 1:
            context = None if setup is None else setup(*setup_args)
            return [_call(work, context, task, setup is not None) for task in tasks]
        size = chunk_size(len(tasks), self.num_workers)
        if self.backend == "local":
            import functools

            from grinch_env.parallel import worker_pool

            with worker_pool(self.num_workers, _pool_init, (setup, tuple(setup_args), self.torch_threads)) as pool:
                return pool.map(functools.partial(_pool_work, work), tasks, chunksize=size)
        actors = self._actors()
        with _own_python_random():
            args_ref = actors._ray.put(tuple(setup_args))
        chunks = [tasks[i:i + size] for i in range(0, len(tasks), size)]
        parts = actors.run(chunks, (next(_tokens), work, setup, [args_ref]))
        return [result for part in parts for result in part]

    def close(self) -> None:
        """Release the Ray actors (Ray itself stays connected: a later call or run reuses it)."""
        self.closed = True
        if self.collector is not None:
            self.collector.close()

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def ordered_map(work: Callable[..., Any], tasks: Sequence[Any], *, backend: Backend = "local", num_workers: int = 1, address: str = "local",
                setup: Callable[..., Any] | None = None, setup_args: Sequence[Any] = (), torch_threads: int = 1,
                workers: Workers | None = None) -> list[Any]:
    """Return ``[work(context, task) for task in tasks]`` (``work(task)`` without ``setup``), computed where ``backend``
    and ``num_workers`` say, in task order; ``context`` is ``setup(*setup_args)``, built once in each worker.

    ``work`` and ``setup`` must be picklable by reference (module-level functions) and every task and ``setup_args``
    picklable.  ``workers``: an open :class:`Workers` to run on (``backend``, ``num_workers``, ``address`` and
    ``torch_threads`` are then its own); else one is opened for this call and closed after it."""
    if workers is not None:
        return workers.map(work, tasks, setup, setup_args)
    with Workers(backend, num_workers, address, torch_threads=torch_threads) as own:
        return own.map(work, tasks, setup, setup_args)


__all__ = ["KILL_VARIABLE", "Collector", "LocalCollector", "RayCollector", "Workers", "chunk_size", "init_ray", "ordered_map", "ray_available"]

"""Benchmark: decisions per second of the AEC env, the batched engine, and a network policy on it.

One run prints, for one game (``--game grinch`` (default) or ``gnoming``) and
random legal play at one table size (observations and masks built at every
decision, the random choice included), every figure beside the AEC env's.
For the Grinch:

* the AEC env ``grinch_env.grinch.env`` (the loop of ``benchmarks/bench_env.py``:
  ``env.last()``, a random legal action, ``env.step``), counted in decisions
  (the ``None`` steps of terminated agents are not decisions);
* the scalar-loop reference engine (``grinch_env.grinch._vector_reference``) at 64 games;
* :class:`grinch_env.grinch.vector.VectorGrinch` at each batch size (default 1, 64,
  1024, 8192), with the numpy and (if numba is installed) the numba
  observation backend, with ``copy=True`` (default, new arrays every step)
  and, for the large sizes, ``copy=False`` (the engine's own buffers);
* a 2x256 MLP forward pass (torch, 1 thread) on a batch of observations, alone
  and with the engine, as a proxy of a policy's cost (the trainer's own rollout: ``benchmarks/bench_learner.py``).

For *Gnoming A Round*: its AEC env ``grinch_env.gnoming.env``;
:class:`grinch_env.gnoming.vector.VectorGnoming` with the numpy fallback (a
loop of scalar games) at 64 games and the numba engine at each batch size
(default 1, 64, 1024; ``copy=False`` from 1024); the MLP with the engine as above
(the network sized for Gnoming's observation).

Times are wall-clock on whatever else runs on the machine; ``--cpu`` reports
per CPU-second of this process instead, steadier on a shared machine.

Usage::

    python benchmarks/bench_vector.py                      # about 45 s
    python benchmarks/bench_vector.py --seconds 1 --players 2 --sizes 1 64 1024
    python benchmarks/bench_vector.py --game gnoming --cpu    # Gnoming, 4 players
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np


def _clock(cpu: bool) -> Callable[[], float]:
    return time.process_time if cpu else time.perf_counter


def aec_decisions_per_second(num_players: int, seconds: float, cpu: bool, seed: int = 0, game: str = "grinch") -> float:
    """Return decisions per second of random legal play through the game's ``env()``."""
    from grinch_env.games import get_game

    env = get_game(game).harness.env(num_players=num_players)
    rng = np.random.default_rng(seed)
    clock = _clock(cpu)
    decisions = 0
    start = clock()
    while clock() - start < seconds:
        env.reset(seed=int(rng.integers(2**31)))
        for _agent in env.agent_iter():
            obs, _reward, termination, truncation, _info = env.last()
            if termination or truncation:
                action = None
            else:
                legal = np.flatnonzero(obs["action_mask"])
                action = int(legal[rng.integers(len(legal))])
                decisions += 1
            env.step(action)
    return decisions / (clock() - start)


def engine_decisions_per_second(engine, seconds: float, cpu: bool, policy: Callable | None = None, seed: int = 0) -> float:
    """Return decisions per second of ``engine`` (VectorGrinch-like) under random legal play, or ``policy(obs, mask)``."""
    rng = np.random.default_rng(seed)
    obs, mask, _seat = engine.reset(seed=seed)
    obs, mask = engine.step((rng.random(mask.shape, dtype=np.float32) * mask).argmax(axis=1))[:2]  # compile / warm up outside the timing
    clock = _clock(cpu)
    steps = 0
    start = clock()
    while clock() - start < seconds:
        if policy is None:
            actions = (rng.random(mask.shape, dtype=np.float32) * mask).argmax(axis=1)  # uniform over legal actions
        else:
            actions = policy(obs, mask)
        obs, mask, _seat, _rewards, _dones = engine.step(actions)
        steps += 1
    return steps * engine.num_envs / (clock() - start)


def mlp_policy(hidden: int = 256, game: str = "grinch"):
    """Return a policy ``(obs, mask) -> actions``: a 2-layer MLP forward and a masked argmax (torch, no grad)."""
    import torch

    from grinch_env.games import get_game

    OBS_SIZE, NUM_ACTIONS = get_game(game).obs_size, get_game(game).num_actions  # noqa: N806

    net = torch.nn.Sequential(
        torch.nn.Linear(OBS_SIZE, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, NUM_ACTIONS)
    )

    def policy(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            logits = net(torch.from_numpy(obs))
            logits[torch.from_numpy(mask) == 0] = -torch.inf
            return logits.argmax(dim=1).numpy()

    return policy


def mlp_forward_per_second(batch: int, seconds: float, cpu: bool) -> float:
    """Return observations per second through :func:`mlp_policy` alone (random inputs)."""
    from grinch_env.grinch.encoding import OBS_SIZE
    from grinch_env.grinch.game import NUM_ACTIONS

    policy = mlp_policy()
    obs = np.random.default_rng(0).random((batch, OBS_SIZE), dtype=np.float32)
    mask = np.ones((batch, NUM_ACTIONS), dtype=np.int8)
    clock = _clock(cpu)
    calls = 0
    start = clock()
    while clock() - start < seconds:
        policy(obs, mask)
        calls += 1
    return calls * batch / (clock() - start)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", choices=("grinch", "gnoming"), default="grinch", help="the game (default grinch)")
    parser.add_argument("--seconds", type=float, default=2.0, help="time per measurement (default 2)")
    parser.add_argument("--players", type=int, default=4, help="table size (default 4)")
    parser.add_argument("--sizes", type=int, nargs="+", default=None, help="batch sizes of the engine (default grinch 1 64 1024 8192, gnoming 1 64 1024)")
    parser.add_argument("--cpu", action="store_true", help="per CPU-second of this process instead of wall-clock")
    parser.add_argument("--no-training", action="store_true", help="skip the network measurements (the trainer's rollout: benchmarks/bench_learner.py)")
    args = parser.parse_args(argv)

    import torch

    from grinch_env.games import get_game

    spec = get_game(args.game)
    if args.players not in spec.player_counts():
        parser.error(f"--players {args.players} is not a table size of {spec.title}: choose from {spec.min_players}..{spec.max_players}")
    torch.set_num_threads(1)  # the trainer's default on this shared machine
    n, sec, cpu, game = args.players, args.seconds, args.cpu, args.game
    rows: list[tuple[str, float]] = []
    aec = aec_decisions_per_second(n, sec, cpu, game=game)
    rows.append((f"AEC env ({spec.package}.env)", aec))
    if game == "grinch":
        from grinch_env.grinch._vector_reference import ReferenceVectorGrinch
        from grinch_env.grinch.vector import VectorGrinch as Engine

        rows.append(("reference engine (scalar loop), 64 games", engine_decisions_per_second(ReferenceVectorGrinch(64, n, seed=0), sec, cpu)))
        sizes = args.sizes or [1, 64, 1024, 8192]
        runs = [(backend, sizes) for backend in ["numpy"] + (["numba"] if Engine(1).backend == "numba" else [])]
    else:
        from grinch_env.gnoming.vector import VectorGnoming as Engine

        sizes = args.sizes or [1, 64, 1024]
        runs = [("numpy", [64])] + ([("numba", sizes)] if Engine(1).backend == "numba" else [])
    name = Engine.__name__
    for backend, batch_sizes in runs:
        for b in batch_sizes:
            rate = engine_decisions_per_second(Engine(b, n, seed=0, backend=backend), sec, cpu)
            rows.append((f"{name} {b} games, {backend}" + (" (scalar game loop)" if game == "gnoming" and backend == "numpy" else ""), rate))
            if b >= 1024:
                rate = engine_decisions_per_second(Engine(b, n, seed=0, backend=backend, copy=False), sec, cpu)
                rows.append((f"{name} {b} games, {backend}, copy=False", rate))
    if not args.no_training:
        b = 1024
        rows.append((f"MLP 2x256 forward alone, batch {b}", mlp_forward_per_second(b, sec, cpu)))
        engine = Engine(b, n, seed=0)
        rows.append((f"{name} {b} games ({engine.backend}) + MLP 2x256 policy", engine_decisions_per_second(engine, sec, cpu, mlp_policy(game=game))))

    unit = "per CPU-second" if cpu else "per second"
    print(f"{spec.title}, {n} players, decisions {unit} (x AEC env)")
    width = max(len(name) for name, _ in rows)
    for name, rate in rows:
        print(f"{name:<{width}}  {rate:>12,.0f}  {rate / aec:8.1f}x")


if __name__ == "__main__":
    main()

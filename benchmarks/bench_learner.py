"""Benchmark: the general learner's samples per second beside the engine's steps per second, in one run.

For one game and table size it prints, per CPU-second of this process (one
torch thread; steadier than wall time on a shared machine):

* the batched engine alone (random legal actions, ``num_envs`` games);
* the token encoder (``grinch_env.<game>.tokens.encode_batch``) on those observations;
* the token network's forward pass on them, and at the search's small batches (8 rows) under ``no_grad`` and
  ``inference_mode`` side by side (the search and the learner's greedy play use the latter);
* the learner's rollout (``training.learner.rollout.collect``: engine + tokens + network, self-play);
* one PPO and one DMC update pass over that rollout;
* the resulting end-to-end training rate of each family (rollout + update).

Usage::

    python benchmarks/bench_learner.py                         # Gnoming 3 players, about a minute
    python benchmarks/bench_learner.py --game grinch --players 2
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from grinch_env.games import get_game  # noqa: E402
from training.learner.algos import ppo_update  # noqa: E402
from training.learner.config import load_config  # noqa: E402
from training.learner.rollout import collect, tokens_module  # noqa: E402
from training.learner.run import build_net  # noqa: E402


def _cpu(fn):
    start = time.process_time()
    out = fn()
    return out, time.process_time() - start


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python benchmarks/bench_learner.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--game", default="gnoming", choices=["gnoming", "grinch"])
    p.add_argument("--players", type=int, default=None, help="table size (default: 3 for Gnoming, 2 for the Grinch)")
    p.add_argument("--envs", type=int, default=32, help="games played at once")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    n = args.players or (3 if args.game == "gnoming" else 2)
    cfg = load_config(None, [f"game={args.game}", f"num_players={n}", f"num_envs={args.envs}"])
    spec = get_game(args.game)
    tok = tokens_module(args.game)
    rng = np.random.default_rng(0)

    engine = spec.vector(num_envs=args.envs, num_players=n, seed=0, reward_mode=cfg.reward_mode)
    obs, mask, _ = engine.reset(seed=0)
    kept = []

    def play(steps=2000):
        nonlocal obs, mask
        for _ in range(steps):
            legal = mask.astype(np.float64)
            a = (rng.random(legal.shape) * legal).argmax(1)
            obs, mask, _, _, _ = engine.step(a)
            if len(kept) < 20:
                kept.append(obs.copy())
        return steps * args.envs

    steps, t = _cpu(play)
    print(f"{spec.title}, {n} players, {args.envs} games at once, per CPU-second (1 thread)")
    print(f"  engine alone (random legal actions)      {steps / t:10,.0f} steps/s")
    batch = np.concatenate(kept)
    _, t = _cpu(lambda: [tok.encode_batch(batch[i:i + args.envs]) for i in range(0, len(batch), args.envs)])
    print(f"  token encoder                            {len(batch) / t:10,.0f} samples/s")
    net = build_net(cfg).eval()
    st, at = (torch.from_numpy(x) for x in tok.encode_batch(batch))
    with torch.no_grad():
        net(st[:args.envs], at[:args.envs])  # warm-up: the first call allocates
        _, t = _cpu(lambda: [net(st[i:i + args.envs], at[i:i + args.envs]) for i in range(0, len(batch), args.envs)])
    print(f"  network forward ({args.envs} at a time)          {len(batch) / t:10,.0f} samples/s")
    # the search's calls are small (its copies of one decision, ~8 rows): per-call overhead decides, so both autograd modes
    small = [(st[i:i + 8], at[i:i + 8]) for i in range(0, len(batch) - 7, 8)]
    for mode, ctx in (("no_grad", torch.no_grad), ("inference_mode", torch.inference_mode)):
        with ctx():
            _, t = _cpu(lambda: [net(s, a) for s, a in small])
        print(f"  network forward (8 at a time, {mode:>14})   {len(small) / t:10,.0f} calls/s")
    roll, t_roll = _cpu(lambda: collect(engine, net, args.game, rng))
    net.train()
    _, t_up = _cpu(lambda: ppo_update(net, torch.optim.Adam(net.parameters(), lr=1e-4), roll, cfg, rng))
    net.eval()
    k = len(roll.actions)
    print(f"  ppo: rollout (engine + tokens + net)      {k / t_roll:10,.0f} samples/s   ({roll.games} games, {k} samples)")
    print(f"  ppo: update ({cfg.ppo.update_epochs} epoch(s), minibatch {cfg.minibatch_size})   {k / t_up:10,.0f} samples/s")
    print(f"  ppo: training end to end                {k / (t_roll + t_up):10,.0f} samples/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The look-ahead distilled into ``V``: does the 2-player network alone reach its own look-ahead's level?

The look-ahead (``play=lookahead``) values two kinds of discard by the rules instead of ``V``: the last discard of a
round (the final hand: its best open row plus ``W`` after it plus its bonus) and a Who's second discard (the mean over
every pair of unseen cards it may draw next of the best final hand). ``V`` alone picks the look-ahead's discard 0.75
of the time at fit 5 (twenty-sixth session). Here the run's explorer (fit ``FIT``, as its next generation would play)
plays ``GAMES`` games; at every such discard each legal afterstate is recorded with the look-ahead's worth of it (every
sibling, not only the one played). ``V`` of fit ``FIT`` is then fine-tuned on batches half of the run's own records of
generation ``GEN`` (the Monte-Carlo targets it was fitted to: the round's points plus ``W`` after it) and half of these
(the look-ahead's worths), and written as one more fitted generation of a copy of the run, ``OUT`` (its ``W`` and ``G``
are fit ``FIT``'s), to be played by the harness as ``OUT:play=value``.

    OMP_NUM_THREADS=1 PYTHONPATH=. python docs/results/learner_grinch_draws/distill_lookahead.py play RUN FIT GAMES SEED PROCESSES DATA.npz
    OMP_NUM_THREADS=1 PYTHONPATH=. python docs/results/learner_grinch_draws/distill_lookahead.py fit RUN FIT GEN DATA.npz STEPS OUT

docs/results/learner_grinch.md, twenty-seventh session.
"""
from __future__ import annotations

import copy
import sys
from multiprocessing import Pool
from pathlib import Path

import numpy as np
import torch
from last_round_win import run_explorer  # this folder's last_round_win.py: the run's generation play of one fit

from grinch_env.games import get_game
from grinch_env.grinch import encoding as enc
from grinch_env.grinch.cards import NUM_CARDS
from grinch_env.grinch.game import DRAW_PILE_ACTION
from training.learner.afterstate import LaterValue, Value, legal_features, scorer

_W: dict = {}


def _init(run: str, fit: int) -> None:
    _W["explorer"], fitted = run_explorer(run, fit)
    _W["look"] = scorer(Value.from_state(fitted["value"]), LaterValue(Value.from_state(fitted["later"])), "lookahead")


def _play(seed: int) -> dict[str, np.ndarray]:
    explorer, look = _W["explorer"], _W["look"]
    spec = get_game("grinch")
    rng = np.random.default_rng(seed)
    game = spec.new_game(2, int(rng.integers(2**62)))
    encoder = spec.encoder()
    xs, ys, ids, kinds = [], [], [], []
    while not game.done:
        view = encoder.observe(game, game.current)
        obs, mask = np.asarray(view["observation"], np.float32), np.asarray(view["action_mask"]).astype(bool)
        action, _ = explorer(obs, mask, rng) if mask.sum() > 1 else (int(np.flatnonzero(mask)[0]), 0.0)
        size = int((obs[:NUM_CARDS] > 0.5).sum()) - 1
        who = obs[enc.GRINCH_SEAT] < 0.5
        if mask[:DRAW_PILE_ACTION].sum() >= 2 and (size == 5 or (size == 4 and who)):
            x, _, _ = legal_features(obs[None], mask[None])
            _, worth = look.discards(obs, mask)
            xs.append(x)
            ys.append(worth)
            ids.append(np.full(len(worth), len(kinds)))
            kinds.append(size)
        game.step(action)
    return {"x": np.concatenate(xs), "y": np.concatenate(ys).astype(np.float32), "decision": np.concatenate(ids),
            "kind": np.array(kinds, np.int64)}


def play(run: str, fit: int, games: int, seed: int, processes: int, out: str) -> None:
    seeds = [int(s) for s in np.random.default_rng([seed, 31]).integers(2**62, size=games)]
    with Pool(processes, _init, (run, fit)) as pool:
        recs = pool.map(_play, seeds, chunksize=25)
    offset, decisions, kinds = 0, [], []
    for r in recs:
        decisions.append(r["decision"] + offset)
        kinds.append(r["kind"])
        offset += len(r["kind"])
    np.savez_compressed(out, x=np.concatenate([r["x"] for r in recs]), y=np.concatenate([r["y"] for r in recs]),
                        decision=np.concatenate(decisions), kind=np.concatenate(kinds))
    print(f"{out}: {offset} discards ({sum(int((k == 5).sum()) for k in kinds)} last, the rest a Who's second) of {games} games, "
          f"{sum(len(r['y']) for r in recs)} afterstates", flush=True)


def _agreement(value: Value, x: np.ndarray, y: np.ndarray, decision: np.ndarray) -> tuple[float, float]:
    """(share of decisions where ``value``'s best afterstate is the look-ahead's, the look-ahead's worth lost a decision)."""
    v = value(x)
    starts = np.flatnonzero(np.r_[True, decision[1:] != decision[:-1]])
    agree, lost = [], []
    for a, b in zip(starts, np.r_[starts[1:], len(decision)]):
        mine, best = a + int(np.argmax(v[a:b])), a + int(np.argmax(y[a:b]))
        agree.append(mine == best)
        lost.append(y[best] - y[mine])
    return float(np.mean(agree)), float(np.mean(lost))


def fit(run: str, fit_index: int, gen: int, data: str, steps: int, out: str) -> None:
    ck = torch.load(f"{run}/latest.pt", weights_only=True)
    fitted = ck["values"][fit_index]
    base = Value.from_state(fitted["value"])
    later = LaterValue(Value.from_state(fitted["later"]))
    recs = np.load(f"{run}/data/gen{gen}.npz")
    mc_x = recs["x"].astype(np.float32)
    mc_y = recs["round"] + later(recs["used_after"], recs["rounds_after"])
    d = np.load(data)
    cut_decision = int(d["decision"].max() * 0.9)
    train, held = d["decision"] < cut_decision, d["decision"] >= cut_decision
    net = copy.deepcopy(base.net).train()
    torch.manual_seed(0)
    opt = torch.optim.Adam(net.parameters(), 3e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    mx, my = torch.from_numpy(mc_x), torch.from_numpy(((mc_y - base.mu) / base.sd).astype(np.float32))
    lx, ly = torch.from_numpy(d["x"][train]), torch.from_numpy(((d["y"][train] - base.mu) / base.sd).astype(np.float32))
    rng = np.random.default_rng(0)
    for _ in range(steps):
        i, j = torch.from_numpy(rng.integers(0, len(my), 256)), torch.from_numpy(rng.integers(0, len(ly), 256))
        loss = torch.nn.functional.mse_loss(net(torch.cat([mx[i], lx[j]])).squeeze(-1), torch.cat([my[i], ly[j]]))
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    tuned = Value(net.eval(), base.mu, base.sd)
    hx, hy, hd = d["x"][held], d["y"][held], d["decision"][held]
    for name, v in (("fit", base), ("distilled", tuned)):
        agree, lost = _agreement(v, hx, hy, hd)
        resid = float(np.mean((v(hx) - hy) ** 2))
        print(f"{name:>9}: held-out look-ahead discards: picks the look-ahead's {agree:.3f}, loses {lost:.3f} points a decision, "
              f"mean squared error {resid:.2f}", flush=True)
    held_mc = slice(int(len(my) * 0.9), None)
    for name, v in (("fit", base), ("distilled", tuned)):
        p = v(mc_x[held_mc])
        print(f"{name:>9}: the last tenth of generation {gen}'s records: explained variance "
              f"{1 - np.var(mc_y[held_mc] - p) / np.var(mc_y[held_mc]):.4f}", flush=True)
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    new = dict(ck)
    new["values"] = list(ck["values"][:fit_index + 1]) + [{**fitted, "value": tuned.state()}]
    new["config"] = {**ck["config"], "run_name": out_dir.name, "checkpoint_dir": str(out_dir.parent)}
    torch.save(new, out_dir / "latest.pt")
    print(f"wrote {out_dir / 'latest.pt'}: generation {fit_index + 1} is fit {fit_index} with V distilled", flush=True)


def main() -> None:
    cmd, args = sys.argv[1] if len(sys.argv) > 1 else "", sys.argv[2:]
    if cmd == "play" and len(args) == 6:
        play(args[0], int(args[1]), int(args[2]), int(args[3]), int(args[4]), args[5])
    elif cmd == "fit" and len(args) == 6:
        fit(args[0], int(args[1]), int(args[2]), args[3], int(args[4]), args[5])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()

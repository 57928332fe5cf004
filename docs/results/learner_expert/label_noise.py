"""How reproducible are the search's labels?  Search the same held-out positions twice with independent
determinisations at each budget and count, by kind of decision (the network's first choice: a discard, the blind
draw, a pile top, a row to score), how often the two searches choose the same action and how often each keeps the
network's first choice.  The positions are the last 10% of the decisions in an expert run's first replay generation,
searched with the run's starting network (its anchor).  docs/results/learner_grinch.md, eighteenth session.

    OMP_NUM_THREADS=1 PYTHONPATH=. python docs/results/learner_expert/label_noise.py checkpoints/grinch_ei_g1 400 8,32
    OMP_NUM_THREADS=1 PYTHONPATH=. python docs/results/learner_expert/label_noise.py checkpoints/grinch_ei_g1 400 8:0,32:0,8:end

A budget is ``samples`` (the run's horizon) or ``samples:horizon`` (``round``, ``end`` or an int).  With a fourth
argument, an agent name (e.g. ``expectimax``), each search's first labels and the network's first choice are also
compared with that agent's choice on the same positions (a yardstick of the labels' direction, not a teacher)::

    OMP_NUM_THREADS=1 PYTHONPATH=. python docs/results/learner_expert/label_noise.py checkpoints/grinch_ei_g1 400 8,8:0 expectimax
"""
import sys

import numpy as np
import torch

from grinch_env.grinch.game import DRAW_DISCARD_BASE, DRAW_PILE_ACTION, SCORE_BASE
from training.learner.expert import ExpertRun
from training.learner.search import NetSearch

torch.set_num_threads(1)
run = ExpertRun.load(sys.argv[1])
data = run.replay[0]
n = len(data["labels"])
idx = np.arange(int(0.9 * n), n)[: int(sys.argv[2])]
obs = [data["obs"][i].astype(np.float32) for i in idx]
masks = [data["masks"][i].astype(bool) for i in idx]
top = data["cands"][idx, 0]
kind = np.where(top < DRAW_PILE_ACTION, "discard", np.where(top == DRAW_PILE_ACTION, "blind draw",
                np.where(top < SCORE_BASE, "pile top", "score")))
assert DRAW_DISCARD_BASE == DRAW_PILE_ACTION + 1


def search_all(samples: int, horizon, seed: int) -> np.ndarray:
    s = NetSearch(run.anchor, "grinch", "ppo", run.cfg.credit, run.cfg.reward_mode, samples, run.cfg.search.top_k, horizon)
    rng = np.random.default_rng(seed)
    out = []
    for b in range(0, len(obs), 32):
        out += s.choose_many(obs[b:b + 32], masks[b:b + 32], [np.random.default_rng(rng.integers(2**62)) for _ in obs[b:b + 32]])
    return np.array(out)


yard = None
if len(sys.argv) > 4:
    from grinch_env.agents import make_agent

    agent = make_agent(sys.argv[4], num_players=2, game="grinch", seed=0)
    agent.reset(0)
    yard = np.array([agent.act(o, m) for o, m in zip(obs, masks)])
    print(f"{sys.argv[4]}: the network's first choice agrees " + ", ".join(
        f"{k} {np.mean(top[kind == k] == yard[kind == k]):.3f}" for k in ("discard", "blind draw", "pile top", "score")))
print(f"{len(idx)} positions: " + ", ".join(f"{k} {int((kind == k).sum())}" for k in ("discard", "blind draw", "pile top", "score")))
for budget in sys.argv[3].split(","):
    samples, _, horizon = budget.partition(":")
    samples, horizon = int(samples), (int(horizon) if horizon.isdigit() else horizon or run.cfg.search.horizon)
    a, b = search_all(samples, horizon, 1), search_all(samples, horizon, 2)
    parts = [f"all: same {np.mean(a == b):.3f}, first choice kept {np.mean(np.r_[a, b] == np.r_[top, top]):.3f}"]
    for k in ("discard", "blind draw", "pile top", "score"):
        m = kind == k
        parts.append(f"{k}: same {np.mean(a[m] == b[m]):.3f}, kept {np.mean(np.r_[a[m], b[m]] == np.r_[top[m], top[m]]):.3f}")
    print(f"samples {samples}, horizon {horizon}: " + "; ".join(parts), flush=True)
    if yard is not None:
        print(f"  its labels agree with {sys.argv[4]}: " + ", ".join(
            f"{k} {np.mean(a[kind == k] == yard[kind == k]):.3f}" for k in ("discard", "blind draw", "pile top", "score")), flush=True)

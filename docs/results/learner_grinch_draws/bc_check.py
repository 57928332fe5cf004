"""Can the learner's network represent greedy's Grinch choices?  Behaviour-clone greedy's own decisions (greedy
against greedy, 2 players) into a fresh token network of the default config's size and measure, on held-out games,
how often its first choice is greedy's, by kind of decision (draws with the pile and a seen top legal, discards,
score rows).  A diagnosis only (issue #23 forbids shipping weights learned from another agent):
if the network fits greedy's draws, the blind draws of the learned policy are a failure of the learning signal,
not of the input.  docs/results/learner_grinch.md, eleventh session.

    OMP_NUM_THREADS=1 PYTHONPATH=. python docs/results/learner_grinch_draws/bc_check.py [TRAIN_GAMES] [STEPS] [D_MODEL]
"""
import sys

import numpy as np
import torch

from grinch_env.grinch.game import DRAW_DISCARD_BASE, DRAW_PILE_ACTION, SCORE_BASE
from training.learner.net import TokenNet
from training.learner.probe import _decisions_against_greedy
from training.learner.rollout import encode

torch.set_num_threads(1)
train_games = int(sys.argv[1]) if len(sys.argv) > 1 else 300
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 3000
d = int(sys.argv[3]) if len(sys.argv) > 3 else 32


def collect(games, seed):
    rows = [(o, m, a) for o, m, a in _decisions_against_greedy("greedy", 2, games, seed) if m.sum() >= 2]
    obs = np.stack([r[0] for r in rows]).astype(np.float32)
    mask = np.stack([r[1] for r in rows]).astype(bool)
    act = np.array([r[2] for r in rows])
    kind = np.where(act >= SCORE_BASE, 2, np.where(act < DRAW_PILE_ACTION, 1, 0))  # 0 draw, 1 discard, 2 score
    assert (mask[kind == 0, DRAW_PILE_ACTION] & mask[kind == 0, DRAW_DISCARD_BASE:SCORE_BASE].any(1)).all()  # pile and a top
    return obs, mask, act, kind


tr, te = collect(train_games, 1), collect(100, 2)
print(f"decisions with a choice: train {len(tr[2])} ({train_games} games), held out {len(te[2])} (100 games)", flush=True)
net = TokenNet(d_model=d, layers=1, heads=4, ff=2 * d, value_global=True)
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
st_tr, at_tr = encode("grinch", tr[0])
st_te, at_te = encode("grinch", te[0])
m_tr, m_te = torch.from_numpy(tr[1]), torch.from_numpy(te[1])
a_tr = torch.from_numpy(tr[2])


def agreement(st, at, m, data):
    with torch.no_grad():
        logits = torch.cat([net(st[i:i + 2048], at[i:i + 2048])[0] for i in range(0, len(st), 2048)])
    pick = logits.masked_fill(~m, -1e9).argmax(1).numpy()
    ok = pick == data[2]
    out = {name: f"{ok[data[3] == k].mean():.3f} ({(data[3] == k).sum()})" for k, name in enumerate(["draw", "discard", "score"])}
    drew_blind = (pick == DRAW_PILE_ACTION)[data[3] == 0].mean()
    return f"all {ok.mean():.3f}; " + ", ".join(f"{k} {v}" for k, v in out.items()) + f"; blind {drew_blind:.2f} (greedy {(data[2] == DRAW_PILE_ACTION)[data[3] == 0].mean():.2f})"


rng = np.random.default_rng(0)
for step in range(1, steps + 1):
    idx = torch.from_numpy(rng.integers(0, len(a_tr), 256))
    logits = net(st_tr[idx], at_tr[idx])[0].masked_fill(~m_tr[idx], -1e9)
    loss = torch.nn.functional.cross_entropy(logits, a_tr[idx])
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % (steps // 6) == 0:
        print(f"step {step} loss {loss.item():.3f}\n  train {agreement(st_tr, at_tr, m_tr, tr)}\n  held  {agreement(st_te, at_te, m_te, te)}", flush=True)

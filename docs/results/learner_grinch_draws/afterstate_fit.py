"""Can any network read `expectimax`'s discards from the afterstate alone?  Fit an MLP that scores every legal discard
from a complete rules-level description of the hand it keeps (its suit x rank counts, the bonus cards it holds,
its open-row values and bonus) beside the public context (the unseen cards' suit x rank counts, the used rows,
the rounds left, the turn, the role), softmax over the legal discards, on the teacher's discards cached by
``bc_teacher.py`` (run it first: ``/tmp/bc_expectimax_2000_1.npz`` and ``/tmp/bc_expectimax_100_2.npz``), and print
the held-out agreement by turn beside the teacher's agreement with itself re-seeded (``bc_teacher.py`` prints it:
0.723 on the discards).  A diagnosis for docs/results/learner_grinch.md (seventeenth session): if this MLP fits the
discards far better than the token network (0.59-0.61 held out), the token network's reading of the afterstate
is the limit; if not, the discards need the future the teacher samples.

    OMP_NUM_THREADS=1 PYTHONPATH=. python docs/results/learner_grinch_draws/afterstate_fit.py [WIDTH] [STEPS] [GAMES]

With ``GAMES`` > 0 the fitted MLP then plays the discards of one seat, `expectimax` its draws and rows, against
`expectimax` (seat-rotated paired games, seed 4242, as ``swap_kinds.py``, whose ``discard`` line is the same match
with a network's discards): does reading the teacher's discards better play better?
"""
import sys
import time

import numpy as np
import torch
from bc_teacher_data import features, load, mlp  # this folder's helper

from grinch_env.grinch import encoding as enc

torch.set_num_threads(1)
width = int(sys.argv[1]) if len(sys.argv) > 1 else 256
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 8000
match_games = int(sys.argv[3]) if len(sys.argv) > 3 else 0
tr, te = load(discards_only=True)
x_tr, m_tr = features(tr["obs"], tr["mask"])
x_te, m_te = features(te["obs"], te["mask"])
a_tr, a_te = torch.from_numpy(tr["act"]), te["act"]
x_tr, m_tr, x_te, m_te = map(torch.from_numpy, (x_tr, m_tr, x_te, m_te))
turn_te = te["obs"][:, enc.TURN:enc.TURN + 3].argmax(1)
print(f"discards: train {len(a_tr)}, held out {len(a_te)}; {x_tr.shape[-1]} features per discard", flush=True)
torch.manual_seed(0)
net = mlp(x_tr.shape[-1], width)
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
rng = np.random.default_rng(0)
start = time.process_time()


def agree(x, m, a):
    with torch.no_grad():
        s = torch.cat([net(x[i:i + 4096]).squeeze(-1) for i in range(0, len(x), 4096)]).masked_fill(~m.bool(), -1e9)
    return (s.argmax(1).numpy() == np.asarray(a))


for step in range(1, steps + 1):
    idx = torch.from_numpy(rng.integers(0, len(a_tr), 256))
    s = net(x_tr[idx]).squeeze(-1).masked_fill(~m_tr[idx].bool(), -1e9)
    loss = torch.nn.functional.cross_entropy(s, a_tr[idx])
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % (steps // 4) == 0:
        ok = agree(x_te, m_te, a_te)
        print(f"step {step}: cross-entropy {loss.item():.3f}; train {agree(x_tr[:8000], m_tr[:8000], a_tr[:8000]).mean():.3f}; held out "
              f"{ok.mean():.3f}, by turn " + " / ".join(f"{ok[turn_te == t].mean():.3f}" for t in range(3))
              + f" ({time.process_time() - start:.0f} CPU-s)", flush=True)

if match_games:
    from grinch_env.agents import make_agent
    from grinch_env.evaluation.evaluate import evaluate
    from grinch_env.grinch.game import DRAW_PILE_ACTION, SCORE_BASE

    net.eval()

    class MLPDiscards:
        """The fitted MLP's discards, `expectimax`'s draws and rows."""

        name = "MLP discards"

        def __init__(self) -> None:
            self.expert = make_agent("expectimax", num_players=2, game="grinch")

        def reset(self, seed=None):
            self.expert.reset(seed)

        def act(self, observation, action_mask):
            mask = np.asarray(action_mask).astype(bool)
            if mask[SCORE_BASE:].any() or not mask[:DRAW_PILE_ACTION].any():
                return self.expert.act(observation, action_mask)
            x, m = features(np.asarray(observation, np.float32)[None], mask[None])
            with torch.no_grad():
                s = net(torch.from_numpy(x)).squeeze(-1)[0].numpy()
            return int(np.flatnonzero(m[0])[np.argmax(s[m[0]])])

    res = evaluate([MLPDiscards(), "expectimax"], num_players=2, num_games=match_games, seed=4242, game="grinch")
    a, b = (res.per_agent[x] for x in res.agents)
    lo, hi = a["win_rate_ci"]
    print(f"MLP discards against expectimax, {match_games} games: win share {a['win_rate']:.3f} [{lo:.3f}, {hi:.3f}]; "
          f"mean total {a['mean_score']:.1f} against {b['mean_score']:.1f}", flush=True)

"""Can the token network compute the best last-turn discard from exact row values?  A probe of the action head alone.

At a Grinch last-turn discard no card comes before scoring, so the kept hand's worth is exact: ``expectimax`` plays
``bonus + max over open rows (row + W(unused - row, rounds left))`` (its row opportunity cost ``W``,
``grinch_env.grinch.agents.expectimax``), and each discard's action token already carries the kept hand's open-row
values and bonus.  This script takes the held-out and training decisions cached by ``bc_teacher.py``
(``/tmp/bc_expectimax_2000_1.npz`` and ``/tmp/bc_expectimax_100_2.npz``: run that first), keeps the last-turn discards
outside the last round (10,000 to train, 500 held out), fits one model to ``expectimax``'s choices there
(cross-entropy over the legal discards, Adam 1e-3, batches of 256) and prints, every STEPS / 4 steps, the held-out
agreement and how often its choice lies in ``expectimax``'s best set (ties included; the teacher is inside it on every
decision, 1.81 discards on average).  A diagnosis only (docs/results/learner_grinch.md, fifteenth session).

    OMP_NUM_THREADS=1 PYTHONPATH=. python docs/results/learner_grinch_draws/last_discard_probe.py MODEL [STEPS]

``MODEL``: ``mlp`` (a 2-layer ReLU MLP of width 64 per discard on 21 raw numbers: the token's 7 open-row values and
bonus, the 7 used-row flags, the 6 rounds-left flags), or ``token`` followed by comma-separated options:
``token`` (the learner's default network, d 32, one layer), ``token,raw_dense``, ``token,raw_dense,action_context``
(``training.learner.net.TokenNet`` options), ``token,noid`` (the action tokens' card column set to 0, no card: on these
discards, whose second-card column is 0 already, what ``action_card_ids=False`` does but for one constant embedding
added to every token), ``token,cardfeat`` (the
discard tokens also carry the discarded card's suit, rank and bonus columns, as its card token does, in dense columns
12 to 22: ``encode_batch``'s ``action_cards``, the learner's ``net.token_options: [action_cards]``) and combinations such as
``token,noid,cardfeat``.
"""
import sys

import numpy as np
import torch
from last_turn import best_discards, last_turn_discards  # this folder's helper (the script's folder is on the path)

from grinch_env.grinch import encoding as enc
from grinch_env.grinch import tokens as rt
from grinch_env.grinch.game import DRAW_PILE_ACTION
from training.learner.net import TokenNet

NET_OPTIONS = {"raw_dense", "action_context"}
PROBE_OPTIONS = {"noid", "cardfeat"}
model = sys.argv[1] if len(sys.argv) > 1 else "token"
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 4000
kind, *options = model.split(",")
if kind not in ("mlp", "token") or (kind == "mlp" and options) or set(options) - NET_OPTIONS - PROBE_OPTIONS:
    raise SystemExit(f"MODEL must be mlp, or token followed by options from {sorted(NET_OPTIONS | PROBE_OPTIONS)}, got {model!r}")
if steps < 4:
    raise SystemExit(f"STEPS must be at least 4, got {steps}")
torch.set_num_threads(1)
torch.manual_seed(0)


def load(file: str):
    """The last-turn discards outside the last round: tokens (or MLP inputs), masks, the teacher's choices, observations."""
    z = np.load(file)
    obs, mask, act = z["obs"], z["mask"], z["act"]
    sel = last_turn_discards(obs, z["kind"])
    st, at = rt.encode_batch(obs[sel], action_cards="cardfeat" in options)  # the learner's net.token_options: [action_cards]
    if kind == "mlp":
        x = np.concatenate([at[:, :DRAW_PILE_ACTION, rt.NUM_IDS:rt.NUM_IDS + 8],
                            np.broadcast_to(obs[sel, None, enc.ROW_USED:enc.ROW_USED + 7], (len(sel), DRAW_PILE_ACTION, 7)),
                            np.broadcast_to(obs[sel, None, enc.ROUNDS_LEFT:enc.ROUNDS_LEFT + 6], (len(sel), DRAW_PILE_ACTION, 6))], -1)
        return (torch.tensor(x),), torch.tensor(mask[sel][:, :DRAW_PILE_ACTION]), torch.tensor(act[sel]), obs[sel]
    if "noid" in options:
        at[..., rt.CARD] = 0
    return (torch.tensor(st), torch.tensor(at)), torch.tensor(mask[sel]), torch.tensor(act[sel]), obs[sel]


x_tr, m_tr, a_tr, _ = load("/tmp/bc_expectimax_2000_1.npz")
x_te, m_te, a_te, o_te = load("/tmp/bc_expectimax_100_2.npz")
if kind == "mlp":
    net = torch.nn.Sequential(torch.nn.Linear(x_tr[0].shape[-1], 64), torch.nn.ReLU(), torch.nn.Linear(64, 64), torch.nn.ReLU(),
                              torch.nn.Linear(64, 1))

    def logits(*x):
        return net(*x).squeeze(-1)
else:
    net = TokenNet(d_model=32, layers=1, heads=4, ff=64, value_global=True, **{o: True for o in options if o in NET_OPTIONS})

    def logits(*x):
        return net(*x)[0]
print(f"{len(a_tr)} training and {len(a_te)} held-out last-turn discards outside the last round; model {model}", flush=True)

best = best_discards(o_te, m_te.numpy())

opt = torch.optim.Adam(net.parameters(), 1e-3)
rng = np.random.default_rng(0)
for step in range(steps + 1):
    idx = torch.from_numpy(rng.integers(0, len(a_tr), 256))
    loss = torch.nn.functional.cross_entropy(logits(*(x[idx] for x in x_tr)).masked_fill(~m_tr[idx], -1e9), a_tr[idx])
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % (steps // 4) == 0:
        with torch.no_grad():
            choice = logits(*x_te).masked_fill(~m_te, -1e9).argmax(1).numpy()
        inside = best[np.arange(len(choice)), choice].mean()
        print(f"step {step}: cross-entropy {loss.item():.3f}; held out: agreement {(choice == a_te.numpy()).mean():.3f}, "
              f"inside the teacher's best set {inside:.3f}", flush=True)

"""Can the network fit the league run's labels?  Refit the starting network (the run's anchor) on the first three
generations of the replay stored in the run's latest.pt and measure, on them and on the held-out fourth, the soft
cross-entropy against the search's values, the agreement with the search's choice (decisions with two or more
candidates) and the targets' own entropy (the cross-entropy's floor).  docs/results/learner_search.md, tenth session.

    OMP_NUM_THREADS=1 PYTHONPATH=. python docs/results/learner_expert/fit_check.py checkpoints/learner_gnoming_expert_league
"""
import copy
import sys

import numpy as np
import torch

from training.learner.expert import ExpertRun, soft_target_loss
from training.learner.rollout import net_tokens


def measure(net, data, game, temperature):
    """``(soft cross-entropy, agreement with the search's choice, the targets' entropy)`` on the labelled decisions
    with two or more candidates of ``data`` (a replay generation's arrays)."""
    has = data['labels'] >= 0
    st, at = net_tokens(net, game, data["obs"][has])  # the network's own token options
    with torch.no_grad():
        logits, _, _ = net(st, at)
    mask = torch.from_numpy(data['masks'][has].astype(bool))
    cands = torch.from_numpy(data['cands'][has])
    vals = torch.from_numpy(data['cand_values'][has])
    multi = (cands >= 0).sum(1) >= 2
    ce = soft_target_loss(logits[multi], cands[multi], vals[multi], temperature).item()
    agree = (logits.masked_fill(~mask, -1e9).argmax(1) == torch.from_numpy(data['labels'][has]))[multi].float().mean().item()
    v = (vals / temperature).masked_fill(cands < 0, -1e9)
    p = torch.softmax(v, 1)
    ent = -(p * torch.log(p.clamp_min(1e-12))).sum(1)[multi].mean().item()
    return ce, agree, ent


if __name__ == "__main__":
    torch.set_num_threads(1)
    base = ExpertRun.load(sys.argv[1])
    rep = base.replay
    train = {k: np.concatenate([d[k] for d in rep[:3]]) for k in rep[0]}
    held = rep[3]
    game, temperature = base.cfg.game, base.cfg.temperature
    for kl, epochs, lr in [(0.3, 8, 3e-4), (0.0, 8, 3e-4), (0.0, 40, 3e-4)]:
        run = copy.deepcopy(base)
        run.net.load_state_dict(base.anchor.state_dict())
        run.cfg = run.cfg.model_copy(update={'kl_coef': kl, 'epochs': epochs})
        run.opt = torch.optim.Adam(run.net.parameters(), lr=lr, eps=1e-5)
        before_t, before_h = measure(run.net, train, game, temperature), measure(run.net, held, game, temperature)
        run.distil(train)
        t, h = measure(run.net, train, game, temperature), measure(run.net, held, game, temperature)
        print(f"kl {kl} epochs {epochs}: train CE {before_t[0]:.3f}->{t[0]:.3f} agree {before_t[1]:.3f}->{t[1]:.3f} (target entropy {t[2]:.3f}); "
              f"held-out CE {before_h[0]:.3f}->{h[0]:.3f} agree {before_h[1]:.3f}->{h[1]:.3f} (target entropy {h[2]:.3f})", flush=True)

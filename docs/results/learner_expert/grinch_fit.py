"""Distil one generation of the Grinch's expert-iteration labels in several ways and measure each fit held out.

The run directory holds one generation's replay (``training.learner.expert`` with ``generations: 1``): its decisions
in game order, the search's choice, its candidates (the network's top_k, best first) and their mean values.  The
first 90% of the decisions train, the last 10% (other games) are held out.  Every variant starts again from the
run's anchor (the network the generation was played and searched with) and is saved as its own expert checkpoint
``<run dir>_<variant>`` (a harness agent), to be played with ``python -m grinch_env.evaluation``.
docs/results/learner_grinch.md, eighteenth session.

    OMP_NUM_THREADS=1 PYTHONPATH=. python docs/results/learner_expert/grinch_fit.py checkpoints/grinch_ei_g1 choice2,choice4,soft2
"""
import copy
import sys

import numpy as np
import torch

from docs.results.learner_expert import fit_check
from training.learner.expert import ExpertRun
from training.learner.rollout import net_tokens

torch.set_num_threads(1)
VARIANTS = {  # name: (target, epochs, temperature, learning rate)
    "choice1": ("choice", 1, 0.02, 3e-4), "choice2": ("choice", 2, 0.02, 3e-4), "choice4": ("choice", 4, 0.02, 3e-4),
    "soft2": ("soft", 2, 0.02, 3e-4), "soft2t01": ("soft", 2, 0.01, 3e-4), "soft4": ("soft", 4, 0.02, 3e-4),
    "choice8lr1": ("choice", 8, 0.02, 1e-3), "choice16lr1": ("choice", 16, 0.02, 1e-3), "soft8lr1": ("soft", 8, 0.01, 1e-3),
}


def measure(net, data, temperature):
    """Held-out figures on the labelled decisions with two or more candidates (``fit_check.measure``): agreement with
    the search's choice, the soft cross-entropy; and the value head's explained variance on every decision."""
    ce, agree, _ = fit_check.measure(net, data, "grinch", temperature)
    st, at = net_tokens(net, "grinch", data["obs"])
    with torch.no_grad():
        _, _, value = net(st, at)
    y = data["targets"]
    return agree, ce, 1.0 - float(np.var(y - value.numpy())) / float(np.var(y))


base = ExpertRun.load(sys.argv[1])
data = base.replay[0]
n = len(data["labels"])
cut = int(0.9 * n)
train = {k: v[:cut] for k, v in data.items()}
held = {k: v[cut:] for k, v in data.items()}
multi = (data["labels"] >= 0) & ((data["cands"] >= 0).sum(1) >= 2)
gain = (data["cand_values"].max(1) - data["cand_values"][:, 0])[multi] * 100
print(f"{n} decisions ({multi.sum()} searched among 2+ candidates); the search's choice is the network's first in "
      f"{(data['labels'][multi] == data['cands'][multi, 0]).mean():.3f}; its mean value over the first's: mean {gain.mean():.2f} points, "
      f"quartiles {np.percentile(gain, [25, 50, 75]).round(2).tolist()}")
anchor = copy.deepcopy(base.net)
anchor.load_state_dict(base.anchor.state_dict())
a, ce, ev = measure(anchor, held, 0.02)
print(f"anchor: held out agreement {a:.3f}, soft CE {ce:.3f}, value EV {ev:.3f}")
for name in sys.argv[2].split(","):
    target, epochs, temperature, lr = VARIANTS[name]
    run = copy.deepcopy(base)
    run.net.load_state_dict(base.anchor.state_dict())
    run.cfg = run.cfg.model_copy(update={"target": target, "epochs": epochs, "temperature": temperature, "learning_rate": lr,
                                         "run_name": f"{base.cfg.run_name}_{name}"})
    run.opt = torch.optim.Adam(run.net.parameters(), lr=lr, eps=1e-5)
    run.rng = np.random.default_rng(0)
    torch.manual_seed(0)
    stats = run.distil(train)
    t = measure(run.net, train, temperature)
    h = measure(run.net, held, temperature)
    print(f"{name}: train agreement {t[0]:.3f} CE {t[1]:.3f} EV {t[2]:.3f}; held out agreement {h[0]:.3f} CE {h[1]:.3f} EV {h[2]:.3f}; "
          f"{stats}", flush=True)
    run.save()

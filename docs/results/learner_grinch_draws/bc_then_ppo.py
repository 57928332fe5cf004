"""Is the learner's blind-draw habit where PPO's gradient leads, or a trap of its start?  Start the default Grinch PPO
run (configs/learner_grinch.yaml, 2 players) from a network behaviour-cloned on greedy's own choices (greedy against
greedy, as bc_check.py) with its value head fitted to the cloned policy's Monte-Carlo returns, then let PPO train it
for the default budget.  If PPO keeps greedy's draws (and improves elsewhere), the from-scratch runs are stuck in an
early local optimum (exploration); if it goes back to blind draws, its gradient points there (the learning signal).
A diagnosis only: issue #23 forbids shipping weights learned from another agent.  docs/results/learner_grinch.md,
twelfth session.

    OMP_NUM_THREADS=1 PYTHONPATH=. python docs/results/learner_grinch_draws/bc_then_ppo.py   # writes checkpoints/grinch_bc_ppo (+ _start)
    OMP_NUM_THREADS=1 python -m training.learner.run --resume checkpoints/grinch_bc_ppo          # PPO for the default 720 CPU-s + report
"""
import shutil

import numpy as np
import torch

from training.learner.config import load_config
from training.learner.formats import LATEST
from training.learner.probe import _decisions_against_greedy
from training.learner.rollout import collect, encode
from training.learner.run import Trainer

torch.set_num_threads(1)
cfg = load_config("configs/learner_grinch.yaml", ["run_name=grinch_bc_ppo", "eval.final_games=1200", "eval.final_opponents=[greedy]"])
trainer = Trainer(cfg)
net = trainer.net

rows = [(o, m, a) for o, m, a in _decisions_against_greedy("greedy", 2, 300, 1) if m.sum() >= 2]
st, at = encode("grinch", np.stack([r[0] for r in rows]).astype(np.float32))
mask = torch.from_numpy(np.stack([r[1] for r in rows]).astype(bool))
act = torch.tensor([r[2] for r in rows])
print(f"behaviour cloning on {len(act)} of greedy's decisions with a choice (300 games)", flush=True)
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
rng = np.random.default_rng(0)
for step in range(1, 3001):
    idx = torch.from_numpy(rng.integers(0, len(act), 256))
    loss = torch.nn.functional.cross_entropy(net(st[idx], at[idx])[0].masked_fill(~mask[idx], -1e9), act[idx])
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 500 == 0:
        print(f"  step {step} cross-entropy {loss.item():.3f}", flush=True)

# the value head (its own layers only) fitted to the cloned policy's margin still to come, 16 rollouts of 64 games
vopt = torch.optim.Adam(net.value.parameters(), lr=1e-3)
for it in range(16):
    batch = collect(trainer.engine, net.eval(), "grinch", "ppo", rng, gae_lambda=1.0, credit="pad")
    for _ in range(2):
        for mb in np.array_split(rng.permutation(len(batch.actions)), max(1, len(batch.actions) // 512)):
            s, a = encode("grinch", batch.obs[mb])
            v_loss = 0.5 * ((net(s, a)[2] - torch.from_numpy(batch.returns[mb])) ** 2).mean()
            vopt.zero_grad()
            v_loss.backward()
            vopt.step()
    print(f"  value warm-up {it}: loss {v_loss.item():.4f}", flush=True)

net.eval()
cfg.run_dir.mkdir(parents=True, exist_ok=True)
trainer.save()
start = cfg.run_dir.parent / "grinch_bc_ppo_start"
start.mkdir(exist_ok=True)
shutil.copy(cfg.run_dir / LATEST, start / LATEST)
print(f"saved {cfg.run_dir / LATEST} (and the start in {start})")

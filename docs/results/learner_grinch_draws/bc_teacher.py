"""Can the learner's network, on its rules-level tokens, represent play as strong as a teacher's?  Behaviour-clone a
Grinch agent's own decisions (the teacher against greedy, 2 players, seat-rotated) into fresh token networks of two
sizes, report the held-out agreement by kind of decision, and save each clone as a learner checkpoint for the
harness to play (``python -m grinch_env.evaluation ... --agents checkpoints/grinch_bc_TEACHER_dD_lL,greedy``).
If a clone of ``expectimax`` plays near ``expectimax``'s strength, the input and the network can hold play that
beats greedy, and what the from-scratch learner lacks is the learning signal or the budget; if not, the input or
the size is a limit first.  A diagnosis only: issue #23 forbids shipping weights learned from another agent.
docs/results/learner_grinch.md, fourteenth session.

    OMP_NUM_THREADS=1 PYTHONPATH=. python docs/results/learner_grinch_draws/bc_teacher.py [TEACHER] [TRAIN_GAMES] [STEPS] [SIZES] [INPUT] [GAMES]

It first prints how often the teacher, re-seeded, agrees with itself on the held-out decisions: the ceiling of any
clone's agreement (an agent that samples, as ``expectimax``, does not always repeat its choice).

``SIZES``: comma-separated ``d_model:layers`` (default ``32:1,64:2``).  ``INPUT``: ``tokens`` (the learner's, the
default) or ``card_after`` (card tokens also carry the afterstate of the hand with that card,
``grinch_env.grinch.tokens.encode_batch``'s ``card_after``; an input under study, which the learner's
checkpoints cannot load, so such a clone is played here: ``GAMES`` seat-rotated games against greedy, seed 4242,
default 0).  The teacher's decisions are cached in ``/tmp/bc_TEACHER_GAMES_SEED.npz``.
"""
import sys
import time
from pathlib import Path

import numpy as np
import torch

from grinch_env.grinch import encoding as enc
from grinch_env.grinch import tokens as rt
from grinch_env.grinch.game import DRAW_DISCARD_BASE, DRAW_PILE_ACTION, SCORE_BASE
from training.learner.config import load_config
from training.learner.probe import _decisions_against_greedy
from training.learner.rollout import encode
from training.learner.run import Trainer

torch.set_num_threads(1)
teacher = sys.argv[1] if len(sys.argv) > 1 else "expectimax"
train_games = int(sys.argv[2]) if len(sys.argv) > 2 else 600
steps = int(sys.argv[3]) if len(sys.argv) > 3 else 6000
if steps < 4:
    raise SystemExit(f"STEPS must be at least 4 (progress is printed every STEPS / 4), got {steps}")
sizes = [tuple(int(x) for x in s.split(":")) for s in (sys.argv[4] if len(sys.argv) > 4 else "32:1,64:2").split(",")]
card_after = (sys.argv[5] if len(sys.argv) > 5 else "tokens") == "card_after"
match_games = int(sys.argv[6]) if len(sys.argv) > 6 else 0


def tokens(obs: np.ndarray):
    if not card_after:
        return encode("grinch", obs)
    st, at = rt.encode_batch(np.asarray(obs, np.float32), card_after=True)
    return torch.from_numpy(st), torch.from_numpy(at)


def decisions(games: int, seed: int):
    cache = Path(f"/tmp/bc_{teacher}_{games}_{seed}.npz")
    if cache.exists():
        z = np.load(cache)
        return z["obs"], z["mask"], z["act"], z["kind"]
    start = time.time()
    rows = [(o, m, a) for o, m, a in _decisions_against_greedy(teacher, 2, games, seed) if m.sum() >= 2]
    obs = np.stack([r[0] for r in rows]).astype(np.float32)
    mask = np.stack([r[1] for r in rows]).astype(bool)
    act = np.array([r[2] for r in rows])
    kind = np.where(act >= SCORE_BASE, 2, np.where(act < DRAW_PILE_ACTION, 1, 0))  # 0 draw, 1 discard, 2 score
    np.savez(cache, obs=obs, mask=mask, act=act, kind=kind)
    print(f"  {teacher}: {len(act)} decisions with a choice in {games} games ({time.time() - start:.0f} s)", flush=True)
    return obs, mask, act, kind


tr, te = decisions(train_games, 1), decisions(100, 2)
draw_rows = tr[3] == 0
print(f"decisions with a choice: train {len(tr[2])} ({train_games} games), held out {len(te[2])} (100 games); the teacher "
      f"draws blind in {(tr[2][draw_rows] == DRAW_PILE_ACTION).mean():.2f} of its draws "
      f"(pile and a top legal in {(tr[1][draw_rows][:, DRAW_PILE_ACTION] & tr[1][draw_rows][:, DRAW_DISCARD_BASE:SCORE_BASE].any(1)).mean():.2f})",
      flush=True)
# How often the teacher agrees with itself (another seed) on the held-out decisions: the ceiling of any clone's agreement.
from grinch_env.agents import make_agent  # noqa: E402

twin = make_agent(teacher, num_players=2, game="grinch")
twin.reset(12345)
again = np.array([twin.act(o, m.astype(np.int8)) for o, m in zip(te[0], te[1])])
same = again == te[2]
turn_te = te[0][:, enc.TURN:enc.TURN + 3].argmax(1)  # the round's turn (0, 1, 2) of each held-out decision


def by_turn(ok: np.ndarray) -> str:
    """Agreement of the draws and the discards by the round's turn."""
    return "; ".join(f"{k} by turn " + " / ".join(f"{ok[(te[3] == i) & (turn_te == t)].mean():.3f}" for t in range(3))
                     for i, k in enumerate(["draw", "discard"]))


print("the teacher against itself (another seed), held out: all "
      f"{same.mean():.3f}; " + ", ".join(f"{k} {same[te[3] == i].mean():.3f}" for i, k in enumerate(["draw", "discard", "score"]))
      + f"; {by_turn(same)}", flush=True)
st_tr, at_tr = tokens(tr[0])
st_te, at_te = tokens(te[0])
m_tr, m_te = torch.from_numpy(tr[1]), torch.from_numpy(te[1])
a_tr = torch.from_numpy(tr[2])

for d, layers in sizes:
    name = f"grinch_bc_{teacher}_d{d}_l{layers}" + ("_after" if card_after else "")
    cfg = load_config("configs/learner_grinch.yaml", [f"run_name={name}", f"net.d_model={d}", f"net.layers={layers}", f"net.ff={2 * d}"])
    torch.manual_seed(0)
    trainer = Trainer(cfg)
    net = trainer.net
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)

    def agreement(st, at, m, data, net=net):
        with torch.no_grad():
            logits = torch.cat([net(st[i:i + 2048], at[i:i + 2048])[0] for i in range(0, len(st), 2048)])
        ok = logits.masked_fill(~m, -1e9).argmax(1).numpy() == data[2]
        by_kind = ", ".join(f"{k} {ok[data[3] == i].mean():.3f} ({(data[3] == i).sum()})" for i, k in enumerate(["draw", "discard", "score"]))
        return f"all {ok.mean():.3f}; {by_kind}"

    start = time.process_time()
    for step in range(1, steps + 1):
        idx = torch.from_numpy(rng.integers(0, len(a_tr), 256))
        loss = torch.nn.functional.cross_entropy(net(st_tr[idx], at_tr[idx])[0].masked_fill(~m_tr[idx], -1e9), a_tr[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % (steps // 4) == 0:
            net.eval()
            print(f"  d {d} layers {layers} step {step}: cross-entropy {loss.item():.3f}; train {agreement(st_tr[:8000], at_tr[:8000], m_tr[:8000], [x[:8000] for x in tr])}; "
                  f"held out {agreement(st_te, at_te, m_te, te)} ({time.process_time() - start:.0f} CPU-s)", flush=True)
            net.train()
    net.eval()
    with torch.no_grad():
        logits = torch.cat([net(st_te[i:i + 2048], at_te[i:i + 2048])[0] for i in range(0, len(st_te), 2048)])
    print(f"  d {d} layers {layers}, held out: {by_turn(logits.masked_fill(~m_te, -1e9).argmax(1).numpy() == te[2])}", flush=True)
    cfg.run_dir.mkdir(parents=True, exist_ok=True)
    print(f"saved {trainer.save()}", flush=True)
    if match_games:
        from grinch_env.evaluation.evaluate import evaluate

        class Clone:
            name = name

            def reset(self, seed=None):
                pass

            def act(self, observation, action_mask, net=net):
                with torch.no_grad():
                    logits = net(*tokens(np.asarray(observation)[None]))[0][0].numpy()
                legal = np.flatnonzero(action_mask)
                return int(legal[int(np.argmax(logits[legal]))])

        print(evaluate([Clone(), "greedy"], num_players=2, num_games=match_games, seed=4242, game="grinch").table(), flush=True)

"""Can the learner's network, on its rules-level tokens, represent play as strong as a teacher's?  Behaviour-clone a
Grinch agent's own decisions (the teacher against greedy, 2 players, seat-rotated) into fresh token networks of two
sizes, report the held-out agreement by kind of decision, and save each clone as a learner checkpoint for the
harness to play (``python -m grinch_env.evaluation ... --agents checkpoints/grinch_bc_TEACHER_dD_lL,greedy``).
If a clone of ``expectimax`` plays near ``expectimax``'s strength, the input and the network can hold play that
beats greedy, and what the from-scratch learner lacks is the learning signal or the budget; if not, the input or
the size is a limit first.  A diagnosis only: issue #23 forbids shipping weights learned from another agent.
docs/results/learner_grinch.md, fourteenth session.

    OMP_NUM_THREADS=1 PYTHONPATH=. python docs/results/learner_grinch_draws/bc_teacher.py [TEACHER] [TRAIN_GAMES] [STEPS] [SIZES] [INPUT] [GAMES] [OVERRIDES]

It first prints how often the teacher, re-seeded, agrees with itself on the held-out decisions: the ceiling of any
clone's agreement (an agent that samples, as ``expectimax``, does not always repeat its choice).

``SIZES``: comma-separated ``d_model:layers`` (default ``32:1,64:2``).  ``INPUT``: ``tokens`` (the learner's, the
default) or an input under study, which the learner's checkpoints cannot load, so such a clone is played here
(``GAMES`` seat-rotated games against greedy, seed 4242, default 0): ``card_after`` (card tokens also carry the
afterstate of the hand with that card, ``grinch_env.grinch.tokens.encode_batch``'s ``card_after``), ``draw_best``
(a second draw's token also carries, per open row, the best points the hand plus that card writes after the forced
discard), ``extend`` (every discard's and draw's token also carries, per open row, how many unseen cards would raise
that row of its afterstate hand), ``draw_best+extend``, or ``cardfeat`` (every discard's and pile draw's token also
carries the suit, rank and bonus columns of the card it moves, for a network without action card ids: since the
sixteenth session the learner's own ``net.token_options: [action_cards]``, ``encode_batch``'s ``action_cards``).  ``OVERRIDES``: comma-separated config overrides for the
clone's network, e.g. ``net.raw_dense=true``.  The teacher's decisions are cached in ``/tmp/bc_TEACHER_GAMES_SEED.npz``.
"""
import sys
import time
from pathlib import Path

import numpy as np
import torch
from last_turn import best_discards, last_turn_discards  # this folder's helper (the script's folder is on the path)

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
INPUTS = ("tokens", "card_after", "draw_best", "extend", "draw_best+extend", "cardfeat")
input_name = sys.argv[5] if len(sys.argv) > 5 else "tokens"
if input_name not in INPUTS:
    raise SystemExit(f"INPUT must be one of {', '.join(INPUTS)}, got {input_name!r}")
card_after = input_name == "card_after"
match_games = int(sys.argv[6]) if len(sys.argv) > 6 else 0
overrides = [o for o in (sys.argv[7] if len(sys.argv) > 7 else "").split(",") if o]  # e.g. net.raw_dense=true
A_BEST, A_EXTEND = 12, 20  # action tokens' dense columns of the two inputs under study (free in the learner's layout)


def _seats(obs: np.ndarray) -> np.ndarray:
    """``[B, 6, 4, 48]``: each relative seat's pile contents, pile top, the card under it, cards known in its hand."""
    return obs[:, enc.SEAT_BLOCK:enc.AT_TABLE].reshape(len(obs), -1, 4, 48)


def _unseen(obs: np.ndarray) -> np.ndarray:
    """``[B, 48]``: the cards the observer cannot locate (not in its hand, any pile or known in a hand)."""
    return (obs[:, :48] + _seats(obs).max(2).sum(1) == 0).astype(np.float32)


def draw_best(obs: np.ndarray, at: np.ndarray) -> None:
    """A second draw's afterstate one forced step later: per open row, the best points (row + bonus) the hand plus the
    drawn top card writes after the forced discard (the best ``k`` of ``k + 1`` cards), in ``A_BEST`` on; 0 elsewhere."""
    lay = rt._layout("standard")
    eye = np.eye(48, dtype=np.float32)
    used = obs[:, enc.ROW_USED:enc.ROW_USED + 7]
    hand = obs[:, :48]
    tops = _seats(obs)[:, :, 1]  # [B, 6, 48]
    grown = np.minimum(hand[:, None] + tops, 1)  # [B, 6, 48]
    after = grown[:, :, None, :] * (1 - eye)  # [B, 6, 48, 48]: remove card c
    rows, bonus = rt.hand_values(after)
    pts = np.where(grown[..., None] > 0, rows + bonus[..., None], -1.0).max(2)  # [B, 6, 7]: only held cards can go
    pts = pts * (used[:, None] < 0.5) * (tops.max(-1, keepdims=True) > 0)
    second = obs[:, enc.FIRST_DRAW_MADE] > 0.5
    at[:, DRAW_DISCARD_BASE:SCORE_BASE, A_BEST + rt.NUM_IDS:A_BEST + rt.NUM_IDS + 7] = pts / lay.scales.points * second[:, None, None]


def extend(obs: np.ndarray, at: np.ndarray) -> None:
    """Per afterstate (the 48 discards, the draw pile's current hand, the 6 pile draws) and open row, how many unseen
    cards would raise that row if added (a count of public facts, no expectation), / 12, in ``A_EXTEND`` on."""
    eye = np.eye(48, dtype=np.float32)
    hand = obs[:, :48]
    tops = _seats(obs)[:, :, 1]
    after = np.concatenate([hand[:, None] * (1 - eye), hand[:, None], np.minimum(hand[:, None] + tops, 1)], axis=1)  # [B, 55, 48]
    base, _ = rt.hand_values(after)  # [B, 55, 7]
    unseen = _unseen(obs)
    plus = np.minimum(after[:, :, None, :] + eye, 1)  # [B, 55, 48, 48]: add card u
    rows, _ = rt.hand_values(plus)
    gain = (rows > base[:, :, None]) * unseen[:, None, :, None]  # [B, 55, 48, 7]
    used = obs[:, enc.ROW_USED:enc.ROW_USED + 7]
    at[:, :SCORE_BASE, A_EXTEND + rt.NUM_IDS:A_EXTEND + rt.NUM_IDS + 7] = gain.sum(2) / 12 * (used[:, None] < 0.5)


def tokens(obs: np.ndarray):
    obs = np.asarray(obs, np.float32)
    if input_name in ("tokens", "card_after"):
        if not card_after:
            return encode("grinch", obs)
        st, at = rt.encode_batch(obs, card_after=True)
        return torch.from_numpy(st), torch.from_numpy(at)
    sts, ats = [], []
    for i in range(0, len(obs), 256):  # bounded memory: the extend input evaluates 55 x 48 hands per observation
        st, at = rt.encode_batch(obs[i:i + 256], action_cards=input_name == "cardfeat")  # the learner's net.token_options: [action_cards]
        if "draw_best" in input_name:
            draw_best(obs[i:i + 256], at)
        if "extend" in input_name:
            extend(obs[i:i + 256], at)
        sts.append(st)
        ats.append(at)
    return torch.from_numpy(np.concatenate(sts)), torch.from_numpy(np.concatenate(ats))


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


best_rows = last_turn_discards(te[0], te[3])  # where expectimax's choice is exact (last_turn.py)
best_set = best_discards(te[0][best_rows], te[1][best_rows])
print(f"{len(best_rows)} held-out last-turn discards outside the last round: the teacher picks inside its rule's best set in "
      f"{best_set[np.arange(len(best_rows)), te[2][best_rows]].mean():.3f} of them (a set of {best_set.sum(1).mean():.2f} discards on average; "
      f"its choice agrees with itself re-seeded in {same[best_rows].mean():.3f})", flush=True)
print("the teacher against itself (another seed), held out: all "
      f"{same.mean():.3f}; " + ", ".join(f"{k} {same[te[3] == i].mean():.3f}" for i, k in enumerate(["draw", "discard", "score"]))
      + f"; {by_turn(same)}", flush=True)
st_tr, at_tr = tokens(tr[0])
st_te, at_te = tokens(te[0])
m_tr, m_te = torch.from_numpy(tr[1]), torch.from_numpy(te[1])
a_tr = torch.from_numpy(tr[2])

for d, layers in sizes:
    name = f"grinch_bc_{teacher}_d{d}_l{layers}" + ("" if input_name == "tokens" else "_" + input_name.replace("+", "_")) + "".join(
        "_" + o.split("=")[0].split(".")[-1] for o in overrides)
    cfg = load_config("configs/learner_grinch.yaml", [f"run_name={name}", f"net.d_model={d}", f"net.layers={layers}", f"net.ff={2 * d}", *overrides])
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
    choice = logits.masked_fill(~m_te, -1e9).argmax(1).numpy()
    print(f"  d {d} layers {layers}, held out: {by_turn(choice == te[2])}; last-turn discards inside the teacher's best set "
          f"{best_set[np.arange(len(best_rows)), choice[best_rows]].mean():.3f}", flush=True)
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

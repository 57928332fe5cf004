"""The look-ahead distilled into ``V``: the ``distill`` stage of :mod:`training.learner.afterstate_run` (the Grinch).

The look-ahead (``play=lookahead``) values two kinds of discard by the rules where ``V`` alone guesses: the last
discard of a round (the final hand: its best open row's points plus ``W`` after that row plus its bonus) and a Who's
second discard (the mean over every pair of unseen cards it may draw next of the best final hand).  The network alone
is cheaper and plays every seat the same way, so the stage teaches ``V`` those worths:

1. the last fit's explorer (the run's generation play, as its next generation would play) plays ``games`` games; at
   every such discard each *legal* afterstate is recorded with the look-ahead's worth of it (every sibling, not only
   the one played): :func:`play_game`;
2. the last fit's ``V`` is fine-tuned ``steps`` steps on batches half of the last generation's own records (the Monte
   Carlo targets it was fitted to: the round's points plus ``W`` after it, so that it keeps what it knows of the other
   discards) and half of these worths: :func:`distill`;
3. the tuned ``V``, with the last fit's ``W`` and ``G``, is written as one more fitted generation.

Nothing in it is a heuristic's: the worths are the run's own ``V`` and ``W`` read through the rules (the cards a
draw can bring, a final hand's rows and bonus).  ``docs/results/afterstate_grinch.md``: the
stage's first use (2-player network alone against ``expectimax`` 0.512 [0.502, 0.522], 9,600 games).
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import torch

from grinch_env.games import get_game
from grinch_env.grinch import encoding as enc
from grinch_env.grinch.cards import NUM_CARDS
from grinch_env.grinch.game import DRAW_PILE_ACTION
from training.learner.afterstate import LaterValue, Value, legal_features, scorer

DISTILL_KEYS = ("x", "y", "decision", "kind")  # play_game's records
SEED_STREAM = 31  # the distillation's games are drawn from (distill seed, SEED_STREAM)


def looked_ahead(obs: np.ndarray, mask: np.ndarray) -> int:
    """The size of the hand a discard keeps where the look-ahead values it by the rules (5: a round's last discard; 4: a
    Who's second), else 0 (``V``'s own discards, and decisions with no choice)."""
    if mask[:DRAW_PILE_ACTION].sum() < 2:
        return 0
    size = int((obs[:NUM_CARDS] > 0.5).sum()) - 1
    return size if size == 5 or (size == 4 and obs[enc.GRINCH_SEAT] < 0.5) else 0


def play_game(explorer: Any, look: Value, num_players: int, seed: int, table: bool = False) -> dict[str, np.ndarray]:
    """One game from ``seed``, every move by ``explorer``; at each decision :func:`looked_ahead` names, every legal
    afterstate ``x`` (:func:`training.learner.afterstate.legal_features`) with the look-ahead ``look``'s worth ``y`` of it,
    the decision's index in the game ``decision`` and, per decision, its ``kind`` (the kept hand's size)."""
    spec = get_game("grinch")
    rng = np.random.default_rng(seed)
    game = spec.new_game(num_players, int(rng.integers(2**62)))
    encoder = spec.encoder()
    xs, ys, ids, kinds = [], [], [], []
    while not game.done:
        view = encoder.observe(game, game.current)
        obs, mask = np.asarray(view["observation"], np.float32), np.asarray(view["action_mask"]).astype(bool)
        action, _ = explorer(obs, mask, rng) if mask.sum() > 1 else (int(np.flatnonzero(mask)[0]), 0.0)
        kind = looked_ahead(obs, mask)
        if kind:
            x, _, _ = legal_features(obs[None], mask[None], table)
            _, worth = look.discards(obs, mask)
            xs.append(x)
            ys.append(worth)
            ids.append(np.full(len(worth), len(kinds)))
            kinds.append(kind)
        game.step(action)
    # every round ends with each seat's last discard, so a game has looked-ahead decisions
    return {"x": np.concatenate(xs), "y": np.concatenate(ys).astype(np.float32), "decision": np.concatenate(ids), "kind": np.array(kinds, np.int64)}


def merge(games: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Games' records as one set, each decision's index running on over the games."""
    offset, decisions = 0, []
    for g in games:
        decisions.append(g["decision"] + offset)
        offset += len(g["kind"])
    return {"x": np.concatenate([g["x"] for g in games]), "y": np.concatenate([g["y"] for g in games]),
            "decision": np.concatenate(decisions).astype(np.int64), "kind": np.concatenate([g["kind"] for g in games]).astype(np.int64)}


def look_of(fitted: dict[str, Any]) -> Value:
    """The look-ahead scorer of one fitted generation (its ``V`` and ``W``, ``play=lookahead``)."""
    return scorer(Value.from_state(fitted["value"]), LaterValue(Value.from_state(fitted["later"])), "lookahead")


def agreement(value: Value, x: np.ndarray, y: np.ndarray, decision: np.ndarray) -> tuple[float, float]:
    """``(share of the decisions where value's best afterstate is the look-ahead's, the look-ahead's worth lost a decision)``
    over records sorted by ``decision``."""
    if not len(y):
        return float("nan"), float("nan")
    v = value(x)
    starts = np.flatnonzero(np.r_[True, decision[1:] != decision[:-1]])
    agree, lost = [], []
    for a, b in zip(starts, np.r_[starts[1:], len(decision)]):
        mine, best = a + int(np.argmax(v[a:b])), a + int(np.argmax(y[a:b]))
        agree.append(mine == best)
        lost.append(y[best] - y[mine])
    return float(np.mean(agree)), float(np.mean(lost))


def distill(base: Value, mc_x: np.ndarray, mc_y: np.ndarray, look: dict[str, np.ndarray], cfg: Any, seed: int) -> tuple[Value, dict[str, float]]:
    """``base`` fine-tuned ``cfg.steps`` Adam steps (cosine decay from ``cfg.learning_rate``) on the standardised targets of
    batches of ``cfg.batch_size`` Monte Carlo records ``(mc_x, mc_y)`` and as many look-ahead afterstates ``look`` (those of
    the first ``1 - cfg.held_out`` of its decisions); the network's ``mu``/``sd`` are ``base``'s.  Return it and the
    statistics: on the held-out decisions, how often ``base`` and the tuned ``V`` pick the look-ahead's discard
    (``agree_before``/``agree``), the look-ahead's worth each loses a decision (``lost_before``/``lost``); on the last
    ``held_out`` share of the Monte Carlo records, each one's explained variance (``mc_explained_variance_before``/``_after``)."""
    cut = int(look["decision"].max() * (1 - cfg.held_out)) if len(look["decision"]) else 0
    train, held = look["decision"] < cut, look["decision"] >= cut
    if not train.any():
        raise ValueError(f"distill: {len(look['kind'])} looked-ahead decisions leave none to train on with held_out {cfg.held_out}: "
                         "play more distill games")
    net = copy.deepcopy(base.net).train()
    torch.manual_seed(seed)
    opt = torch.optim.Adam(net.parameters(), cfg.learning_rate)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, cfg.steps)
    mx, my = torch.from_numpy(np.ascontiguousarray(mc_x, np.float32)), torch.from_numpy(((mc_y - base.mu) / base.sd).astype(np.float32))
    lx = torch.from_numpy(np.ascontiguousarray(look["x"][train], np.float32))
    ly = torch.from_numpy(((look["y"][train] - base.mu) / base.sd).astype(np.float32))
    rng = np.random.default_rng(seed)
    for _ in range(cfg.steps):
        i, j = torch.from_numpy(rng.integers(0, len(my), cfg.batch_size)), torch.from_numpy(rng.integers(0, len(ly), cfg.batch_size))
        loss = torch.nn.functional.mse_loss(net(torch.cat([mx[i], lx[j]])).squeeze(-1), torch.cat([my[i], ly[j]]))
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    tuned = Value(net.eval(), base.mu, base.sd, base.table)
    hx, hy, hd = look["x"][held], look["y"][held], look["decision"][held]
    stats: dict[str, float] = {}
    for suffix, v in (("_before", base), ("", tuned)):
        stats[f"agree{suffix}"], stats[f"lost{suffix}"] = agreement(v, hx, hy, hd)
    tail = slice(len(mc_y) - max(1, int(len(mc_y) * cfg.held_out)), None)
    var = float(np.var(mc_y[tail]))
    for suffix, v in (("_before", base), ("_after", tuned)):
        stats[f"mc_explained_variance{suffix}"] = 1 - float(np.var(mc_y[tail] - v(mc_x[tail]))) / var if var > 0 else float("nan")
    return tuned, stats


__all__ = ["DISTILL_KEYS", "SEED_STREAM", "agreement", "distill", "look_of", "looked_ahead", "merge", "play_game"]

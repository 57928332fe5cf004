"""Paired branches at the Grinch's draws: the vine rollouts of TRPO (Schulman et al. 2015) with common random numbers.

At a network decision where the seat may draw blind from the pile or take a seen discard-pile top, the game is
copied twice into a side engine (:meth:`VectorGrinch.copy_slots` with ``source``: the whole state, the draw pile's
order included); one copy takes the action the policy sampled, the other another legal draw, picked uniformly.
Both copies are then played on to the end of that round by the network's most likely action at every seat (at a
table with fixed opponents, :class:`training.learner.rollout.Tables`, the other seats by a copy of their agent), and
meet the same chance (the pile's order) wherever the two actions leave it the same.  The difference of the
deciding seat's banked margin when the round ends (points / 100, the margin reward's units) is the value of the
other draw against the taken one, with the deal's and the pile's noise shared by both branches: the noise that
made the single-path advantages of the draws too weak to rank them (docs/results/learner_grinch.md, eleventh
session).  :func:`training.learner.algos.ppo_update` turns each pair into a pairwise term on the two actions'
logits (``ppo.vine_coef``).
"""

from __future__ import annotations

import copy

import numpy as np
import torch

from grinch_env.grinch.game import terminal_rewards
from training.learner.net import TokenNet


class DrawVines:
    """Up to ``pairs`` branch pairs in flight beside a rollout on ``engine`` (a ``VectorGrinch`` of one table size).

    ``tables``: the rollout's fixed opponents; a branch from one of their slots plays the other seats by a copy of
    that slot's agent (seeded from ``seed``, so the rollout's own agents' streams are untouched), the deciding seat
    by the network.
    """

    def __init__(self, engine, pairs: int, seed: int, tables=None) -> None:
        from grinch_env.grinch.game import DRAW_DISCARD_BASE, DRAW_PILE_ACTION, SCORE_BASE
        from grinch_env.grinch.vector import VectorGrinch

        sizes = np.unique(engine.num_players)
        if not isinstance(engine, VectorGrinch) or len(sizes) != 1:
            raise ValueError(f"vine branches need the Grinch's batched engine with one table size, got {type(engine).__name__} "
                             f"with sizes {sizes.tolist()}")
        if pairs < 1:
            raise ValueError(f"pairs must be at least 1, got {pairs}")
        self.n = int(sizes[0])
        self.side = VectorGrinch(2 * pairs, self.n, seed=seed, bonus_layout=engine.layout, reward_mode=engine.reward_mode,
                                 backend=engine.backend)
        self.obs, self.mask, self.cur = self.side.reset()
        self.agent_of = np.full(engine.num_envs, -1, np.int64)  # each rollout slot's opponent group (-1: self-play)
        self.agents = []
        for g, (slots, agent) in enumerate([] if tables is None else tables.groups):
            self.agent_of[np.asarray(slots, np.int64)] = g
            twin = copy.deepcopy(agent)
            twin.reset(int(np.random.default_rng([seed, g]).integers(2**63)))
            self.agents.append(twin)
        self.side_agent = np.full(2 * pairs, -1, np.int64)
        self.draws = np.zeros(SCORE_BASE, bool)
        self.draws[DRAW_PILE_ACTION] = True
        self.draws[DRAW_DISCARD_BASE:SCORE_BASE] = True
        self.tops = slice(DRAW_DISCARD_BASE, SCORE_BASE)
        self.pile = DRAW_PILE_ACTION
        self.busy = np.zeros(pairs, bool)
        self.where = np.zeros((pairs, 2), np.int64)  # (rollout step, slot) of the branched decision
        self.alt = np.zeros(pairs, np.int64)  # the other draw
        self.seat = np.zeros(pairs, np.int64)  # the deciding seat (absolute)
        self.round = np.zeros(pairs, np.int64)  # the round it decided in
        self.pending = np.full(2 * pairs, -1, np.int64)  # a branch's first action, before it is played
        self.ended = np.zeros(2 * pairs, bool)
        self.margin = np.zeros(2 * pairs, np.float64)
        self.results: list[tuple[int, int, int, float]] = []  # (step, slot, other draw, its margin less the taken one's)

    def eligible(self, mask: np.ndarray) -> np.ndarray:
        """Return bool[B]: the decisions where the pile and at least one discard-pile top are legal."""
        return (mask[:, self.pile] > 0) & (mask[:, self.tops] > 0).any(1)

    def start(self, step: int, engine, slots: np.ndarray, mask: np.ndarray, actions: np.ndarray, seats: np.ndarray,
              rng: np.random.Generator) -> None:
        """Branch as many of the decisions in ``slots`` (eligible ones of ``engine``'s slots, about to play ``actions[slots]``;
        ``mask`` and ``seats`` the rollout's current ones) as free pairs allow, chosen uniformly."""
        free = np.flatnonzero(~self.busy)
        if not len(free) or not len(slots):
            return
        take = min(len(free), len(slots))
        chosen = np.sort(rng.choice(slots, size=take, replace=False))
        pairs = free[:take]
        legal = (mask[chosen][:, :len(self.draws)] > 0) & self.draws[None]
        legal[np.arange(take), actions[chosen]] = False
        alt = (rng.random(legal.shape) * legal).argmax(1)  # a uniform other legal draw
        rounds = engine.rounds()[chosen]
        self.obs, self.mask, self.cur = self.side.copy_slots(np.repeat(chosen, 2), np.stack([2 * pairs, 2 * pairs + 1], 1).reshape(-1),
                                                             source=engine)
        self.side_agent[2 * pairs] = self.side_agent[2 * pairs + 1] = self.agent_of[chosen]
        self.busy[pairs] = True
        self.where[pairs, 0] = step
        self.where[pairs, 1] = chosen
        self.alt[pairs] = alt
        self.seat[pairs] = seats[chosen]
        self.round[pairs] = rounds
        self.pending[2 * pairs] = actions[chosen]
        self.pending[2 * pairs + 1] = alt
        self.ended[2 * pairs] = self.ended[2 * pairs + 1] = False

    def advance(self, net: TokenNet, encode) -> None:
        """Play one move in every side slot: a branch's first action, then the network's most likely action to the round's end."""
        if not self.busy.any():
            return  # idle slots are overwritten by the next branch's copy
        actions = self.mask.argmax(1).astype(np.int64)  # idle and ended slots play any legal action
        running = np.repeat(self.busy, 2) & ~self.ended
        first = running & (self.pending >= 0)
        actions[first] = self.pending[first]
        self.pending[first] = -1
        opp = running & ~first & (self.side_agent >= 0) & (self.cur != np.repeat(self.seat, 2))
        for g, agent in enumerate(self.agents):
            theirs = np.flatnonzero(opp & (self.side_agent == g))
            if len(theirs):
                actions[theirs] = np.asarray(agent.act_batch(self.obs[theirs], self.mask[theirs]), dtype=np.int64)
        rest = np.flatnonzero(running & ~first & ~opp)
        if len(rest):
            st, at = encode(self.obs[rest])
            with torch.no_grad():
                logits = net(st, at)[0]
            m = torch.from_numpy(self.mask[rest].astype(bool))
            actions[rest] = torch.where(m, logits, torch.full_like(logits, -1e9)).argmax(1).numpy()
        self.obs, self.mask, self.cur, _, dones = self.side.step(actions)
        slots = np.flatnonzero(running)
        pair = slots // 2
        over = dones[slots] | (self.side.rounds()[slots] != self.round[pair])
        totals = self.side.totals()
        for slot, k in zip(slots[over], pair[over]):  # the round's end: the deciding seat's banked margin reward
            banked = self.side.last_totals[slot] if dones[slot] else totals[slot]
            self.margin[slot] = terminal_rewards([int(t) for t in banked[:self.n]], "margin")[self.seat[k]]
            self.ended[slot] = True
        for k in np.unique(pair[over]):
            if self.ended[2 * k] and self.ended[2 * k + 1]:
                self.results.append((int(self.where[k, 0]), int(self.where[k, 1]), int(self.alt[k]),
                                     float(self.margin[2 * k + 1] - self.margin[2 * k])))
                self.busy[k] = False

    def finish(self, net: TokenNet, encode) -> list[tuple[int, int, int, float]]:
        """Play every pair in flight to its round's end; return the results ``(step, slot, other draw, margin difference)``."""
        while self.busy.any():
            self.advance(net, encode)
        return self.results

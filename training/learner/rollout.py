"""Self-play experience on the batched engine, the batched curve evaluation, and the learned agent for the harness.

A rollout plays ``num_envs`` games on the game's batched engine, every seat by
the current network, each game slot exactly once (the engine is re-seeded
from the given numpy stream, so resuming needs no engine state).  Every
decision is kept with the seat that took it; the only reward is each seat's
terminal reward (the engine's ``reward_mode``), and a seat's return is that
reward (``gamma = 1``).

A training iteration's games are played in shards (:class:`ShardPlayer`,
:func:`shard_setup` and :func:`play_shard`, run by :mod:`training.distributed`
in this process, in local worker processes or on Ray actors): each shard is a
pure function of the network's weights and its own seed.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import time
from dataclasses import dataclass

import numpy as np
import torch

from grinch_env.grinch.tokens import TOKEN_OPTIONS
from training.learner.config import LearnerConfig
from training.learner.net import MASK_VALUE, MaskedCategorical, TokenNet


def tokens_module(game: str):
    """Return ``grinch_env.<game>.tokens``."""
    return importlib.import_module(f"grinch_env.{game}.tokens")


def encode(game: str, obs: np.ndarray, seat_hands: bool = False, options: tuple[str, ...] | list[str] = ()) -> tuple[torch.Tensor, torch.Tensor]:
    """Return the state and action tokens of observations ``[B, obs_size]`` as tensors.

    ``seat_hands`` (the Grinch's asymmetric critic only): the seat tokens also carry each hand's row values
    (``grinch_env.grinch.tokens.encode_batch``).  ``options``: the reading network's ``token_options`` (the Grinch
    only, ``TOKEN_OPTIONS``), each an ``encode_batch`` flag that adds columns the default tokens leave at 0.
    """
    if seat_hands and game != "grinch":
        raise ValueError(f"seat_hands gives the seat tokens the Grinch's hand values: it needs game='grinch', got {game!r}")
    if options and (game != "grinch" or set(options) - set(TOKEN_OPTIONS)):
        raise ValueError(f"token options {list(options)} are the Grinch's: it needs game='grinch' and options from {list(TOKEN_OPTIONS)}, "
                         f"got game {game!r}")
    extra = {k: True for k in options} | ({"seat_hands": True} if seat_hands else {})
    st, at = tokens_module(game).encode_batch(np.asarray(obs, dtype=np.float32), **extra)
    return torch.from_numpy(st), torch.from_numpy(at)


def net_tokens(net, game: str, obs: np.ndarray, seat_hands: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """Return :func:`encode`'s tokens as ``net`` reads them (with its ``token_options``): what every caller of a network uses."""
    return encode(game, obs, seat_hands, net.token_options)


@dataclass
class Batch:
    """One rollout's complete decisions, flattened (numpy)."""

    obs: np.ndarray  # float16 [N, obs_size]: tokens are rebuilt per minibatch
    masks: np.ndarray  # int8 [N, A]
    actions: np.ndarray  # int64 [N]
    logprobs: np.ndarray  # float32 [N]: the sampled actions' log-probabilities
    values: np.ndarray  # float32 [N]: V(s)
    returns: np.ndarray  # float32 [N]: the value head's targets (advantages + values)
    advantages: np.ndarray  # float32 [N]
    outcomes: np.ndarray  # float32 [N]: the deciding seat's terminal reward in that game
    games: int
    steps: int
    round_returns: np.ndarray | None = None  # float32 [N], pad credit: the margin the seat's round will still bank (round value target)
    round_values: np.ndarray | None = None  # float32 [N]: the round value head's estimate when the net has one
    critic_obs: np.ndarray | None = None  # float16 [N, obs_size], oracle critic: the observations with the other hands revealed


def final_returns(seats: np.ndarray, dones: np.ndarray, rewards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(returns[T, B], complete[T, B])``: each decision's seat's terminal reward in its game (gamma = 1).

    ``seats[t, i]`` acted at step ``t`` of slot ``i``; ``dones[t, i]`` says the
    game ended with that step, ``rewards[t, i, s]`` is then seat ``s``'s reward.
    Decisions of a game still running at the end are not ``complete``.
    """
    num_steps, num_envs = seats.shape
    out = np.zeros((num_steps, num_envs), np.float32)
    complete = np.zeros((num_steps, num_envs), bool)
    final = np.zeros((num_envs, rewards.shape[2]), np.float32)
    have = np.zeros(num_envs, bool)
    envs = np.arange(num_envs)
    for t in range(num_steps - 1, -1, -1):
        ended = dones[t]
        final[ended] = rewards[t][ended]
        have |= ended
        out[t] = final[envs, seats[t]]
        complete[t] = have
    return out, complete


def round_episodes(obs: np.ndarray, seats: np.ndarray, active: np.ndarray, dones: np.ndarray, rewards: np.ndarray,
                   num_players: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(dones, rewards)`` that end an episode after every Gnoming round, paying each seat that round's margin.

    The margin reward is linear in the totals, and the totals are sums of round
    scores, so the game's margin is exactly the sum of the rounds' margins
    ``((sum of the others' round scores) / (n - 1) - own) / 100``; the rounds
    are independent deals, so a decision's result is its own round's margin
    (the later rounds' are noise it cannot change).  Round ``r``'s scores are
    read from the first observation of round ``r + 1`` (public, relative to
    its observer); the last round's margin is the terminal reward less the
    earlier rounds'.
    """
    from grinch_env.gnoming import encoding as enc
    from grinch_env.gnoming.game import MARGIN_SCALE, NUM_ROUNDS

    num_steps, num_envs = seats.shape
    rounds = obs[:, :, enc.ROUND:enc.ROUND + NUM_ROUNDS].astype(np.float32).argmax(-1)
    new_dones = np.zeros_like(dones)
    new_rewards = np.zeros_like(rewards)
    for i in range(num_envs):
        n = int(num_players[i])
        steps = np.flatnonzero(active[:, i])
        paid = np.zeros(rewards.shape[2], np.float64)
        for t in steps:
            if dones[t, i]:
                new_dones[t, i] = True
                new_rewards[t, i] = rewards[t, i] - paid
            elif active[t + 1, i] and rounds[t + 1, i] > rounds[t, i]:
                r, obs_seat = rounds[t, i], seats[t + 1, i]
                rel = np.rint(obs[t + 1, i, enc.ROUND_SCORES + enc.MAX_PLAYERS * r:enc.ROUND_SCORES + enc.MAX_PLAYERS * r + n].astype(np.float64)
                              * enc.ROUND_SCALE)
                scores = np.zeros(n)
                scores[(obs_seat + np.arange(n)) % n] = rel
                margin = ((scores.sum() - scores) / (n - 1) - scores) / MARGIN_SCALE
                new_dones[t, i] = True
                new_rewards[t, i, :n] = margin
                paid[:n] += margin
    return new_dones, new_rewards


def pad_rewards(potentials: np.ndarray, seats: np.ndarray, dones: np.ndarray, rewards: np.ndarray) -> np.ndarray:
    """Return ``float32[T, B]``: each decision's potential-based shaped reward, the potential being the banked score-pad margin.

    ``potentials[t, i]`` is the deciding seat's banked margin before decision
    ``t`` (Grinch, ``grinch_env.grinch.tokens.banked_margin``).  A decision is
    paid the change of its seat's potential until that seat's next decision;
    the seat's last decision of the game is paid the game's reward less its
    potential.  With ``gamma = 1`` a seat's rewards sum to its reward for the
    game less its potential at its first decision, which is 0 (empty pads):
    exactly the game's margin (Ng, Harada and Russell 1999: the optimal policy
    is unchanged).  Decisions of an unfinished game get 0.
    """
    num_steps, num_envs = seats.shape
    out = np.zeros((num_steps, num_envs), np.float32)
    nxt = np.zeros((num_envs, rewards.shape[2]), np.float64)  # each seat's potential at its next decision (the reward at the end)
    have = np.zeros(num_envs, bool)
    envs = np.arange(num_envs)
    for t in range(num_steps - 1, -1, -1):
        ended = dones[t]
        nxt[ended] = rewards[t][ended]
        have |= ended
        s = seats[t]
        phi = potentials[t].astype(np.float64)
        out[t] = np.where(have, nxt[envs, s] - phi, 0.0)
        nxt[envs, s] = np.where(have, phi, nxt[envs, s])
    return out


def seat_gae(values: np.ndarray, seats: np.ndarray, dones: np.ndarray, rewards: np.ndarray, gamma: float,
             gae_lambda: float) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(advantages[T, B], complete[T, B])``: GAE over each seat's own decisions, the terminal reward on its last one.

    Step ``t`` of game slot ``i`` is a decision of seat ``seats[t, i]`` with
    value estimate ``values[t, i]``; ``dones[t, i]`` says the game ended with
    that decision and ``rewards[t, i, s]`` is then seat ``s``'s terminal
    reward.  ``complete[t, i]`` is False for decisions of a game still running
    at the end of the rollout (no return yet: they are left out of the batch).
    """
    num_steps, num_envs = values.shape
    num_seats = rewards.shape[2]
    adv = np.zeros((num_steps, num_envs), dtype=np.float32)
    complete = np.zeros((num_steps, num_envs), dtype=bool)
    next_value = np.zeros((num_envs, num_seats), dtype=np.float32)
    next_adv = np.zeros((num_envs, num_seats), dtype=np.float32)
    pending = np.zeros((num_envs, num_seats), dtype=np.float32)  # terminal reward not yet credited to a decision
    in_complete_game = np.zeros(num_envs, dtype=bool)
    envs = np.arange(num_envs)
    for t in range(num_steps - 1, -1, -1):
        ended = dones[t]
        # walking backwards across a game's end: a new (earlier) game starts here
        pending[ended] = rewards[t][ended]
        next_value[ended] = 0.0
        next_adv[ended] = 0.0
        in_complete_game |= ended
        s = seats[t]
        r = pending[envs, s]
        pending[envs, s] = 0.0  # only the seat's last decision of the game carries its reward
        delta = r + gamma * next_value[envs, s] - values[t]
        a = delta + gamma * gae_lambda * next_adv[envs, s]
        adv[t] = a
        next_value[envs, s] = values[t]
        next_adv[envs, s] = a
        complete[t] = in_complete_game
    return adv, complete


def seat_gae_dense(values: np.ndarray, seats: np.ndarray, dones: np.ndarray, step_rewards: np.ndarray, gamma: float,
                   gae_lambda: float, cut: np.ndarray | None = None, cut_ends: bool = False) -> np.ndarray:
    """Return ``float32[T, B]`` GAE advantages over each seat's own decisions with a reward on every decision.

    As :func:`seat_gae`, but decision ``t`` is paid
    ``step_rewards[t, i]`` (:func:`pad_rewards`) instead of only the seat's
    last decision the terminal reward.  With ``values = 0`` and ``gamma =
    gae_lambda = 1`` it returns each decision's return (the rewards of its
    seat from it to the game's end).  Where ``cut[t, i]`` the trace stops
    (the advantage is that decision's TD error); with ``cut_ends`` the TD
    error there does not bootstrap either (``reward - value``): each cut ends
    an episode of its seat, as the round value's rounds do.
    """
    num_steps, num_envs = values.shape
    num_seats = int(seats.max()) + 1 if seats.size else 1
    adv = np.zeros((num_steps, num_envs), np.float32)
    next_value = np.zeros((num_envs, num_seats), np.float64)
    next_adv = np.zeros((num_envs, num_seats), np.float64)
    envs = np.arange(num_envs)
    for t in range(num_steps - 1, -1, -1):
        ended = dones[t]
        next_value[ended] = 0.0
        next_adv[ended] = 0.0
        s = seats[t]
        nv = next_value[envs, s]
        if cut is not None and cut_ends:
            nv = np.where(cut[t], 0.0, nv)
        delta = step_rewards[t] + gamma * nv - values[t]
        a = delta + gamma * gae_lambda * next_adv[envs, s]
        if cut is not None:
            a = np.where(cut[t], delta, a)
        adv[t] = a
        next_value[envs, s] = values[t]
        next_adv[envs, s] = a
    return adv


@dataclass
class Tables:
    """Which game slots of a rollout seat fixed opponents: the learner then plays only ``learner_seat[i]``.

    ``learner_seat[i]`` is ``-1`` for a self-play slot (the network plays every
    seat); ``groups`` lists ``(slots, agent)``: those slots' other seats are
    played by ``agent.act_batch`` and their decisions are not learned from.
    """

    learner_seat: np.ndarray  # int64[num_envs]
    groups: list[tuple[np.ndarray, object]]


def collect(engine, net: TokenNet, game: str, rng: np.random.Generator, gamma: float = 1.0, gae_lambda: float = 0.95,
            credit: str = "game", tables: Tables | None = None, round_cut: bool = False, round_baseline: bool = False,
            oracle_critic: bool = False, oracle_rows: bool = False, pad_others: float = 1.0,
            generator: torch.Generator | None = None) -> Batch:
    """Return one rollout: every slot of ``engine`` plays one game from a fresh seed (drawn from ``rng``), all seats by ``net``.

    The network samples its masked policy (with ``generator``, or torch's global stream when None).
    ``credit="round"`` (Gnoming, margin reward) makes every round its own episode (:func:`round_episodes`);
    ``credit="pad"`` (Grinch, margin reward) pays every decision the change of
    its seat's banked margin (:func:`pad_rewards`): the returns are the margin
    still to come, ``outcomes`` stay the game's.  With ``tables`` some slots
    seat fixed opponents (:class:`Tables`); only the network's own decisions
    are in the batch.  ``round_cut`` (pad credit): each seat's GAE trace
    stops at its score decision (:func:`seat_gae_dense`'s ``cut``).  With pad
    credit the batch also holds each decision's ``round_returns``: its seat's
    pad rewards up to and including its score decision, the margin its round
    will still bank (the round value head's target); ``round_baseline`` (a net
    with the round value head) gives every decision but the score
    decisions its advantage from GAE over the round value, ending at the
    seat's score decision.
    ``oracle_critic`` (Grinch): the values (and round values) come from the observations
    with the other hands revealed (``engine.reveal_hands``), kept as
    ``critic_obs`` for the update; the policy still reads the observation.  ``oracle_rows`` (with
    ``oracle_critic``): the critic's seat tokens also carry every hand's row values (``encode``'s ``seat_hands``).
    ``pad_others`` (pad credit): the weight of the others' mean total in the potential and in the final payment,
    ``(own total - pad_others x mean of the others) / 100``: 1 is the margin reward, 0 each seat's own points.
    """
    num_envs = engine.num_envs
    obs, mask, seat = engine.reset(seed=int(rng.integers(2**63)))
    active = np.ones(num_envs, bool)
    learner_seat = np.full(num_envs, -1, np.int64) if tables is None else np.asarray(tables.learner_seat, np.int64)
    if learner_seat.shape != (num_envs,):
        raise ValueError(f"tables.learner_seat must have one entry per game slot ({num_envs}), got shape {learner_seat.shape}")
    groups = [] if tables is None else [(np.asarray(slots, np.int64), agent) for slots, agent in tables.groups]
    in_group = np.zeros(num_envs, bool)
    for slots, _ in groups:
        if in_group[slots].any() or (learner_seat[slots] < 0).any():
            raise ValueError("every slot of a tables group needs its learner seat (>= 0) and belongs to one group only")
        in_group[slots] = True
    if ((learner_seat >= 0) & ~in_group).any():
        raise ValueError("a slot with a learner seat must be in a tables group (its other seats need an agent)")
    if credit == "pad" and (game != "grinch" or engine.reward_mode != "margin"):
        raise ValueError(f"credit='pad' needs Grinch with reward_mode='margin' (the banked margin is that reward so far), got {game!r} with {engine.reward_mode!r}")
    if credit not in ("game", "round", "pad"):
        raise ValueError(f"credit must be 'game', 'round' or 'pad', got {credit!r}")
    if round_baseline and (credit != "pad" or net.round_value is None):
        raise ValueError(f"round_baseline reads the round value head over the Grinch's score-pad rounds: it needs credit='pad' "
                         f"and a net with round_value, got {credit!r}, round_value={net.round_value is not None}")
    if oracle_critic and not hasattr(engine, "reveal_hands"):
        raise ValueError(f"oracle_critic reads the hidden hands (engine.reveal_hands, the Grinch's batched engine) into PPO's value: "
                         f"it needs that engine, got {type(engine).__name__}")
    if oracle_rows and not oracle_critic:
        raise ValueError("oracle_rows gives the asymmetric critic the revealed hands' row values: it needs oracle_critic")
    if round_cut and credit != "pad":
        raise ValueError(f"round_cut stops PPO's GAE trace at the Grinch's score decisions: it needs credit='pad', got {credit!r}")
    if not 0.0 <= pad_others <= 1.0 or (pad_others != 1.0 and credit != "pad"):
        raise ValueError(f"pad_others weighs the others' totals in pad credit's payments: it needs credit='pad' and a value in [0, 1], "
                         f"got credit={credit!r} and {pad_others!r}")
    rec: dict[str, list] = {k: [] for k in ("obs", "mask", "act", "logp", "val", "rval", "seat", "done", "rew", "active", "phi", "mine",
                                            "cobs")}
    if credit == "pad":
        from grinch_env.grinch.tokens import banked_points
    pad_final = []
    while active.any():
        mine = active & ((learner_seat < 0) | (seat == learner_seat))
        idx = np.flatnonzero(mine)
        actions = mask.argmax(1).astype(np.int64)  # finished slots play any legal action (not recorded)
        for slots, agent in groups:
            theirs = slots[active[slots] & (seat[slots] != learner_seat[slots])]
            if len(theirs):
                actions[theirs] = np.asarray(agent.act_batch(obs[theirs], mask[theirs]), dtype=np.int64)
        logp = np.zeros(num_envs, np.float32)
        val = np.zeros(num_envs, np.float32)
        rval = np.zeros(num_envs, np.float32)
        cobs = np.zeros(obs.shape, np.float16) if oracle_critic else None
        if len(idx):
            st, at = net_tokens(net, game, obs[idx])
            m = torch.from_numpy(mask[idx].astype(bool))
            with torch.no_grad():
                logits, _, v, rv = net.heads(st, at)
            if oracle_critic:  # both value heads read the revealed hands
                cobs[idx] = engine.reveal_hands(obs[idx], idx)
                with torch.no_grad():
                    _, _, v, rv = net.heads(*net_tokens(net, game, cobs[idx], seat_hands=oracle_rows))
            if rv is not None:
                rval[idx] = rv.numpy()
            dist = MaskedCategorical(logits, m)
            a = torch.multinomial(dist.probs, 1, True, generator=generator)[:, 0]  # Categorical.sample's draw, from the given stream
            logp[idx] = dist.log_prob(a).numpy()
            val[idx] = v.numpy()
            actions[idx] = a.numpy()
        _record(rec, obs, mask, actions, logp, val, rval, seat, active, mine, banked_points(obs, pad_others) if credit == "pad" else None)
        if oracle_critic:
            rec["cobs"].append(cobs)
        obs, mask, seat, rewards, dones = engine.step(actions)
        rec["done"].append(dones & active)
        rec["rew"].append(rewards.astype(np.float32))
        if pad_others != 1.0:
            pad_final.append(_points_rewards(engine.last_totals, engine.num_players, pad_others) * (dones & active)[:, None])
        active &= ~dones
    arr = {k: np.stack(v) for k, v in rec.items() if v}
    games = int(arr["done"].sum())
    if credit == "round":
        if game != "gnoming" or engine.reward_mode != "margin":
            raise ValueError(f"credit='round' needs Gnoming with reward_mode='margin' (rounds are independent deals there), got {game!r} with {engine.reward_mode!r}")
        arr["done"], arr["rew"] = round_episodes(arr["obs"], arr["seat"], arr["active"], arr["done"], arr["rew"], engine.num_players)
    outcomes, complete = final_returns(arr["seat"], arr["done"], arr["rew"])
    round_returns = None
    if credit == "pad":
        from grinch_env.grinch.game import SCORE_BASE

        step = pad_rewards(arr["phi"], arr["seat"], arr["done"], arr["rew"] if pad_others == 1.0 else np.stack(pad_final))
        scored = arr["act"] >= SCORE_BASE  # a seat's score decision is its last of the round
        round_returns = seat_gae_dense(np.zeros_like(arr["val"]), arr["seat"], arr["done"], step, 1.0, 1.0, scored, cut_ends=True)
        adv = seat_gae_dense(arr["val"], arr["seat"], arr["done"], step, gamma, gae_lambda, scored if round_cut else None)
        ret = adv + arr["val"]  # the value head's target: the whole game's
        if round_baseline:
            adv_round = seat_gae_dense(arr["rval"], arr["seat"], arr["done"], step, gamma, gae_lambda, scored, cut_ends=True)
            adv = np.where(scored, adv, adv_round)
    else:
        adv, _ = seat_gae(arr["val"], arr["seat"], arr["done"], arr["rew"], gamma, gae_lambda)
        ret = adv + arr["val"]
    keep = arr["mine"] & complete
    return Batch(
        obs=arr["obs"][keep], masks=arr["mask"][keep], actions=arr["act"][keep], logprobs=arr["logp"][keep],
        values=arr["val"][keep], returns=ret[keep].astype(np.float32), advantages=adv[keep].astype(np.float32),
        outcomes=outcomes[keep],
        games=games, steps=int(arr["active"].sum()),
        round_returns=None if round_returns is None else round_returns[keep].astype(np.float32),
        round_values=arr["rval"][keep] if net.round_value is not None else None,
        critic_obs=arr["cobs"][keep] if oracle_critic else None,
    )


def merge_batches(batches: list[Batch]) -> Batch:
    """Return the batches' decisions as one batch, in the order given (``games`` and ``steps`` added up)."""
    if len(batches) == 1:
        return batches[0]
    out: dict[str, object] = {}
    for f in dataclasses.fields(Batch):
        parts = [getattr(b, f.name) for b in batches]
        if f.name in ("games", "steps"):
            out[f.name] = int(sum(parts))
        elif any(p is None for p in parts):
            if not all(p is None for p in parts):
                raise ValueError(f"batches disagree on whether they hold {f.name}")
            out[f.name] = None
        else:
            out[f.name] = np.concatenate(parts)
    return Batch(**out)


# ------------------------------------------------------------------ shards
# An iteration's games are cut into ``cfg.shards`` shards of ``cfg.shard_games`` games.  Each shard is a pure function of
# the network's weights and one seed the trainer draws from its stream: the seed's numpy stream re-seeds the engine, draws
# the learner's seats and re-seeds the opponents, and a torch generator seeded from it samples the policy.  So a shard
# gives the same batch in this process, in a local worker process or on a Ray actor, also when it is played again after
# its worker died (training.distributed re-runs it).


@dataclass
class ShardResult:
    """One shard's rollout and the CPU seconds its worker spent playing it (the run's budget counts them)."""

    batch: Batch
    cpu_seconds: float


def shard_opponent_slots(cfg: LearnerConfig) -> list[tuple[str, int, np.ndarray]]:
    """Return ``(agent spec, table size, slots)`` of every configured opponent and table size: the slots of a shard's engine
    whose other seats it fills (slot ``i`` of an engine has size ``sizes[i % len(sizes)]``); the rest are self-play."""
    sizes = cfg.table_sizes
    out = []
    first = 0  # the index, within each table size's slots, of the next opponent's first game
    for name, games in cfg.opponent_games():
        for k, n in enumerate(sizes):
            out.append((name, n, k + len(sizes) * np.arange(first, first + games)))
        first += games
    return out


class ShardPlayer:
    """What a worker holds to play a run's shards: one shard's engine, the opponents and a copy of the network."""

    def __init__(self, cfg: LearnerConfig) -> None:
        from grinch_env.agents import make_agent

        self.cfg = cfg
        self.engine = cfg.spec.vector(num_envs=cfg.shard_games, num_players=cfg.num_players, seed=cfg.seed, reward_mode=cfg.reward_mode)
        self.net = TokenNet(**cfg.net.model_dump()).eval()
        self.opponents = [(n, slots, make_agent(name, seed=0, num_players=n, game=cfg.game)) for name, n, slots in shard_opponent_slots(cfg)]

    def load(self, weights: dict[str, np.ndarray]) -> None:
        """Load the network's weights (``state_dict`` as numpy arrays)."""
        self.net.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in weights.items()})
        self.net.eval()

    def tables(self, rng: np.random.Generator) -> Tables | None:
        """Return the shard's :class:`Tables` (None: all self-play): the learner's seat per game drawn from ``rng``, every
        opponent re-seeded from it."""
        if not self.opponents:
            return None
        seats = np.full(self.cfg.shard_games, -1, np.int64)
        groups = []
        for n, slots, agent in self.opponents:
            seats[slots] = rng.integers(n, size=len(slots))
            agent.reset(int(rng.integers(2**63)))
            groups.append((slots, agent))
        return Tables(learner_seat=seats, groups=groups)

    def play(self, seed: int) -> ShardResult:
        """Play the shard of ``seed`` (every game once, with ``cfg.torch_threads`` torch threads) and return its batch."""
        start = time.process_time()
        cfg = self.cfg
        rng = np.random.default_rng(seed)
        generator = torch.Generator().manual_seed(int(rng.integers(2**63)))
        threads = torch.get_num_threads()
        if threads != cfg.torch_threads:
            torch.set_num_threads(cfg.torch_threads)
        try:
            batch = collect(self.engine, self.net, cfg.game, rng, gamma=cfg.ppo.gamma, gae_lambda=cfg.ppo.gae_lambda, credit=cfg.credit,
                            tables=self.tables(rng), round_cut=cfg.ppo.round_cut, round_baseline=cfg.ppo.round_baseline,
                            oracle_critic=cfg.ppo.oracle_critic, oracle_rows=cfg.ppo.oracle_rows, pad_others=cfg.pad_others,
                            generator=generator)
        finally:
            if threads != cfg.torch_threads:
                torch.set_num_threads(threads)
        return ShardResult(batch, time.process_time() - start)


_PLAYERS: dict[str, ShardPlayer] = {}  # this process's shard player, by its run's config (the last one only)


def shard_setup(config: dict, weights: dict[str, np.ndarray]) -> ShardPlayer:
    """A worker's context for one iteration's shards (``training.distributed``'s ``setup``): this process's
    :class:`ShardPlayer` of the run's ``config`` (a ``LearnerConfig.model_dump()``; built once, kept across iterations)
    with the iteration's ``weights`` loaded."""
    key = json.dumps(config, sort_keys=True)
    player = _PLAYERS.get(key)
    if player is None:
        from training.learner.config import LearnerConfig

        _PLAYERS.clear()
        player = _PLAYERS[key] = ShardPlayer(LearnerConfig.model_validate(config))
    player.load(weights)
    return player


def play_shard(player: ShardPlayer, seed: int) -> ShardResult:
    """Play one shard (``training.distributed``'s ``work``)."""
    return player.play(seed)


def _points_rewards(totals: np.ndarray, num_players: np.ndarray, others: float) -> np.ndarray:
    """Return ``float32[envs, 6]``: every seat's ``(total - others x mean of the other seats' totals) / 100`` (absent seats 0)."""
    t = np.asarray(totals, np.float64)
    n = np.broadcast_to(np.asarray(num_players, np.int64), (t.shape[0],))
    present = np.arange(t.shape[1])[None] < n[:, None]
    t = np.where(present, t, 0.0)
    rest = (t.sum(1, keepdims=True) - t) / np.maximum(n - 1, 1)[:, None]
    return np.where(present, (t - others * rest) / 100.0, 0.0).astype(np.float32)


def _record(rec: dict[str, list], obs, mask, actions, logp, val, rval, seat, active, mine, phi) -> None:
    """Append one step of every slot to the rollout's record (``mine``: the network's own decisions, the ones learned from)."""
    rec["phi"].append(np.zeros(len(seat), np.float32) if phi is None else phi)
    rec["obs"].append(obs.astype(np.float16))
    rec["mask"].append(mask.copy())
    rec["act"].append(actions)
    rec["logp"].append(logp)
    rec["val"].append(val)
    rec["rval"].append(rval)
    rec["seat"].append(seat.copy())
    rec["active"].append(active.copy())
    rec["mine"].append(mine.copy())


def greedy_actions(net: TokenNet, game: str, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Return the network's deterministic choices: the masked argmax of its policy logits."""
    st, at = net_tokens(net, game, obs)
    with torch.inference_mode():
        logits, _, _ = net(st, at)
    m = torch.from_numpy(np.asarray(mask).astype(bool))
    return torch.where(m, logits, torch.full_like(logits, MASK_VALUE)).argmax(1).numpy()


def match_batch(net: TokenNet, game: str, num_players: int, opponent: str, games: int, seed: int,
                reward_mode: str) -> tuple[float, float]:
    """Return ``(win share, 95% half-width)`` of the learner against ``opponent`` in the other seats, seat rotated.

    Game slot ``i`` seats the learner at ``i % num_players``; all slots play
    one game on the batched engine.  A shared win counts as ``1 / winners``.
    For the learning curve only: the report uses :mod:`grinch_env.evaluation`.
    """
    from grinch_env.agents import make_agent
    from grinch_env.games import get_game

    spec = get_game(game)
    engine = spec.vector(num_envs=games, num_players=num_players, seed=seed, reward_mode=reward_mode)
    opp = make_agent(opponent, seed=seed, num_players=num_players, game=game)
    learner = np.arange(games) % num_players
    obs, mask, seat = engine.reset(seed=seed)
    finished = np.zeros(games, bool)
    share = np.zeros(games)
    while not finished.all():
        actions = mask.argmax(1).astype(np.int64)
        mine = (seat == learner) & ~finished
        theirs = (seat != learner) & ~finished
        if mine.any():
            actions[mine] = greedy_actions(net, game, obs[mine], mask[mine])
        if theirs.any():
            actions[theirs] = np.asarray(opp.act_batch(obs[theirs], mask[theirs]), dtype=np.int64)
        obs, mask, seat, _, dones = engine.step(actions)
        for i in np.flatnonzero(dones & ~finished):
            totals = engine.last_totals[i, :num_players]
            best = totals.max() if spec.highest_total_wins else totals.min()
            if totals[learner[i]] == best:
                share[i] = 1.0 / int((totals == best).sum())
        finished |= dones
    mean = float(share.mean())
    return mean, float(1.96 * share.std(ddof=1) / np.sqrt(games)) if games > 1 else float("nan")


class LearnerAgent:
    """The trained network as a harness agent: ``act(observation, action_mask)`` plays its deterministic choice."""

    def __init__(self, net: TokenNet, game: str, name: str = "learner") -> None:
        self.net = net.eval()
        self.game = game
        self.name = name

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(greedy_actions(self.net, self.game, np.asarray(observation)[None], np.asarray(action_mask)[None])[0])

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return greedy_actions(self.net, self.game, observations, masks).astype(np.int64)

    def __repr__(self) -> str:
        return f"LearnerAgent(name={self.name!r}, game={self.game!r})"


__all__ = ["Batch", "LearnerAgent", "ShardPlayer", "ShardResult", "Tables", "collect", "encode", "final_returns", "greedy_actions", "match_batch",
           "merge_batches", "net_tokens", "pad_rewards", "play_shard", "seat_gae", "seat_gae_dense", "shard_opponent_slots", "shard_setup",
           "tokens_module"]

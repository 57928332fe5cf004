"""Network-guided determinised search for the learned agent, its harness loader, and a CLI that states strength beside cost.

At a decision with two or more legal actions, :class:`NetSearchAgent`

1. reads the network's policy on the observation and keeps its ``top_k``
   legal actions (the prior: the policy's logits), best first;
2. deals ``samples`` determinisations of the hidden cards from the
   observation alone, with the games' own determinisation code
   (Gnoming: :func:`grinch_env.gnoming.encoding.decode_game` then
   :meth:`Game.resample_from_infostate`, as the Gnoming ``search`` agent;
   Grinch: :func:`grinch_env.grinch.agents.search.game_from_view` and
   :func:`~grinch_env.grinch.agents.search.determinise`, as the Grinch ``search``);
3. plays every candidate in every determinisation (the same deals and the
   same chance stream for every candidate: common random numbers), then plays
   on with the network's greedy policy for every seat, all copies stepped in
   lockstep through one batched network call per step;
4. values each copy at its leaf: the game's end (the terminal reward of the
   run's ``reward_mode``), the round's end (``horizon=round``), or, with an
   integer ``horizon = H >= 1``, the searcher's first decision after ``H``
   decisions (so the value head reads a position of the kind it was trained
   on), with ``H = 0`` the searcher's first own decision after the candidate
   (the other seats played on with the policy: the cheapest); there the value is the network's value
   head read from the searcher's seat, plus the margin of the
   totals so far for a run trained with ``credit=round`` (its value head
   predicts the current round's margin only) or ``credit=pad`` (the Grinch: it
   predicts the margin still to come on top of the banked score pads);
5. plays the candidate with the highest mean value (ties: the prior's order).

``top_k=1`` is the network's own greedy choice (no search).  Cost grows with
``samples * top_k * (decisions to the leaf)``; the CLI prints milliseconds per
decision of the learned agent beside its win share::

    python -m training.learner.search --agent RUN_DIR:search=1,samples=8,top_k=3,horizon=8 --opponent greedy --players 3 --games 300

A learner checkpoint (a run directory or its ``latest.pt``) is an agent spec
wherever specs are accepted (``PATH`` alone plays the network greedily;
``PATH:search=1,...`` adds this search).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from grinch_env.agent_base import AgentOptionError
from training.learner.config import table_sizes
from training.learner.formats import LATEST, LEARNER_FORMATS
from training.learner.net import MASK_VALUE, TokenNet
from training.learner.rollout import LearnerAgent, net_tokens

HORIZON_WORDS = ("round", "end")
ALLOWED_OPTIONS = {
    "search": "0 or 1 (1: the network-guided search; 0: the network's greedy choice)",
    "samples": "an int >= 1: determinisations per candidate action (default 8)",
    "top_k": "an int >= 1: candidates, the network's top_k legal actions (default 3)",
    "horizon": "an int >= 0 (decisions played before the value head is read at the searcher's own turn; 0: its first own decision after the candidate; default 8), 'round' (to the round's end) or 'end' (to the game's end)",
    "trust": "0 or 1 (accepted for every checkpoint; a learner checkpoint holds only tensors)",
}


def allowed_text() -> str:
    return "; ".join(f"{k}: {v}" for k, v in ALLOWED_OPTIONS.items())


@dataclass(frozen=True)
class SearchOptions:
    """The options of a learner agent spec ``PATH:search=1,samples=8,top_k=3,horizon=8``."""

    search: bool = False
    samples: int = 8
    top_k: int = 3
    horizon: int | str = 8

    def label(self) -> str:
        if not self.search:
            return "net"
        return f"search(samples={self.samples},top_k={self.top_k},horizon={self.horizon})"


def parse_options(options: dict[str, Any] | None, where: str = "learner agent") -> SearchOptions:
    """Return the :class:`SearchOptions` of spec options (as :func:`grinch_env.agents.parse_spec` reads them); ``ValueError`` listing what is allowed."""
    options = dict(options or {})
    unknown = sorted(set(options) - set(ALLOWED_OPTIONS))
    if unknown:
        raise AgentOptionError(f"{where}: unknown option(s) {unknown}; allowed: {allowed_text()}")
    options.pop("trust", None)

    def _int(key: str, default: int) -> int:
        v = options.get(key, default)
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise AgentOptionError(f"{where}: {key} must be {ALLOWED_OPTIONS[key]}, got {v!r}")
        return v

    search = options.get("search", 0)
    if search not in (0, 1) or isinstance(search, bool):
        raise AgentOptionError(f"{where}: search must be {ALLOWED_OPTIONS['search']}, got {search!r}")
    horizon = options.get("horizon", 8)
    if not (horizon in HORIZON_WORDS or (isinstance(horizon, int) and not isinstance(horizon, bool) and horizon >= 0)):
        raise AgentOptionError(f"{where}: horizon must be {ALLOWED_OPTIONS['horizon']}, got {horizon!r}")
    opts = SearchOptions(bool(search), _int("samples", 8), _int("top_k", 3), horizon)
    if not opts.search and set(options) - {"search"}:
        raise AgentOptionError(f"{where}: options {sorted(set(options) - {'search'})} need search=1 (without it the network plays alone)")
    return opts


# ------------------------------------------------------------------ the games' rules for the search
class _GnomingRules:
    def determinise(self, obs: np.ndarray, seeds: np.ndarray) -> tuple[list, int]:
        from grinch_env.gnoming.encoding import decode_game

        first = decode_game(obs, np.random.default_rng(int(seeds[0])))  # the observer is seat 0
        deals = [first] + [first.resample_from_infostate(0, np.random.default_rng(int(s))) for s in seeds[1:]]
        return deals, 0

    def observe(self, game, seat: int) -> np.ndarray:
        from grinch_env.gnoming.encoding import encode as observe

        return observe(game, seat)


class _GrinchRules:
    def __init__(self) -> None:
        from grinch_env.grinch import encoding
        from grinch_env.grinch.scoring import resolve_layout

        self.layout = resolve_layout("standard")
        self.scales = encoding.Scales(self.layout)

    def determinise(self, obs: np.ndarray, seeds: np.ndarray) -> tuple[list, int]:
        from grinch_env.grinch.agents.base import decode
        from grinch_env.grinch.agents.search import determinise, game_from_view

        view = decode(obs, self.scales)
        template, me = game_from_view(view, self.layout)
        return determinise(template, me, view, np.random.default_rng(int(seeds[0])), len(seeds)), me

    def observe(self, game, seat: int) -> np.ndarray:
        from grinch_env.grinch.encoding import encode as observe

        return observe(game, seat, self.scales)


RULES = {"gnoming": _GnomingRules, "grinch": _GrinchRules}


def _preference(scores: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The legal actions of ``mask`` in the order of the network's ``scores`` (ties: lowest id)."""
    legal = np.flatnonzero(np.asarray(mask).astype(bool))
    return legal[np.argsort(-scores[legal], kind="stable")]


# ------------------------------------------------------------------ the search
class NetSearch:
    """The search of the module docstring for one network (``net(state, actions) -> (logits, q, value)``; its ``token_options`` say how to encode for it)."""

    def __init__(self, net: torch.nn.Module, game: str, algo: str = "ppo", credit: str = "game", reward_mode: str = "margin",
                 samples: int = 8, top_k: int = 3, horizon: int | str = 8) -> None:
        if game not in RULES:
            raise ValueError(f"NetSearch plays {sorted(RULES)}, got game {game!r}")
        parse_options({"search": 1, "samples": samples, "top_k": top_k, "horizon": horizon}, "NetSearch")
        if algo != "ppo":
            raise ValueError(f"NetSearch reads the network's policy logits (algo 'ppo'); got algo {algo!r} (Deep Monte-Carlo's Q is retired)")
        self.net, self.game, self.algo, self.credit, self.reward_mode = net, game, algo, credit, reward_mode
        self.samples, self.top_k, self.horizon = samples, top_k, horizon
        self.rules = RULES[game]()
        self.own_turn_leaf = True  # False: horizon=0 reads the value head right after the candidate whoever is to act (the old search; diagnosis only)
        self.last: dict[str, Any] = {}  # candidates, their mean values and the prior order of the last searched decision

    def _forward(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        st, at = net_tokens(self.net, self.game, obs)
        with torch.inference_mode():  # a little cheaper than no_grad at the search's small batches (benchmarks/bench_learner.py)
            logits, _, v = self.net(st, at)
        return logits.numpy(), v.numpy()

    def prior(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Return the legal actions in the network's order of preference (ties: lowest id)."""
        scores, _ = self._forward(np.asarray(obs, np.float32)[None])
        return _preference(scores[0], mask)

    def choose(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
        """Return the searched action for ``obs`` (the observer's own observation and mask)."""
        return self.choose_many([obs], [mask], [rng])[0]

    def choose_many(self, observations: list[np.ndarray], masks: list[np.ndarray], rngs: list[np.random.Generator]) -> list[int]:
        """Return the searched action of each decision (observation, mask, its own random stream), as :meth:`choose`
        one by one would, with the network's calls of all decisions' priors and rollouts batched together.
        ``self.last`` describes the last decision."""
        obs = np.stack([np.asarray(o, np.float32) for o in observations])
        scores, _ = self._forward(obs)
        orders = [_preference(row, mask) for row, mask in zip(scores, masks)]
        games, mes, starts, spans = [], [], [], []  # spans[d]: decision d's copies in games (empty: not searched)
        for d, (order, rng) in enumerate(zip(orders, rngs)):
            first = len(games)
            if len(order[: self.top_k]) > 1:
                g, me, start_round = self.candidate_games(obs[d], order[: self.top_k], rng.integers(2**62, size=self.samples))
                games += g
                mes += [me] * len(g)
                starts += [start_round] * len(g)
            spans.append(slice(first, len(games)))
        values = self.rollout(games, np.array(mes, np.int64), np.array(starts, np.int64)) if games else np.zeros(0)
        chosen = []
        for order, span in zip(orders, spans):
            cands = order[: self.top_k]
            self.last = {"prior": order.tolist(), "candidates": cands.tolist(), "values": None}
            if len(cands) == 1:
                chosen.append(int(cands[0]))
                continue
            mean = values[span].reshape(len(cands), self.samples).mean(1)
            self.last["values"] = mean.tolist()
            chosen.append(int(cands[int(np.argmax(mean))]))  # first maximum: the prior's order breaks ties
        return chosen

    def candidate_games(self, obs: np.ndarray, cands: np.ndarray, seeds: np.ndarray) -> tuple[list, int, int]:
        """Return ``(games, me, start_round)``: one determinisation per seed, cloned once per candidate (candidate-major,
        every candidate on the same deals and chance streams) and stepped by it; ``me`` is the searcher's seat."""
        deals, me = self.rules.determinise(np.asarray(obs, np.float32), seeds)
        games = [deal.clone(rng=np.random.default_rng(int(s) + 1)) for _ in cands for deal, s in zip(deals, seeds)]
        for game, a in zip(games, np.repeat(cands, len(deals))):
            game.step(int(a))
        return games, me, int(deals[0].round)

    def _margin(self, game, me: int) -> float:
        return float(game.rewards("margin")[me])

    def rollout(self, games: list, me: int | np.ndarray, start_round: int | np.ndarray) -> np.ndarray:
        """Play every game on with the network's greedy policy for every seat to its leaf; return seat ``me``'s leaf values
        (``me`` and ``start_round``: one for all games, or one per game: many decisions' copies in one batch)."""
        horizon = self.horizon
        mes = np.broadcast_to(np.asarray(me, np.int64), (len(games),))
        starts = np.broadcast_to(np.asarray(start_round, np.int64), (len(games),))
        values = np.zeros(len(games))
        steps = np.zeros(len(games), np.int64)
        active = list(range(len(games)))
        while active:
            play, read_v = [], []
            for i in active:
                g, me, start_round = games[i], int(mes[i]), int(starts[i])
                if g.done:
                    values[i] = float(g.rewards(self.reward_mode)[me])
                elif horizon != "end" and g.round != start_round:  # the round is over
                    if self.credit == "round":
                        values[i] = self._margin(g, me)
                    else:
                        read_v.append(i)
                elif isinstance(horizon, int) and steps[i] >= horizon and (g.current == me or (horizon == 0 and not self.own_turn_leaf)):
                    read_v.append(i)
                else:
                    play.append(i)
            if read_v:
                _, v = self._forward(np.stack([self.rules.observe(games[i], int(mes[i])) for i in read_v]))
                for i, val in zip(read_v, v):
                    g, me = games[i], int(mes[i])
                    mid_round = g.round == starts[i]
                    # round credit: V is the current round's margin, on top of the totals; pad credit: V is the margin still to
                    # come, on top of the banked score pads (grinch_env.grinch.tokens.banked_margin); game credit: V is all of it
                    banked = self.credit == "pad" or (self.credit == "round" and mid_round)
                    values[i] = float(val) + (self._margin(g, me) if banked else 0.0)
            if play:
                obs = np.stack([self.rules.observe(games[i], games[i].current) for i in play])
                masks = np.stack([np.frombuffer(bytes(games[i].legal_mask()), np.int8) for i in play]).astype(bool)
                scores, _ = self._forward(obs)
                acts = np.where(masks, scores, MASK_VALUE).argmax(1)
                for i, a in zip(play, acts):
                    games[i].step(int(a))
                    steps[i] += 1
            active = play
        return values


# ------------------------------------------------------------------ agents and loading
TIMING: dict[str, list[float]] = {}
"""Per agent name: ``[decisions, seconds]`` of every :class:`NetSearchAgent` / :class:`TimedLearnerAgent` in this process (seat copies share it)."""


def _timed(name: str, start: float, decisions: int = 1) -> None:
    rec = TIMING.setdefault(name, [0, 0.0])
    rec[0] += decisions
    rec[1] += time.perf_counter() - start


class TimedLearnerAgent(LearnerAgent):
    """:class:`LearnerAgent` that records its decisions and time in :data:`TIMING` (and states its table sizes)."""

    def __init__(self, net: TokenNet, game: str, name: str, num_players: list[int], batch_key: Any = None) -> None:
        super().__init__(net, game, name)
        self.num_players = num_players
        self.batch_key = batch_key  # equal for copies of one checkpoint: the lockstep harness batches their decisions

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        start = time.perf_counter()
        a = super().act(observation, action_mask)
        _timed(self.name, start)
        return a

    @staticmethod
    def act_together(agents: list[TimedLearnerAgent], observations: list[np.ndarray], masks: list[np.ndarray]) -> list[int]:
        """The decisions of many games (agents of one ``batch_key``: the same network) in one forward pass."""
        start = time.perf_counter()
        acts = agents[0].act_batch(np.stack(observations), np.stack(masks)).tolist()
        _timed(agents[0].name, start, len(acts))
        return acts


class NetSearchAgent:
    """The network with :class:`NetSearch` as a harness agent (``act`` takes the observer's observation and mask only)."""

    def __init__(self, net: TokenNet, game: str, algo: str, credit: str, reward_mode: str, options: SearchOptions, name: str,
                 num_players: list[int], seed: int | None = None, batch_key: Any = None) -> None:
        self.net = net.eval()
        self.game, self.algo, self.name, self.num_players = game, algo, name, num_players
        self.batch_key = batch_key  # equal for copies of one checkpoint and options: the lockstep harness batches their searches
        self.search = NetSearch(net, game, algo, credit, reward_mode, options.samples, options.top_k, options.horizon)
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        start = time.perf_counter()
        mask = np.asarray(action_mask).astype(bool)
        legal = np.flatnonzero(mask)
        if len(legal) == 0:
            raise ValueError("action_mask has no legal action: an agent is only asked to act when it is its turn")
        a = int(legal[0]) if len(legal) == 1 else self.search.choose(np.asarray(observation, np.float32), mask, self.rng)
        _timed(self.name, start)
        return a

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return np.array([self.act(o, m) for o, m in zip(observations, masks)], dtype=np.int64)

    @staticmethod
    def act_together(agents: list[NetSearchAgent], observations: list[np.ndarray], masks: list[np.ndarray]) -> list[int]:
        """The searched decisions of many games (agents of one ``batch_key``), each with its own agent's random stream,
        the network's calls batched over all of them (:meth:`NetSearch.choose_many`); each equals ``agent.act``'s."""
        start = time.perf_counter()
        bools = [np.asarray(m).astype(bool) for m in masks]
        for m in bools:
            if not m.any():
                raise ValueError("action_mask has no legal action: an agent is only asked to act when it is its turn")
        acts: list[int | None] = [int(np.flatnonzero(m)[0]) if m.sum() == 1 else None for m in bools]
        todo = [i for i, a in enumerate(acts) if a is None]
        if todo:
            found = agents[0].search.choose_many([np.asarray(observations[i], np.float32) for i in todo], [bools[i] for i in todo],
                                                 [agents[i].rng for i in todo])
            for i, a in zip(todo, found):
                acts[i] = a
        _timed(agents[0].name, start, len(acts))
        return [int(a) for a in acts]

    def __repr__(self) -> str:
        return f"NetSearchAgent(name={self.name!r}, game={self.game!r})"


def load_learner(path: str | Path) -> tuple[TokenNet, dict[str, Any], Path]:
    """Return ``(net, config dict, file)`` of a learner checkpoint (a run directory or its ``latest.pt``); ``ValueError`` if it is not one."""
    p = Path(path)
    file = p / LATEST if p.is_dir() else p
    if not file.is_file():
        raise ValueError(f"{str(p)!r} holds no learner checkpoint (a run directory with {LATEST}, or the .pt file)")
    ckpt = torch.load(file, map_location="cpu", weights_only=False)
    return net_from_checkpoint(ckpt, file) + (file,)


def learner_formats() -> tuple[str, ...]:
    """The checkpoint formats that hold a learner network: the trainer's (:mod:`training.learner.run`) and expert iteration's."""
    return LEARNER_FORMATS


def net_from_checkpoint(ckpt: dict[str, Any], file: Path) -> tuple[TokenNet, dict[str, Any]]:
    """Return ``(net in eval mode, config dict)`` of a loaded learner checkpoint dictionary."""
    from training.learner.rollout import tokens_module

    if not isinstance(ckpt, dict) or ckpt.get("format") not in learner_formats():
        raise ValueError(f"{str(file)!r} is not a learner checkpoint (format {ckpt.get('format') if isinstance(ckpt, dict) else None!r}, "
                         f"expected one of {learner_formats()})")
    cfg = ckpt["config"]
    if cfg.get("algo", "ppo") != "ppo":  # older checkpoints store the family; Deep Monte-Carlo's networks learned Q only
        raise ValueError(f"{str(file)!r} is a run of algo {cfg['algo']!r} (Deep Monte-Carlo), a retired family: its network learned "
                         "Q-values, which no agent reads any more; only PPO runs play")
    want = tokens_module(cfg["game"]).TOKENS_VERSION
    if ckpt.get("tokens_version", 1) != want:
        raise ValueError(f"{str(file)!r} was trained on tokens version {ckpt.get('tokens_version', 1)} of {cfg['game']}; this code encodes version {want}")
    net = TokenNet(**cfg["net"])
    net.load_state_dict(ckpt["model"])
    return net.eval(), cfg


def learner_agent_from(ckpt: dict[str, Any], file: Path, seed: int | None = None, options: dict[str, Any] | None = None):
    """Return the harness agent of a loaded learner checkpoint with spec ``options`` (:data:`ALLOWED_OPTIONS`)."""
    opts = parse_options(options, f"learner checkpoint {str(file)!r}")
    net, cfg = net_from_checkpoint(ckpt, file)
    sizes = table_sizes(cfg["num_players"])
    run = cfg.get("run_name", file.parent.name)
    name = f"{run}/{file.stem}" + ("" if not opts.search else ":" + opts.label())
    # copies with the same weights and options are one agent to the lockstep harness, which batches their decisions
    key = (hashlib.sha1(b"".join(t.numpy().tobytes() for t in net.state_dict().values())).hexdigest(), opts)
    if not opts.search:
        return TimedLearnerAgent(net, cfg["game"], name, sizes, key)
    if cfg.get("ppo", {}).get("oracle_critic") and opts.horizon != "end":
        raise AgentOptionError(f"learner checkpoint {str(file)!r} was trained with ppo.oracle_critic: its value head reads the other hands, "
                               f"which a player cannot see, so its search needs horizon=end (leaves at the game's end), got horizon={opts.horizon!r}")
    return NetSearchAgent(net, cfg["game"], "ppo", cfg.get("credit", "game"), cfg.get("reward_mode", "margin"), opts, name, sizes, seed, key)


def load_learner_agent(path: str | Path, seed: int | None = None, options: dict[str, Any] | None = None):
    """Return the harness agent of the learner checkpoint at ``path`` with spec ``options``."""
    p = Path(path)
    file = p / LATEST if p.is_dir() else p
    if not file.is_file():
        raise ValueError(f"{str(p)!r} holds no learner checkpoint")
    return learner_agent_from(torch.load(file, map_location="cpu", weights_only=False), file, seed, options)


# ------------------------------------------------------------------ CLI
def main(argv: list[str] | None = None) -> int:
    from grinch_env.agents import make_agent
    from grinch_env.evaluation.evaluate import evaluate

    p = argparse.ArgumentParser(prog="python -m training.learner.search", description=__doc__.split("\n\n")[0])
    p.add_argument("--agent", required=True, help="a learner checkpoint with options, e.g. RUN_DIR:search=1,samples=8,top_k=3,horizon=8")
    p.add_argument("--opponent", default="greedy", help="the agent in every other seat (default greedy)")
    p.add_argument("--players", type=int, default=3)
    p.add_argument("--games", type=int, default=300)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--game", default=None, help="the game (default: the checkpoint's)")
    p.add_argument("--progress", action="store_true", help="a progress bar on stderr")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    path = args.agent.rpartition(":")[0] if ":" in args.agent and not Path(args.agent).exists() else args.agent
    game = args.game
    if game is None:
        try:
            _, cfg, _ = load_learner(path)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        game = cfg["game"]
    try:
        agent = make_agent(args.agent, seed=args.seed, num_players=args.players, game=game)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    # The agents live in the module ``training.learner.search`` (loaded through the checkpoint loader); as
    # ``python -m`` this file is also ``__main__``, whose TIMING would stay empty: read the module's.
    from training.learner import search as module

    timing = module.TIMING
    timing.clear()
    start = time.perf_counter()
    res = evaluate([agent] + [args.opponent] * (args.players - 1), num_players=args.players, num_games=args.games, seed=args.seed, game=game,
                   progress=args.progress)
    wall = time.perf_counter() - start
    a = res.per_agent[res.agents[0]]
    decisions, seconds = timing.get(agent.name, [0, 0.0])
    lo, hi = a["win_rate_ci"]
    print(res.table())
    print(f"{agent.name} vs {args.players - 1} x {args.opponent}, {args.players} players, {args.games} games (seed {args.seed}): "
          f"win share {a['win_rate']:.3f} [{lo:.3f}, {hi:.3f}] (parity {1 / args.players:.3f}); "
          f"{1000 * seconds / max(1, decisions):.1f} ms per decision over {decisions} decisions; wall {wall:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["ALLOWED_OPTIONS", "NetSearch", "NetSearchAgent", "SearchOptions", "TIMING", "TimedLearnerAgent", "learner_agent_from",
           "load_learner", "load_learner_agent", "parse_options"]

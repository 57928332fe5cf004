"""Expert iteration with the learned network: search with the network, distil its choices into the network, repeat.

Usage::

    python -m training.learner.expert --config configs/learner_gnoming_expert.yaml          # a fresh run
    python -m training.learner.expert --resume checkpoints/learner_gnoming_expert            # continue exactly

Each generation

1. plays ``games_per_generation`` games on the rules engine: self-play, every
   seat by the current network (sampling its policy, so the positions vary),
   or, with ``opponent`` (the league setting, ``configs/learner_gnoming_expert_league.yaml``),
   the network in one seat (seat-rotated; ``learner_play: greedy`` for the
   positions the network alone meets) against copies of that agent, recording
   the network's decisions only; ``workers`` processes play the games, each
   from its own seed, so the data do not depend on their number;
   at each recorded decision with two or more legal actions, with probability
   ``label_fraction``, :class:`training.learner.search.NetSearch` (the
   current network as prior, rollout policy and leaf value) labels the
   position with its choice;
2. records for every decision its observation, mask and value target (the
   deciding seat's margin: its round's margin with ``credit=round``, else the
   game's ``reward_mode`` reward), and where labelled the search's choice,
   its candidates and their mean values;
3. trains the network for ``epochs`` passes over the last
   ``replay_generations`` generations' data: the policy term on the labelled
   decisions plus ``vf_coef`` times the value head's squared error plus
   ``kl_coef`` times the KL divergence from the starting network's policy
   (the anchor: the network the run began with, kept frozen) to the
   network's, on every decision.  The policy term is ``target``:
   ``choice``, the cross-entropy of the masked policy on the search's
   choice (one-hot), or ``soft``, the cross-entropy of the policy renormalised
   over the search's candidates against ``softmax(values / temperature)`` of
   their mean values (:func:`soft_target_loss`): the search's preferences
   among its candidates, not a noisy argmax, and no push on the actions it
   did not search;
4. optionally measures the network alone against the curve opponent (batched,
   seat-rotated: :func:`training.learner.rollout.match_batch`; the same deals
   every generation, and once before the first: the starting network), and
   writes ``curve.csv`` and ``curve.png`` in the learner's format (win share over
   the CPU seconds of every process, the workers' too, and over decisions played;
   the value head's explained variance and the policy's entropy on the last
   distillation pass).

The run directory holds ``latest.pt`` (format ``grinch_learner_expert_v1``:
weights, optimizer, config, the numpy and torch random states, the replay
data and the log), written after every generation: ``--resume`` continues
from the last finished generation exactly (an interrupted generation is played
again from the same random state).  ``latest.pt`` is also a harness agent:
``make_agent("checkpoints/<run>")``, with the search options of
:mod:`training.learner.search`.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch
import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator
from torch import nn

from grinch_env.games import get_game
from training.learner.config import table_sizes
from training.learner.formats import EXPERT_FORMAT, LATEST, read_run_file
from training.learner.net import TokenNet
from training.learner.rollout import match_batch, net_tokens, tokens_module
from training.learner.search import HORIZON_WORDS, NetSearch
from training.model import MaskedCategorical


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NetSection(_Section):
    d_model: int = Field(32, ge=8)
    layers: int = Field(1, ge=1)
    heads: int = Field(4, ge=1)
    ff: int = Field(64, ge=8)


class SearchSection(_Section):
    samples: int = Field(8, ge=1, description="determinisations per candidate")
    top_k: int = Field(3, ge=1, description="candidates: the network's top_k legal actions")
    horizon: int | str = Field(8, description="decisions before the value head is read, 'round' or 'end'")

    @model_validator(mode="after")
    def _horizon(self) -> SearchSection:
        if not (self.horizon in HORIZON_WORDS or (isinstance(self.horizon, int) and self.horizon >= 0)):
            raise ValueError(f"search.horizon must be an int >= 0, 'round' or 'end', got {self.horizon!r}")
        return self


class ExpertConfig(_Section):
    """One expert-iteration run (unknown keys are errors)."""

    game: Literal["grinch", "gnoming"] = "gnoming"
    num_players: int | list[int] = 3
    run_name: str = "learner_expert"
    checkpoint_dir: str = "checkpoints"
    seed: int = 0
    init: str | None = Field(None, description="a learner checkpoint (run dir or .pt) whose network starts the run; None: a fresh network (net)")
    net: NetSection = Field(default_factory=NetSection)
    credit: Literal["game", "round", "pad"] = Field("round", description="what the value head predicts, as the learner's credit (an init "
                                                    "network's own must match): each round's margin ('round', Gnoming), the margin still to "
                                                    "come on top of the banked score pads ('pad', the Grinch) or the game's reward ('game'); "
                                                    "the value targets and the search's leaf values read it")
    reward_mode: str = "margin"
    generations: int = Field(10, ge=1)
    games_per_generation: int = Field(8, ge=1)
    label_fraction: float = Field(0.25, gt=0, le=1, description="share of decisions (with a choice) the search labels")
    search: SearchSection = Field(default_factory=SearchSection)
    epochs: int = Field(4, ge=1)
    minibatch_size: int = Field(256, ge=1)
    learning_rate: float = Field(3e-4, gt=0)
    vf_coef: float = Field(0.5, ge=0)
    target: Literal["choice", "soft"] = Field("choice", description="policy target: the search's choice (one-hot) or softmax(values / temperature) over its candidates")
    temperature: float = Field(0.02, gt=0, description="soft targets: the temperature of the candidates' mean values (margin units: 1 = 100 points)")
    kl_coef: float = Field(0.0, ge=0, description="weight of KL(anchor policy || policy) on every decision; the anchor is the starting network")
    max_grad_norm: float = Field(0.5, gt=0)
    replay_generations: int = Field(2, ge=1)
    opponent: str | None = Field(None, description="None: self-play, every seat the network; an agent name (e.g. 'search'): the network plays "
                                 "one seat, seat-rotated, against copies of that agent, and only its decisions are recorded and labelled")
    learner_play: Literal["sample", "greedy"] = Field("sample", description="the network's moves while playing: sampled from its policy, "
                                                      "or its first choice (the positions the network alone meets)")
    workers: int = Field(1, ge=1, description="processes that play a generation's games (the data do not depend on it)")
    eval_games: int = Field(48, ge=0, description="games against eval_opponent after each generation (0: none)")
    eval_opponent: str = "greedy"
    torch_threads: int = Field(1, ge=1)

    @model_validator(mode="after")
    def _fits(self) -> ExpertConfig:
        spec = get_game(self.game)
        for n in self.table_sizes:
            spec.check_num_players(n)
        if self.opponent is not None:
            from grinch_env.agents import make_agent

            try:
                make_agent(self.opponent, num_players=self.table_sizes[0], game=self.game, seed=0)
            except (ValueError, KeyError, FileNotFoundError) as exc:
                raise ValueError(f"opponent {self.opponent!r} is not an agent of {spec.title}: {exc}") from None
        if self.reward_mode not in spec.reward_modes:
            raise ValueError(f"reward_mode for {spec.title} must be one of {spec.reward_modes}, got {self.reward_mode!r}")
        if self.credit == "round" and (self.game != "gnoming" or self.reward_mode != "margin"):
            raise ValueError("credit='round' needs game=gnoming and reward_mode=margin (rounds are independent deals only there)")
        if self.credit == "pad" and (self.game != "grinch" or self.reward_mode != "margin"):
            raise ValueError("credit='pad' needs game=grinch and reward_mode=margin (the Grinch's score pads bank the margin round by round)")
        return self

    @property
    def table_sizes(self) -> list[int]:
        return table_sizes(self.num_players)

    @property
    def run_dir(self) -> Path:
        return Path(self.checkpoint_dir) / self.run_name


def load_config(path: str | Path | None, overrides: list[str] | None = None) -> ExpertConfig:
    """Return the validated config of YAML ``path`` with dotted ``key=value`` overrides."""
    from training.learner.config import validate_yaml

    return validate_yaml(ExpertConfig, path, overrides)


def soft_target_loss(logits: torch.Tensor, cands: torch.Tensor, values: torch.Tensor, temperature: float) -> torch.Tensor:
    """Mean over rows of the cross-entropy of ``softmax(values / temperature)`` against the policy renormalised over the
    candidates: ``logits`` ``[B, A]``, ``cands`` ``[B, K]`` action ids (-1: no candidate in that column), ``values`` ``[B, K]``."""
    valid = cands >= 0
    picked = logits.gather(1, cands.clamp(min=0))
    log_p = torch.log_softmax(picked.masked_fill(~valid, -1e9), dim=1)
    target = torch.softmax((values / temperature).masked_fill(~valid, -1e9), dim=1)
    return -(target * log_p.masked_fill(~valid, 0.0)).sum(1).mean()


def anchor_kl(anchor_logits: torch.Tensor, logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean over rows of KL(anchor || policy) of the two masked policies (``mask`` ``[B, A]`` bool)."""
    log_q = torch.log_softmax(anchor_logits.masked_fill(~mask, -1e9), dim=1)
    log_p = torch.log_softmax(logits.masked_fill(~mask, -1e9), dim=1)
    return (log_q.exp() * (log_q - log_p)).masked_fill(~mask, 0.0).sum(1).mean()


def _margin_targets(game, credit: str, reward_mode: str) -> tuple[list[list[float]], list[float]]:
    """Return ``(per round per seat margin, per seat game reward)`` of a finished game."""
    n = game.num_players
    rounds = []
    for scores in game.round_scores if credit == "round" else ():  # per-round scores: Gnoming only (credit round needs it)
        total = sum(scores)
        rounds.append([((total - s) / (n - 1) - s) / 100.0 for s in scores])
    return rounds, [float(r) for r in game.rewards(reward_mode)]


def play_game(net: TokenNet, cfg: ExpertConfig, index: int, num_players: int, seed: int) -> dict[str, np.ndarray]:
    """Play one game of the generation from ``seed`` alone; return its recorded decisions (the arrays :meth:`ExpertRun.play` joins).

    Self-play (``cfg.opponent`` None): every seat is the network and every decision with two or more legal actions is
    recorded.  Against an opponent: the network plays seat ``index % num_players`` (seat-rotated) and the others are
    copies of ``cfg.opponent``, each with its own seed; only the network's decisions are recorded.  The network's move
    is sampled from its policy or its first choice (``learner_play``); a recorded decision is labelled by the search
    with probability ``label_fraction``.
    """
    spec = get_game(cfg.game)
    rng = np.random.default_rng(seed)
    search = NetSearch(net, cfg.game, "ppo", cfg.credit, cfg.reward_mode, cfg.search.samples, cfg.search.top_k, cfg.search.horizon)
    me = None if cfg.opponent is None else index % num_players
    agents: dict[int, Any] = {}
    if me is not None:
        from grinch_env.agents import make_agent

        for s in range(num_players):
            if s != me:
                agents[s] = make_agent(cfg.opponent, num_players=num_players, game=cfg.game, seed=int(rng.integers(2**31)))
                agents[s].reset(int(rng.integers(2**31)))
    game = spec.new_game(num_players, int(rng.integers(2**62)))
    encoder = spec.encoder()
    k = cfg.search.top_k
    obs_l, mask_l, label_l, cand_l, value_l = [], [], [], [], []
    rec: list[tuple[int, int, float]] = []  # (seat, round, banked margin) per recorded decision
    while not game.done:
        seat = game.current
        view = encoder.observe(game, seat)
        obs, mask = view["observation"], np.asarray(view["action_mask"]).astype(bool)
        if seat in agents:
            game.step(int(agents[seat].act(obs, mask)))
            continue
        if mask.sum() < 2:
            game.step(int(np.flatnonzero(mask)[0]))
            continue
        st, at = net_tokens(net, cfg.game, obs[None])
        with torch.inference_mode():
            logits, _, _ = net(st, at)
        logits = logits[0].double().numpy()
        logits[~mask] = -np.inf
        if cfg.learner_play == "greedy":
            action = int(np.argmax(logits))
        else:
            p = np.exp(logits - logits.max())
            action = int(rng.choice(len(p), p=p / p.sum()))
        label, cands, values = -1, [-1] * k, [0.0] * k
        if rng.random() < cfg.label_fraction:
            label = search.choose(obs, mask, rng)
            found = search.last["candidates"]
            cands[: len(found)] = found
            values[: len(found)] = search.last["values"] or [0.0] * len(found)
        cand_l.append(cands)
        value_l.append(values)
        obs_l.append(obs.astype(np.float16))
        mask_l.append(mask.astype(np.int8))
        label_l.append(label)
        rec.append((seat, int(game.round), float(game.rewards("margin")[seat]) if cfg.credit == "pad" else 0.0))
        game.step(action)
    rounds, final = _margin_targets(game, cfg.credit, cfg.reward_mode)
    # round: the decision's round margin; pad: the margin still to come on top of the pads banked at the decision; game: all of it
    targets = [rounds[r][s] if cfg.credit == "round" else final[s] - banked for s, r, banked in rec]
    return {"obs": np.stack(obs_l), "masks": np.stack(mask_l), "labels": np.asarray(label_l, np.int64),
            "targets": np.asarray(targets, np.float32), "cands": np.asarray(cand_l, np.int64).reshape(-1, k),
            "cand_values": np.asarray(value_l, np.float32).reshape(-1, k)}


_PLAYER: dict[str, Any] = {}


def _cpu_seconds() -> float:
    """CPU seconds of this process and of its finished child processes (a generation's workers, joined when its pool closes)."""
    import resource

    child = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + child.ru_utime + child.ru_stime


def _init_player(weights: bytes, net_config: dict[str, Any], cfg: dict[str, Any]) -> None:
    import pickle

    torch.set_num_threads(1)
    net = TokenNet(**net_config)
    net.load_state_dict(pickle.loads(weights))
    _PLAYER["net"] = net.eval()
    _PLAYER["cfg"] = ExpertConfig.model_validate(cfg)


def _worker_play(index: int, num_players: int, seed: int) -> dict[str, np.ndarray]:
    return play_game(_PLAYER["net"], _PLAYER["cfg"], index, num_players, seed)


class ExpertRun:
    """One run's state: network, optimizer, random streams, replay data and log (everything ``latest.pt`` holds)."""

    def __init__(self, cfg: ExpertConfig) -> None:
        self.cfg = cfg
        torch.manual_seed(cfg.seed)
        self.rng = np.random.default_rng(cfg.seed)
        self.algo = "ppo"
        if cfg.init is not None:
            from training.learner.search import load_learner

            net, init_cfg, _ = load_learner(cfg.init)
            if init_cfg["game"] != cfg.game:
                raise ValueError(f"init {cfg.init!r} plays {init_cfg['game']!r}, not {cfg.game!r}")
            trained = init_cfg.get("credit", "game")
            if trained != cfg.credit:
                raise ValueError(f"init {cfg.init!r} was trained with credit={trained!r} (what its value head predicts, which the "
                                 f"search's leaf values and the value targets read), not {cfg.credit!r}: set credit: {trained}")
            if init_cfg.get("pad_others", 1.0) != 1.0:
                raise ValueError(f"init {cfg.init!r} was trained with pad_others={init_cfg['pad_others']} (its value head predicts own "
                                 "points, not the margin the search and the value targets read); expert iteration needs pad_others 1")
            self.net_config = dict(init_cfg["net"])
            self.net = net
        else:
            self.net_config = cfg.net.model_dump()
            self.net = TokenNet(**self.net_config)
        self.net.eval()
        self.anchor = self._frozen(self.net.state_dict())
        self.opt = torch.optim.Adam(self.net.parameters(), lr=cfg.learning_rate, eps=1e-5)
        self.generation = 0
        self.seconds = 0.0  # CPU seconds of every process (the workers' too)
        self.wall_seconds = 0.0
        self.replay: list[dict[str, np.ndarray]] = []
        self.log: list[dict[str, Any]] = []

    def _frozen(self, weights: dict[str, torch.Tensor]) -> TokenNet:
        """A frozen copy of the network with ``weights``: the KL term's anchor."""
        net = TokenNet(**self.net_config)
        net.load_state_dict({k: v.clone() for k, v in weights.items()})
        return net.eval().requires_grad_(False)

    # ------------------------------------------------------------ checkpoint
    def agent_config(self) -> dict[str, Any]:
        """The keys the harness loader reads (:func:`training.learner.search.net_from_checkpoint`)."""
        cfg = self.cfg
        return {"game": cfg.game, "num_players": cfg.num_players, "algo": self.algo, "net": self.net_config, "credit": cfg.credit,
                "reward_mode": cfg.reward_mode, "run_name": cfg.run_name}

    def state(self) -> dict[str, Any]:
        return {"format": EXPERT_FORMAT, "expert_config": self.cfg.model_dump(), "config": self.agent_config(), "model": self.net.state_dict(),
                "optimizer": self.opt.state_dict(), "anchor": self.anchor.state_dict(), "numpy_rng": self.rng.bit_generator.state, "torch_rng": torch.get_rng_state(),
                "generation": self.generation, "seconds": self.seconds, "wall_seconds": self.wall_seconds, "log": self.log,
                "replay": [{k: torch.from_numpy(v) for k, v in d.items()} for d in self.replay],  # tensors: loadable with weights_only
                "tokens_version": tokens_module(self.cfg.game).TOKENS_VERSION}

    def save(self) -> Path:
        from training.checkpoint import atomic_torch_save

        path = self.cfg.run_dir / LATEST
        atomic_torch_save(self.state(), path)
        return path

    @classmethod
    def load(cls, path: str | Path, overrides: list[str] | None = None) -> ExpertRun:
        ckpt, path = read_run_file(path, EXPERT_FORMAT, f"give an expert run directory or its {LATEST}", "an expert-iteration checkpoint")
        data = ckpt["expert_config"]
        from training.learner.config import _set
        from training.learner.run import resume_where_loaded

        for item in resume_where_loaded(path.parent, overrides or [], data):  # it goes on where it was loaded from, a copy included
            key, _, value = item.partition("=")
            _set(data, key.strip(), yaml.safe_load(value))
        data["init"] = None  # the weights come from the checkpoint
        run = cls(ExpertConfig.model_validate(data))
        run.net_config = dict(ckpt["config"]["net"])
        run.net = TokenNet(**run.net_config)
        run.net.load_state_dict(ckpt["model"])
        run.net.eval()
        run.anchor = run._frozen(ckpt["anchor"] if "anchor" in ckpt else ckpt["model"])  # checkpoints before the anchor: none was used
        run.opt = torch.optim.Adam(run.net.parameters(), lr=run.cfg.learning_rate, eps=1e-5)
        run.opt.load_state_dict(ckpt["optimizer"])
        run.rng.bit_generator.state = ckpt["numpy_rng"]
        torch.set_rng_state(ckpt["torch_rng"])
        for k in ("generation", "seconds", "log"):
            setattr(run, k, ckpt[k])
        run.wall_seconds = ckpt.get("wall_seconds", 0.0)  # checkpoints before it was kept: counted from the resume
        run.replay = [{k: v.numpy() for k, v in d.items()} for d in ckpt["replay"]]
        return run

    # ------------------------------------------------------------ one generation
    def play(self) -> dict[str, np.ndarray]:
        """Play the generation's games (self-play, or the network against ``opponent``); return the recorded decisions with
        value targets and the search's labels (-1: none), candidates and their values.

        Each game draws its seed from the run's random stream first, then is played by :func:`play_game` alone, so the
        data are the same with any number of ``workers``."""
        cfg = self.cfg
        sizes = cfg.table_sizes
        jobs = [(i, sizes[i % len(sizes)], int(self.rng.integers(2**62))) for i in range(cfg.games_per_generation)]
        if cfg.workers == 1:
            games = [play_game(self.net, cfg, *job) for job in jobs]
        else:
            import pickle

            from grinch_env.parallel import worker_pool

            weights = pickle.dumps({k: v.clone() for k, v in self.net.state_dict().items()})
            with worker_pool(min(cfg.workers, len(jobs)), _init_player, (weights, self.net_config, cfg.model_dump())) as pool:
                games = pool.starmap(_worker_play, jobs)
        return {k: np.concatenate([g[k] for g in games]) for k in games[0]}

    def distil(self, data: dict[str, np.ndarray]) -> dict[str, float]:
        """Train on ``data``: the policy term (``target``) on the labelled decisions, ``vf_coef`` times the value error and
        ``kl_coef`` times the KL from the anchor's policy on all."""
        cfg = self.cfg
        if cfg.target == "soft" and "cands" not in data:
            raise ValueError("target='soft' needs the search's candidates and values in the replay data (generations played before "
                             "they were recorded have none): resume with --set replay_generations=1, or target=choice")
        self.net.train()
        n = len(data["labels"])
        ce_l, v_l, agree, kl_l = [], [], [], []
        values, targets, entropies = [], [], []  # the last epoch's: the value head's explained variance, the policy's entropy
        for epoch in range(cfg.epochs):
            order = self.rng.permutation(n)
            for start in range(0, n, cfg.minibatch_size):
                mb = order[start:start + cfg.minibatch_size]
                st, at = net_tokens(self.net, cfg.game, data["obs"][mb])
                mask = torch.from_numpy(data["masks"][mb].astype(bool))
                logits, _, value = self.net(st, at)
                labels = torch.from_numpy(data["labels"][mb])
                has = labels >= 0
                v_target = torch.from_numpy(data["targets"][mb])
                v_loss = 0.5 * ((value - v_target) ** 2).mean()
                if epoch == cfg.epochs - 1:
                    with torch.no_grad():
                        values.append(value.detach().numpy().copy())
                        targets.append(v_target.numpy())
                        entropies.append(MaskedCategorical(logits.detach(), mask).entropy().numpy())
                loss = cfg.vf_coef * v_loss
                if cfg.kl_coef > 0:
                    with torch.no_grad():
                        anchor_logits, _, _ = self.anchor(st, at)
                    kl = anchor_kl(anchor_logits, logits, mask)
                    loss = loss + cfg.kl_coef * kl
                    kl_l.append(kl.item())
                if bool(has.any()):
                    dist = MaskedCategorical(logits[has], mask[has])
                    if cfg.target == "soft":
                        ce = soft_target_loss(logits[has], torch.from_numpy(data["cands"][mb])[has],
                                              torch.from_numpy(data["cand_values"][mb])[has], cfg.temperature)
                    else:
                        ce = -dist.log_prob(labels[has]).mean()
                    loss = loss + ce
                    ce_l.append(ce.item())
                    with torch.no_grad():
                        agree.append(float((dist.logits.argmax(1) == labels[has]).float().mean()))
                self.opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(self.net.parameters(), cfg.max_grad_norm)
                self.opt.step()
                v_l.append(v_loss.item())
        self.net.eval()
        y, v = np.concatenate(targets), np.concatenate(values)
        ev = 1.0 - float(np.var(y - v)) / float(np.var(y)) if np.var(y) > 0 else float("nan")
        return {"cross_entropy": float(np.mean(ce_l)) if ce_l else float("nan"), "value_loss": float(np.mean(v_l)),
                "label_agreement": float(np.mean(agree)) if agree else float("nan"), "anchor_kl": float(np.mean(kl_l)) if kl_l else 0.0,
                "explained_variance": ev, "entropy": float(np.mean(np.concatenate(entropies)))}

    def step(self) -> dict[str, Any]:
        """Run one generation (play and label, distil, evaluate) and return its log row."""
        cfg = self.cfg
        start, wall = _cpu_seconds(), time.perf_counter()
        data = self.play()
        self.replay = (self.replay + [data])[-cfg.replay_generations:]
        merged = {k: np.concatenate([d[k] for d in self.replay]) for k in data if all(k in d for d in self.replay)}
        stats = self.distil(merged)
        self.seconds += _cpu_seconds() - start
        self.wall_seconds += time.perf_counter() - wall
        self.generation += 1
        row: dict[str, Any] = {"generation": self.generation, "cpu_seconds": round(self.seconds, 2), "wall_seconds": round(self.wall_seconds, 2),
                               "decisions": int(len(data["labels"])), "labels": int((data["labels"] >= 0).sum()), **stats}
        row.update(self.evaluate())
        self.log.append(row)
        return row

    def evaluate(self) -> dict[str, list[float]]:
        """The network alone against ``eval_opponent`` at every table size (``eval_games`` seat-rotated games, the same
        deals every generation): ``{"vs_<opponent>_<n>p": [win share, 95% half-width]}``; empty with ``eval_games`` 0."""
        cfg = self.cfg
        out = {}
        for n in cfg.table_sizes if cfg.eval_games else ():
            win, hw = match_batch(self.net, cfg.game, self.algo, n, cfg.eval_opponent, cfg.eval_games, seed=10_000 * (cfg.seed + 1) + n,
                                  reward_mode=cfg.reward_mode)
            out[f"vs_{cfg.eval_opponent}_{n}p"] = [win, hw]
        return out

    def curve(self) -> list[dict[str, Any]]:
        """The log as learner curve rows (``training.learner.run.CURVE_FIELDS``): per generation and table size, the
        win share against ``eval_opponent`` over CPU seconds (every process's) and decisions played."""
        rows, samples = [], 0
        for r in self.log:
            samples += r.get("decisions", 0)
            for n in self.cfg.table_sizes:
                if f"vs_{self.cfg.eval_opponent}_{n}p" in r:
                    win, hw = r[f"vs_{self.cfg.eval_opponent}_{n}p"]
                    rows.append({"iteration": r["generation"], "samples": samples, "games": r["generation"] * self.cfg.games_per_generation,
                                 "train_seconds": r["cpu_seconds"], "wall_seconds": r.get("wall_seconds", float("nan")),
                                 "opponent": self.cfg.eval_opponent, "num_players": n, "win_share": win, "half_width": hw,
                                 "explained_variance": r.get("explained_variance", float("nan")), "entropy": r.get("entropy", float("nan")),
                                 "value_loss": r.get("value_loss", float("nan")), "epsilon": float("nan")})
        return rows

    def write_curve(self) -> None:
        """Write ``curve.csv`` and ``curve.png`` into the run directory (the learner's format and plot)."""
        from training.learner.run import write_curve

        n = self.cfg.table_sizes
        write_curve(self.curve(), self.cfg.run_dir, f"{self.cfg.game} expert iteration {self.cfg.run_name}",
                    parity=1.0 / n[0] if len(n) == 1 else None)


def train(run: ExpertRun, generations: int | None = None, quiet: bool = False) -> ExpertRun:
    """Run generations until ``cfg.generations`` (or ``generations`` more), saving after each."""
    torch.set_num_threads(run.cfg.torch_threads)
    stop = run.cfg.generations if generations is None else min(run.cfg.generations, run.generation + generations)
    run.cfg.run_dir.mkdir(parents=True, exist_ok=True)
    if run.generation == 0 and not run.log and run.cfg.eval_games:  # the curve's first point: the network the run starts from
        run.log.append({"generation": 0, "cpu_seconds": 0.0, "wall_seconds": 0.0, "decisions": 0, "labels": 0, **run.evaluate()})
        run.save()
    while run.generation < stop:
        row = run.step()
        run.save()
        run.write_curve()
        if not quiet:
            print(" ".join(f"{k} {v}" for k, v in row.items()), flush=True)
    return run


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m training.learner.expert", description=__doc__.split("\n\n")[0])
    p.add_argument("--config", help="a configs/learner_*_expert.yaml file (a fresh run)")
    p.add_argument("--resume", metavar="RUN_DIR", help="continue the run saved in RUN_DIR exactly")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key (dotted)")
    p.add_argument("--generations", type=int, help="run at most this many generations in this piece")
    args = p.parse_args(argv)
    if bool(args.config) == bool(args.resume):
        print("error: give exactly one of --config (a fresh run) or --resume RUN_DIR", file=sys.stderr)
        return 2
    try:
        if args.resume:
            run = ExpertRun.load(args.resume, args.set)
        else:
            cfg = load_config(args.config, args.set)
            if (cfg.run_dir / LATEST).exists():
                print(f"error: {cfg.run_dir / LATEST} exists: resume it with --resume {cfg.run_dir}, or pick another run_name", file=sys.stderr)
                return 2
            run = ExpertRun(cfg)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    train(run, args.generations)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["ExpertConfig", "ExpertRun", "anchor_kl", "load_config", "main", "soft_target_loss", "train"]

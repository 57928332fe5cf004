"""Policy iteration on afterstate values, from uniformly random play: the learner of :mod:`training.learner.afterstate` (the
Grinch) and, with ``game: gnoming``, of :mod:`training.learner.gnoming_afterstate` (Gnoming: one value ``V`` of each
placement's afterstate, fitted to minus the round's margin (own score against the others' mean); no ``W``, no ``G``; the steps below are the Grinch's).

Usage::

    python -m training.train --config configs/grinch.yaml                          # a fresh run (algo: afterstate)
    python -m training.train --resume checkpoints/grinch                           # continue exactly
    python -m training.train --report checkpoints/grinch --final-games 1200        # evaluate only

Generation ``g`` plays ``games_per_generation`` self-play games: generation 0 uniformly random legal moves (no
network, no hand-made policy: the rules and the observation only), generation ``g > 0`` the values fitted on
generation ``g - 1``'s games, exploring: discards sampled from ``softmax(V / temperature)``, rows from
``softmax((points + W) / temperature)`` (``temperature`` in points) and draws at random (``play_draws: random``) or
from ``softmax(worth / temperature)`` of the chance-enumerated draws (``value``).  Every discard with a choice is
recorded with its afterstate (:func:`training.learner.afterstate.features`) and what followed: the seat's own points in
the round, in the rest of the game, its used rows after the round's scoring and the rounds left after it.  Then, on the
last ``replay_generations`` generations' records:

1. ``W`` is fitted to the later rounds' own points from the used rows and the rounds left;
2. ``V`` is fitted to the round's own points plus ``W`` after the round (Monte Carlo regression, mean squared error on
   the standardised target; the last ``held_out`` share of the records measures its explained variance);
3. with ``deny: true``, ``G`` is fitted to the Grinch's points in the round after each Who's discard, from its
   :func:`training.learner.afterstate.deny_features`, on the newest generation's records alone (the Grinch's points move
   with its play from one generation to the next); the next generation's Who discards are charged ``deny_weight x G``;
4. the agent of the new values (``eval_play``) plays each of ``eval_opponents`` (seat-rotated paired deals, the same deals every
   generation; before the first fit, the uniformly random policy the run starts from).

With a ``distill`` section (the Grinch's), one more generation follows the last fit: its look-ahead distilled into its
``V`` (:mod:`training.learner.afterstate_distill`: the last fit's explorer plays ``distill.games`` games, every legal
afterstate of each discard the look-ahead values by the rules is recorded with its worth, in ``data/distill.npz``, a
cache as the generations' records; ``V`` is fine-tuned on them and on the last generation's records), with the last
fit's ``W`` and ``G``, evaluated as a generation is.  A run that has it ends with it: its ``generations`` and
``distill`` no longer change on resume; a run without it may add it on resume (``--set distill.games=4000``).

The run directory holds ``latest.pt`` (format ``grinch_learner_afterstate_v1``: the config, every generation's fitted
``V`` and ``W``, the log; loadable with ``weights_only``), ``data/gen<g>.npz`` (each generation's records, a cache:
every game is played from a seed drawn from ``(seed, g)`` by values the checkpoint holds, so a missing file is played
again to the same records), ``curve.csv``/``curve.png`` (the learner's format) and, at the end, ``report/`` (``final_play``
against each of ``final_opponents``, ``final_games`` seat-rotated paired deals).  ``latest.pt`` is written after every
generation: ``--resume`` continues from the last finished one, and an interrupted run ends with the same values as an
uninterrupted one.  ``config.yaml`` beside it is the resolved config, to read.  With ``num_players`` a list (say ``[2, 3, 4, 5,
6]``) a generation's games go round the sizes in turn, one set of values is fitted on them all (the Grinch's afterstates
then carry the seats at the table, Gnoming's always do), and the curve and the report have one line per size.  The run's agent: ``make_agent("checkpoints/<run>")`` (options ``play`` and ``generation``).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch
import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from grinch_env.games import get_game
from grinch_env.grinch import encoding as enc
from grinch_env.grinch.game import DRAW_PILE_ACTION, SCORE_BASE
from grinch_env.grinch.scoring import NUM_ROWS
from training.distributed import Workers, ordered_map
from training.learner import afterstate_distill, gnoming_afterstate
from training.learner.afterstate import (
    DENY_FEATURES_VERSION,
    FEATURES_VERSION,
    NUM_DENY_FEATURES,
    NUM_FEATURES,
    NUM_TABLE_FEATURES,
    PLAYS,
    AfterstateAgent,
    Denial,
    LaterValue,
    Value,
    denial_of,
    deny_features,
    discard_worths,
    features,
    later_inputs,
    mlp,
    softmax_pick,
)
from training.learner.config import check_table_sizes, table_sizes
from training.learner.formats import AFTERSTATE_FORMAT, LATEST, cpu_seconds, read_run_file


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FitSection(_Section):
    """One value's regression: an MLP of three ReLU layers fitted with Adam and a cosine learning-rate decay."""

    width: int = Field(256, ge=1, description="hidden width")
    steps: int = Field(8000, ge=1, description="minibatch steps")
    batch_size: int = Field(512, ge=1)
    learning_rate: float = Field(1e-3, gt=0)
    held_out: float = Field(0.1, gt=0, lt=1, description="the last share of the records, not trained on: the explained variance")


class DistillSection(_Section):
    """The ``distill`` stage (:mod:`training.learner.afterstate_distill`): the last fit's look-ahead distilled into its ``V``."""

    games: int = Field(4000, ge=2, description="games the last fit's explorer plays; every legal afterstate of each discard the "
                       "look-ahead values by the rules is recorded with its worth")
    steps: int = Field(16000, ge=1, description="Adam steps of the fine-tuning")
    batch_size: int = Field(256, ge=1, description="records of each half of a batch: the last generation's own, the look-ahead's")
    learning_rate: float = Field(3e-4, gt=0)
    held_out: float = Field(0.1, gt=0, lt=1, description="the last share of the looked-ahead decisions, not trained on: the agreement")
    seed: int | None = Field(None, description="the games' seeds are drawn from (seed, 31); default the run's seed + 1")


class AfterstateConfig(_Section):
    """One afterstate policy-iteration run (unknown keys are errors)."""

    game: Literal["grinch", "gnoming"] = Field("grinch", description="the game: the Grinch (afterstate values of its hands and rows) or "
                                               "Gnoming (training.learner.gnoming_afterstate: of its layouts)")
    num_players: int | list[int] = Field(2, description="table size, or a list of sizes: a generation's games go round them in turn and "
                                         "one set of values plays them all (the Grinch's afterstates then carry the table's size)")
    run_name: str = "learner_grinch_afterstate_value"
    checkpoint_dir: str = "checkpoints"
    seed: int = 0
    generations: int = Field(4, ge=1, description="fits: generation 0's random games, then each fit's own games")
    games_per_generation: int = Field(6000, ge=2)
    replay_generations: int = Field(2, ge=1, description="each fit reads the records of this many last generations")
    temperature: float = Field(1.0, gt=0, description="exploration in generation play: softmax of the worths in points")
    play_draws: Literal["random", "value"] = Field("random", description="generation play's draws: uniformly random, or sampled "
                                                   "from the softmax of their worths, the chance nodes estimated on draw_samples "
                                                   "unseen cards for the draw pile")
    draw_samples: int = Field(8, ge=1, description="play_draws value: the unseen cards a draw-pile draw is valued on in generation play")
    value: FitSection = Field(default_factory=FitSection)
    later: FitSection = Field(default_factory=lambda: FitSection(width=64, steps=3000))
    deny: bool = Field(False, description="also fit G, the Grinch's points in the round after each Who's discard, and charge "
                       "deny_weight x G to the Who's discards (in generation play and in the agent)")
    deny_weight: float | None = Field(None, ge=0, le=10, description="the charge's weight; default 1/(n-1) at a table of n: the Who's own "
                                      "points against the others' mean")
    deny_fit: FitSection = Field(default_factory=lambda: FitSection(width=64, steps=1000))  # a noisy target: longer fits overfit it
    distill: DistillSection | None = Field(None, description="the Grinch's: after the last fit, its look-ahead distilled into V, "
                                           "written as one more fitted generation (training.learner.afterstate_distill)")
    workers: int = Field(1, ge=1, description="workers that play a generation's games and the distill stage's (1 with backend "
                         "local: this process); the records do not depend on it")
    backend: Literal["local", "ray"] = Field("local", description="where the workers run: local processes (training.distributed."
                                             "ordered_map), or Ray actors (a killed one is replaced and its games played again); "
                                             "the records do not depend on it")
    address: str = Field("local", description="backend ray: local (a private Ray instance on this machine), auto (the cluster "
                         "`ray start --head` started) or a cluster's address (host:6379, ray://host:10001)")
    eval_games: int = Field(200, ge=0, description="games against each of eval_opponents after each fit (0: none)")
    eval_opponents: list[str] = Field(default_factory=lambda: ["greedy"], min_length=1,
                                      description="the curve's opponents, each played after every fit")
    eval_play: Literal[PLAYS] = Field("value", description="the agent's play option in the curve's games")
    final_games: int = Field(1200, ge=0, description="games per final opponent in report/ (0: no report)")
    final_opponents: list[str] | None = Field(None, description="default: greedy and the game's search (expectimax, search)")
    final_play: Literal[PLAYS] | None = Field(None, description="default: lookahead (the Grinch), value (Gnoming)")
    torch_threads: int = Field(1, ge=1)

    @model_validator(mode="before")
    @classmethod
    def _one_opponent(cls, data: Any) -> Any:
        """A checkpoint written before the curve took several opponents stores ``eval_opponent: <name>``."""
        if isinstance(data, dict) and "eval_opponent" in data:
            if "eval_opponents" in data:
                raise ValueError("eval_opponent and eval_opponents: give the curve's opponents once, as eval_opponents: [...]")
            data = {**data, "eval_opponents": [data["eval_opponent"]]}
            del data["eval_opponent"]
        return data

    @model_validator(mode="after")
    def _fits(self) -> AfterstateConfig:
        spec = get_game(self.game)
        sizes = check_table_sizes(self.game, self.num_players)
        grinch = self.game == "grinch"
        if self.final_opponents is None:
            self.final_opponents = ["greedy", "expectimax" if grinch else "search"]
        if self.final_play is None:
            self.final_play = "lookahead" if grinch else "value"
        if not grinch:  # Gnoming's values have no rows to keep open, no Grinch, and one way to play
            if self.distill is not None:
                raise ValueError("distill is the Grinch's (its look-ahead values a round's last discards by the rules); a Gnoming "
                                 "afterstate run has none: leave distill out")
            for key, allowed in (("deny", False), ("play_draws", "random"), ("eval_play", "value"), ("final_play", "value")):
                if getattr(self, key) != allowed:
                    raise ValueError(f"{key}: {getattr(self, key)!r} is the Grinch's; a Gnoming afterstate run takes {key}: {allowed!r} "
                                     "(its agent values every draw and placement by V: training.learner.gnoming_afterstate)")
        from grinch_env.agents import make_agent

        for opp in dict.fromkeys([*self.eval_opponents, *self.final_opponents]):
            for n in sizes:
                try:
                    make_agent(opp, num_players=n, game=self.game, seed=0)
                except (ValueError, KeyError, FileNotFoundError) as exc:
                    raise ValueError(f"opponent {opp!r} is not an agent of {spec.title}: {exc}") from None
        return self

    @property
    def stages(self) -> int:
        """Fitted generations the finished run holds: ``generations``, and one more with ``distill``."""
        return self.generations + (self.distill is not None)

    @property
    def table_sizes(self) -> list[int]:
        """The table sizes the run plays, in the order its games go round them."""
        return table_sizes(self.num_players)

    @property
    def multi(self) -> bool:
        """Whether the run plays several table sizes (its Grinch afterstates then carry the table: :func:`features`)."""
        return not isinstance(self.num_players, int)

    def size_of(self, game: int) -> int:
        """The table size of a generation's game number ``game``."""
        sizes = self.table_sizes
        return sizes[game % len(sizes)]

    @property
    def run_dir(self) -> Path:
        return Path(self.checkpoint_dir) / self.run_name


def load_config(path: str | Path | None, overrides: list[str] | None = None) -> AfterstateConfig:
    """Return the validated config of YAML ``path`` with dotted ``key=value`` overrides."""
    from training.learner.config import validate_yaml

    return validate_yaml(AfterstateConfig, path, overrides)


# ------------------------------------------------------------------ generation play
class Explorer:
    """Generation play: uniformly random (``value`` None: generation 0), or the fitted values with softmax exploration."""

    def __init__(self, value: Value | None, later: LaterValue | None, temperature: float, play_draws: str, draw_samples: int = 8,
                 deny: Denial | None = None, table: bool = False) -> None:
        self.value, self.later, self.temperature, self.play_draws, self.draw_samples = value, later, temperature, play_draws, draw_samples
        self.deny, self.table = deny, table  # table: the records' afterstates carry the table's size (a run over several)

    def __call__(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> tuple[int, float]:
        """``(action, entropy of the distribution it was drawn from)``."""
        legal = np.flatnonzero(mask)
        if self.value is None or (self.play_draws == "random" and mask[DRAW_PILE_ACTION:SCORE_BASE].any()):
            return int(rng.choice(legal)), float(np.log(len(legal)))
        if mask[:DRAW_PILE_ACTION].any():
            acts, worth = discard_worths(self.value, self.deny, obs, mask)
        elif mask[DRAW_PILE_ACTION:SCORE_BASE].any():
            acts, worth = self.value.draws(obs, mask, self.draw_samples, rng)
        else:
            acts, worth = self.later.rows(obs, mask)
        i, entropy = softmax_pick(worth, self.temperature, rng)
        return int(acts[i]), entropy


RECORD_KEYS = ("x", "entropy", "round", "own", "used_after", "rounds_after", "seat", "round_index", "deny_x", "deny_y")  # play_game's


def play_game(explorer: Explorer, num_players: int, seed: int) -> dict[str, np.ndarray]:
    """One self-play game from ``seed``, every move by ``explorer``: each discard with a choice as a record (its afterstate
    ``x``, the discard distribution's ``entropy``, the seat's own points in the round ``round`` and in the rest of the game
    ``own``, its ``used_after`` rows after the round's scoring and the ``rounds_after`` it, the ``seat`` and its ``round_index``);
    of the Who's discards alone, ``deny_x`` (:func:`training.learner.afterstate.deny_features` of the discard, float16: exact)
    and ``deny_y`` (the Grinch's points in that round)."""
    spec = get_game("grinch")
    rng = np.random.default_rng(seed)
    game = spec.new_game(num_players, int(rng.integers(2**62)))
    encoder = spec.encoder()
    xs, used, ent, rec, scored, deny, deny_rec = [], [], [], [], {}, [], []
    starts = [list(game.totals)]  # the totals at the start of every round, then at the end
    while not game.done:
        seat = game.current
        view = encoder.observe(game, seat)
        obs, mask = np.asarray(view["observation"], np.float32), np.asarray(view["action_mask"]).astype(bool)
        action, entropy = explorer(obs, mask, rng) if mask.sum() > 1 else (int(np.flatnonzero(mask)[0]), 0.0)
        if mask[:DRAW_PILE_ACTION].sum() >= 2:
            x, _ = features(obs[None], mask[None], explorer.table)
            xs.append(x[0, action])
            used.append(obs[enc.ROW_USED:enc.ROW_USED + NUM_ROWS].copy())
            ent.append(entropy)
            rec.append((seat, game.round))
            if obs[enc.GRINCH_SEAT] < 0.5:
                deny.append(deny_features(obs[None])[0, action])
                deny_rec.append((game.round, game.grinch))
        if action >= SCORE_BASE:
            scored[seat, game.round] = action - SCORE_BASE
        game.step(action)
        if game.done or game.round != len(starts) - 1:
            starts.append(list(game.totals))
    t = np.array(starts, np.float32)  # [rounds + 1, seats]
    used_after = np.array(used, np.float32).reshape(-1, NUM_ROWS)
    used_after[np.arange(len(rec)), [scored[s, r] for s, r in rec]] = 1.0
    return {"x": np.array(xs, np.float32).reshape(-1, NUM_TABLE_FEATURES if explorer.table else NUM_FEATURES), "entropy": np.array(ent, np.float32),
            "round": np.array([t[r + 1, s] - t[r, s] for s, r in rec], np.float32),
            "own": np.array([t[-1, s] - t[r, s] for s, r in rec], np.float32),
            "used_after": used_after, "rounds_after": np.array([game.num_rounds - r - 1 for _, r in rec], np.int64),
            "seat": np.array([s for s, _ in rec], np.int64), "round_index": np.array([r for _, r in rec], np.int64),
            "deny_x": np.array(deny, np.float16).reshape(-1, NUM_DENY_FEATURES),
            "deny_y": np.array([t[r + 1, g] - t[r, g] for r, g in deny_rec], np.float32)}


# A generation's games and the distill stage's, as training.distributed.ordered_map runs them (in this process, on local
# worker processes or on Ray actors): the setup builds a worker's explorer once, each task is one game (its table size
# and seed).


def _init_player(fitted: dict[str, Any] | None, temperature: float, play_draws: str, draw_samples: int, game: str = "grinch",
                 table: bool = False) -> dict[str, Any]:
    return {"explorer": explorer_of(fitted, temperature, play_draws, draw_samples, game, table), "play": _play_of(game)}


def _worker_play(player: dict[str, Any], job: tuple[int, int]) -> dict[str, np.ndarray]:
    num_players, seed = job
    return player["play"](player["explorer"], num_players, seed)


def _init_distiller(fitted: dict[str, Any], temperature: float, play_draws: str, draw_samples: int, table: bool) -> dict[str, Any]:
    return {"explorer": explorer_of(fitted, temperature, play_draws, draw_samples, table=table), "look": afterstate_distill.look_of(fitted),
            "table": table}


def _worker_distill(player: dict[str, Any], job: tuple[int, int]) -> dict[str, np.ndarray]:
    num_players, seed = job
    return afterstate_distill.play_game(player["explorer"], player["look"], num_players, seed, player["table"])


def _play_of(game: str) -> Any:
    """The game's ``play_game``: this module's (the Grinch) or :func:`training.learner.gnoming_afterstate.play_game`."""
    return play_game if game == "grinch" else gnoming_afterstate.play_game


def record_keys(game: str) -> tuple[str, ...]:
    """The keys of the game's ``play_game`` records."""
    return RECORD_KEYS if game == "grinch" else gnoming_afterstate.RECORD_KEYS


def explorer_of(fitted: dict[str, Any] | None, temperature: float, play_draws: str, draw_samples: int = 8, game: str = "grinch",
                table: bool = False) -> Any:
    """Generation play of the values ``fitted`` (None: uniformly random), the game's :class:`Explorer`; ``table``: the
    Grinch's records carry the table's size (a run over several; Gnoming's layouts always do)."""
    if game == "gnoming":
        return gnoming_afterstate.Explorer(None if fitted is None else Value.from_state(fitted["value"]), temperature)
    if fitted is None:
        return Explorer(None, None, temperature, play_draws, draw_samples, table=table)
    return Explorer(Value.from_state(fitted["value"]), LaterValue(Value.from_state(fitted["later"])), temperature, play_draws, draw_samples,
                    denial_of(fitted), table)


def features_version(game: str) -> int:
    """The version of the game's afterstate features that this code writes (a checkpoint of another is refused)."""
    return FEATURES_VERSION if game == "grinch" else gnoming_afterstate.FEATURES_VERSION


def game_seeds(seed: int, generation: int, games: int) -> list[int]:
    """The seeds of a generation's games: a function of the run's seed and the generation alone."""
    return [int(s) for s in np.random.default_rng([seed, generation]).integers(2**62, size=games)]


def read_cache(path: Path, seeds: list[int], keys: tuple[str, ...]) -> dict[str, np.ndarray] | None:
    """The records cached at ``path`` if they are the games of ``seeds`` with every key of ``keys``, else None (another
    run's games, its latest.pt removed and its data/ left, or older code's: to be played again)."""
    if not path.exists():
        return None
    with np.load(path) as z:
        data = {k: z[k] for k in z.files}
    return data if data.get("seeds") is not None and data["seeds"].tolist() == seeds and set(keys) <= data.keys() else None


def write_cache(path: Path, data: dict[str, np.ndarray]) -> None:
    """Write records to ``path`` atomically (a stopped write leaves no partial file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.stem + ".tmp.npz")
    np.savez(tmp, **data)
    os.replace(tmp, path)


# ------------------------------------------------------------------ fitting
def fit_value(x: np.ndarray, y: np.ndarray, cfg: FitSection, seed: int, table: bool = False) -> tuple[Value, float]:
    """An MLP from ``x`` to the standardised ``y``, seeded; return it as a :class:`Value` in ``y``'s units (``table``: its
    inputs carry the seats at the table) and its held-out explained variance."""
    held = max(1, int(len(y) * cfg.held_out))
    n = len(y) - held
    if n < 1:
        raise ValueError(f"cannot fit on {len(y)} records with held_out {cfg.held_out}: no training record is left")
    torch.manual_seed(seed)
    mu, sd = float(y[:n].mean()), float(y[:n].std()) or 1.0
    xt, yt = torch.from_numpy(np.ascontiguousarray(x, np.float32)), torch.from_numpy(((y - mu) / sd).astype(np.float32))
    net = mlp(x.shape[1], cfg.width)
    opt = torch.optim.Adam(net.parameters(), lr=cfg.learning_rate)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, cfg.steps)
    rng = np.random.default_rng(seed)
    for _ in range(cfg.steps):
        idx = torch.from_numpy(rng.integers(0, n, cfg.batch_size))
        loss = torch.nn.functional.mse_loss(net(xt[idx]).squeeze(-1), yt[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    net.eval()
    with torch.inference_mode():
        pred = net(xt[n:]).squeeze(-1).numpy()
    var = float(np.var(yt[n:].numpy()))
    ev = 1.0 - float(np.var(yt[n:].numpy() - pred)) / var if var > 0 else float("nan")
    return Value(net, mu, sd, table), ev


def table_of(records: dict[str, np.ndarray], multi: bool) -> np.ndarray | None:
    """The seats at each Grinch record's table (read from its afterstate) in a run over several sizes, else None."""
    return np.rint(records["x"][:, NUM_FEATURES:].sum(1)).astype(np.int64) if multi else None


def value_target(records: dict[str, np.ndarray], later: LaterValue, players: np.ndarray | None) -> np.ndarray:
    """``V``'s Monte Carlo target of each Grinch record: the round's own points plus ``W`` after the round (``players``:
    :func:`table_of` the records)."""
    return records["round"] + later(records["used_after"], records["rounds_after"], players)


def fit_generation(records: dict[str, np.ndarray], cfg: AfterstateConfig, generation: int) -> tuple[dict[str, Any], dict[str, float]]:
    """``W`` on the later rounds' own points, then ``V`` on the round's own points plus ``W`` after it (Gnoming: ``V`` on
    minus the round's margin alone (own score against the others' mean); its rounds are independent deals); return their checkpoint states and the fit's statistics."""
    if cfg.game == "gnoming":
        target = records["round"]
        value, ev = fit_value(records["x"].astype(np.float32), target, cfg.value, seed=1_000 * cfg.seed + 2 * generation)
        return {"value": value.state()}, {"explained_variance": ev, "target_mean": float(target.mean()), "target_sd": float(target.std())}
    players = table_of(records, cfg.multi)
    later, ev_later = fit_value(later_inputs(records["used_after"], records["rounds_after"], players), records["own"] - records["round"],
                                cfg.later, seed=1_000 * cfg.seed + 2 * generation + 1, table=cfg.multi)
    w = LaterValue(later)
    target = value_target(records, w, players)
    value, ev = fit_value(records["x"], target, cfg.value, seed=1_000 * cfg.seed + 2 * generation, table=cfg.multi)
    fitted = {"value": value.state(), "later": later.state()}
    stats = {"explained_variance": ev, "later_explained_variance": ev_later, "target_mean": float(target.mean()), "target_sd": float(target.std())}
    if cfg.deny:  # G: the Grinch's points in the round after each Who's discard
        deny, ev_deny = fit_value(records["deny_x"].astype(np.float32), records["deny_y"], cfg.deny_fit, seed=1_000 * cfg.seed + 500 + generation)
        weight = cfg.deny_weight  # None: 1/(n-1) at each decision's table (a run over several sizes)
        if weight is None and not cfg.multi:
            weight = 1.0 / (cfg.num_players - 1)
        fitted["deny"] = {**deny.state(), "weight": weight, "features_version": DENY_FEATURES_VERSION}
        stats["deny_explained_variance"], stats["deny_records"] = ev_deny, len(records["deny_y"])
    return fitted, stats


# ------------------------------------------------------------------ the run
class AfterstateRun:
    """One run's state: config, every generation's fitted values, counters and log (everything ``latest.pt`` holds)."""

    def __init__(self, cfg: AfterstateConfig) -> None:
        self.cfg = cfg
        self.fitted: list[dict[str, Any]] = []  # per generation: {"value": state, "later": state}
        self.seconds = 0.0  # CPU seconds of play and fits, every process's
        self.wall_seconds = 0.0
        self.log: list[dict[str, Any]] = []
        self.workers: Workers | None = None  # while train() runs: its workers (Ray actors kept across generations)
        self.worker_replacements = 0  # Ray workers that died and were replaced in this process (their games played again)

    @property
    def generation(self) -> int:
        """Fits done: the next generation to play."""
        return len(self.fitted)

    # ------------------------------------------------------------ checkpoint
    def state(self) -> dict[str, Any]:
        cfg = self.cfg
        return {"format": AFTERSTATE_FORMAT, "features_version": features_version(cfg.game), "afterstate_config": cfg.model_dump(),
                "config": {"game": cfg.game, "num_players": cfg.num_players, "algo": "afterstate", "run_name": cfg.run_name},
                "values": self.fitted, "seconds": self.seconds, "wall_seconds": self.wall_seconds, "log": self.log}

    def save(self) -> Path:
        from training.checkpoint import atomic_torch_save

        path = self.cfg.run_dir / LATEST
        atomic_torch_save(self.state(), path)
        return path

    @classmethod
    def load(cls, path: str | Path, overrides: list[str] | None = None) -> AfterstateRun:
        """The run saved at ``path`` (a run directory or its ``latest.pt``); ``overrides`` may change keys that do not alter
        the fitted generations (``generations``, ``workers``, ``backend``, ``address``, the evaluation's).  The run goes on where it was loaded from,
        a copied directory included (its ``run_name`` becomes the directory's name); ``--set run_name=NEW`` branches it
        into a sibling directory ``NEW``."""
        ckpt, file = read_run_file(path, AFTERSTATE_FORMAT, f"give an afterstate run directory or its {LATEST}", "an afterstate checkpoint")
        data = ckpt["afterstate_config"]
        version = features_version(data.get("game", "grinch"))
        if ckpt.get("features_version") != version:
            raise ValueError(f"{file} was fitted on afterstate features version {ckpt.get('features_version')}; this code writes {version}")
        from training.learner.config import _set
        from training.learner.run import resume_where_loaded

        fixed = {"seed", "games_per_generation", "replay_generations", "temperature", "play_draws", "draw_samples", "value", "later",
                 "num_players", "game", "deny", "deny_weight", "deny_fit"}
        for item in resume_where_loaded(file.parent, overrides or [], data):  # it goes on where it was loaded from, a copy included
            key, eq, value = item.partition("=")
            if not eq or not key:
                raise ValueError(f"--set takes key=value, got {item!r}")
            if key.split(".")[0] in fixed:
                raise ValueError(f"--set {key}: cannot change {key.split('.')[0]} on resume (the fitted generations depend on it); "
                                 f"start a new run instead")
            _set(data, key.strip(), yaml.safe_load(value))
        run = cls(AfterstateConfig.model_validate(data))
        run.fitted, run.seconds, run.wall_seconds, run.log = ckpt["values"], ckpt["seconds"], ckpt["wall_seconds"], ckpt["log"]
        run.check_stages()
        return run

    def check_stages(self) -> None:
        """Refuse a config its fitted generations contradict: once distilled, a run ends with its distillation (its
        ``generations`` and ``distill`` are fixed); before, ``distill`` distils the fit of the last of ``generations``."""
        cfg, done = self.cfg, self.distilled
        if done:
            made = {k: v for k, v in self.fitted[-1]["distilled"].items() if k != "from_generation"}
            if cfg.distill is None or cfg.distill.model_dump() != made or cfg.generations != self.generation - 1:
                raise ValueError(f"the run ends with its distillation of generation {self.generation - 2}'s fit ({made}): its generations "
                                 f"({self.generation - 1}) and distill cannot change; branch a new run from an earlier copy instead")
        elif cfg.distill is not None and self.generation > cfg.generations:
            raise ValueError(f"distill: the run holds {self.generation} fitted generations, more than generations {cfg.generations}: the "
                             f"stage distils the last of generations' fits; set generations={self.generation} to distil the last one")

    # ------------------------------------------------------------ one generation
    @contextlib.contextmanager
    def open_workers(self) -> Iterator[Workers]:
        """Hold the config's workers (``backend``, ``workers``, ``address``) open for the games played meanwhile."""
        cfg = self.cfg
        with Workers(cfg.backend, cfg.workers, cfg.address) as workers:
            self.workers = workers
            try:
                yield workers
            finally:
                self.worker_replacements += workers.replacements
                self.workers = None

    def play(self, work: Any, jobs: list[tuple[int, int]], setup: Any, setup_args: tuple[Any, ...]) -> list[dict[str, np.ndarray]]:
        """The games ``jobs`` (table size, seed), in order, played where the config says (on :meth:`open_workers`' workers
        while they are open); each worker builds ``setup(*setup_args)`` once."""
        if self.workers is not None:
            return ordered_map(work, jobs, setup=setup, setup_args=setup_args, workers=self.workers)
        cfg = self.cfg
        with Workers(cfg.backend, cfg.workers, cfg.address) as workers:
            games = ordered_map(work, jobs, setup=setup, setup_args=setup_args, workers=workers)
            self.worker_replacements += workers.replacements
        return games

    def data_path(self, generation: int) -> Path:
        return self.cfg.run_dir / "data" / f"gen{generation}.npz"

    def records(self, generation: int) -> dict[str, np.ndarray]:
        """Generation ``generation``'s records: read from ``data/``, or played (by the values fitted on the generation
        before it) and written there atomically."""
        cfg = self.cfg
        path = self.data_path(generation)
        seeds = game_seeds(cfg.seed, generation, cfg.games_per_generation)
        cached = read_cache(path, seeds, record_keys(cfg.game))
        if cached is not None:
            return cached
        fitted = None if generation == 0 else self.fitted[generation - 1]
        table = cfg.multi and cfg.game == "grinch"
        games = self.play(_worker_play, [(cfg.size_of(i), s) for i, s in enumerate(seeds)], _init_player,
                          (fitted, cfg.temperature, cfg.play_draws, cfg.draw_samples, cfg.game, table))
        data = {k: np.concatenate([g[k] for g in games]) for k in games[0]}
        data["games"] = np.array([len(g["round"]) for g in games], np.int64)  # records per game
        data["seeds"] = np.array(seeds, np.int64)
        write_cache(path, data)
        return data

    @property
    def distilled(self) -> bool:
        """Whether the run's last fitted generation is the ``distill`` stage's."""
        return bool(self.fitted) and "distilled" in self.fitted[-1]

    def distill_seeds(self) -> list[int]:
        """The seeds of the ``distill`` stage's games: a function of its seed (default the run's + 1) alone."""
        d = self.cfg.distill
        return game_seeds(self.cfg.seed + 1 if d.seed is None else d.seed, afterstate_distill.SEED_STREAM, d.games)

    def distill_records(self) -> dict[str, np.ndarray]:
        """The ``distill`` stage's looked-ahead afterstates: read from ``data/distill.npz``, or played by the last fit's
        explorer and written there atomically (a cache, as a generation's records)."""
        cfg = self.cfg
        path = cfg.run_dir / "data" / "distill.npz"
        seeds = self.distill_seeds()
        cached = read_cache(path, seeds, afterstate_distill.DISTILL_KEYS)
        if cached is not None:
            return cached
        fitted, table = self.fitted[cfg.generations - 1], cfg.multi
        jobs = [(cfg.size_of(i), s) for i, s in enumerate(seeds)]
        games = self.play(_worker_distill, jobs, _init_distiller, (fitted, cfg.temperature, cfg.play_draws, cfg.draw_samples, table))
        data = {**afterstate_distill.merge(games), "seeds": np.array(seeds, np.int64)}
        write_cache(path, data)
        return data

    def distill_step(self) -> dict[str, Any]:
        """The ``distill`` stage: the last fit's look-ahead distilled into its ``V`` (:mod:`training.learner.afterstate_distill`),
        with its ``W`` and ``G`` written as one more fitted generation; return the log row."""
        cfg = self.cfg
        g = self.generation
        start, wall = cpu_seconds(), time.perf_counter()
        look = self.distill_records()
        last = self.fitted[g - 1]
        base, later = Value.from_state(last["value"]), LaterValue(Value.from_state(last["later"]))
        mc = self.records(g - 1)  # the records the last fit read last: the Monte Carlo targets it keeps to
        tuned, stats = afterstate_distill.distill(base, mc["x"], value_target(mc, later, table_of(mc, cfg.multi)), look, cfg.distill, seed=cfg.seed)
        self.fitted.append({**last, "value": tuned.state(), "distilled": {**cfg.distill.model_dump(), "from_generation": g - 1}})
        self.seconds += cpu_seconds() - start
        self.wall_seconds += time.perf_counter() - wall
        row: dict[str, Any] = {"generation": g, "distilled": True, "cpu_seconds": round(self.seconds, 2), "wall_seconds": round(self.wall_seconds, 2),
                               "games": cfg.distill.games, "records": int(len(look["y"])), "decisions": int(len(look["kind"])),
                               **{k: round(v, 4) for k, v in stats.items()}}
        row.update(self.evaluate(self.agent()))
        self.log.append(row)
        return row

    def step(self) -> dict[str, Any]:
        """Play the next generation's games (or read them), fit its values, evaluate them; return the log row.  After the
        last generation, with ``distill``, the distillation instead (:meth:`distill_step`)."""
        cfg = self.cfg
        g = self.generation
        if cfg.distill is not None and g == cfg.generations:
            return self.distill_step()
        start, wall = cpu_seconds(), time.perf_counter()
        data = self.records(g)
        pool = [self.records(k) for k in range(max(0, g - cfg.replay_generations + 1), g)] + [data]
        keys = ("x", "round", "own", "used_after", "rounds_after") if cfg.game == "grinch" else ("x", "round")
        merged = {k: np.concatenate([d[k] for d in pool]) for k in keys}
        if cfg.deny:  # G reads the newest generation alone: its level moves with the Grinch's play from one generation to the next
            merged.update(deny_x=data["deny_x"], deny_y=data["deny_y"])
        fitted, stats = fit_generation(merged, cfg, g)
        self.fitted.append(fitted)
        self.seconds += cpu_seconds() - start
        self.wall_seconds += time.perf_counter() - wall
        row: dict[str, Any] = {"generation": g, "cpu_seconds": round(self.seconds, 2), "wall_seconds": round(self.wall_seconds, 2),
                               "games": int(len(data["games"])), "records": int(len(data["round"])), "fit_records": int(len(merged["round"])),
                               "play_entropy": float(data["entropy"].mean()), "round_points": float(data["round"].mean()),
                               **{k: round(v, 4) for k, v in stats.items()}}
        row.update(self.evaluate(self.agent()))
        self.log.append(row)
        return row

    def agent(self, generation: int | None = None, play: str | None = None) -> Any:
        """The agent of a fitted generation (default the last) with ``play`` (default ``eval_play``; Gnoming's has none)."""
        g = self.generation - 1 if generation is None else generation
        fitted = self.fitted[g]
        if self.cfg.game == "gnoming":
            return gnoming_afterstate.GnomingAfterstateAgent(Value.from_state(fitted["value"]), f"{self.cfg.run_name}/g{g}", self.cfg.table_sizes)
        return AfterstateAgent(Value.from_state(fitted["value"]), LaterValue(Value.from_state(fitted["later"])), play or self.cfg.eval_play,
                               f"{self.cfg.run_name}/g{g}", self.cfg.table_sizes, deny=denial_of(fitted))

    def _key(self, opponent: str, n: int) -> str:
        """The log's key of the curve's match against ``opponent`` at ``n`` players: ``vs_<opponent>``, ``vs_<opponent>@<n>p``
        in a run over several sizes."""
        return f"vs_{opponent}{self._at(n)}"

    def _at(self, n: int) -> str:
        """The suffix of a key of ``n`` players: ``@<n>p`` in a run over several table sizes, else none."""
        return f"@{n}p" if self.cfg.multi else ""

    def evaluate(self, agent: Any) -> dict[str, list[float]]:
        """``agent`` against each of ``eval_opponents`` (``eval_games`` seat-rotated paired deals at each table size, the same
        every generation and for every opponent): ``{"vs_<opponent>": [win share, 95% half-width], "mean_score": ...}`` (keys
        ``...@<n>p`` in a run over several sizes; ``mean_score`` is the first opponent's); empty with ``eval_games`` 0."""
        from grinch_env.evaluation.evaluate import evaluate

        cfg = self.cfg
        if not cfg.eval_games:
            return {}
        out: dict[str, Any] = {}
        for i, opp in enumerate(cfg.eval_opponents):
            for n in cfg.table_sizes:
                res = evaluate([agent] + [opp] * (n - 1), num_players=n, num_games=cfg.eval_games, seed=10_000 * (cfg.seed + 1) + n,
                               game=cfg.game)
                a = res.per_agent[res.agents[0]]
                lo, hi = a["win_rate_ci"]
                out[self._key(opp, n)] = [round(a["win_rate"], 4), round((hi - lo) / 2, 4)]
                if i == 0:
                    out[f"mean_score{self._at(n)}"] = round(a["mean_score"], 2)
        return out

    def curve(self) -> list[dict[str, Any]]:
        """The log as learner curve rows (``training.learner.run.CURVE_FIELDS``); ``entropy``: the mean entropy of the
        generation play's discard distributions; a ``distill`` row's explained variance: the tuned ``V``'s on the last
        generation's held-out records."""
        rows, samples, games = [], 0, 0
        for r in self.log:
            samples += r.get("records", 0)
            games += r.get("games", 0)
            for opp in self.cfg.eval_opponents:
                for n in self.cfg.table_sizes:
                    if self._key(opp, n) in r:
                        win, hw = r[self._key(opp, n)]
                        rows.append({"iteration": r["generation"] + 1 if "records" in r else 0, "samples": samples, "games": games,
                                     "train_seconds": r["cpu_seconds"], "wall_seconds": r["wall_seconds"], "opponent": opp,
                                     "num_players": n, "win_share": win, "half_width": hw,
                                     "explained_variance": r.get("explained_variance", r.get("mc_explained_variance_after", float("nan"))),
                                     "entropy": r.get("play_entropy", float("nan")), "value_loss": float("nan"), "epsilon": float("nan")})
        return rows

    def write_curve(self) -> None:
        from training.learner.run import write_curve

        write_curve(self.curve(), self.cfg.run_dir, f"{self.cfg.game} afterstate values {self.cfg.run_name}", parity=1.0 / self.cfg.table_sizes[0])


def train(run: AfterstateRun, generations: int | None = None, quiet: bool = False) -> AfterstateRun:
    """Run generations until ``cfg.generations`` (or ``generations`` more), saving after each."""
    torch.set_num_threads(run.cfg.torch_threads)
    stop = run.cfg.stages if generations is None else min(run.cfg.stages, run.generation + generations)
    run.cfg.run_dir.mkdir(parents=True, exist_ok=True)
    if not run.log and run.cfg.eval_games:  # the curve's first point: the uniformly random policy generation 0 plays
        run.log.append({"generation": -1, "cpu_seconds": 0.0, "wall_seconds": 0.0, **run.evaluate("random")})
        run.save()
    with run.open_workers():  # Ray actors, if any, serve every generation of this call
        while run.generation < stop:
            row = run.step()
            run.save()
            run.write_curve()
            if not quiet:
                print(" ".join(f"{k} {v}" for k, v in row.items()), flush=True)
    return run


def final_report(run: AfterstateRun, games: int, seed: int = 4242, processes: int = 1) -> dict[str, Any]:
    """``final_play`` of the last generation against each of ``final_opponents`` at each table size: ``games`` seat-rotated
    paired deals; writes ``report/summary.json`` (keys ``<opponent>``, or ``<opponent>@<n>p`` in a run over several sizes)
    and ``report/vs_<opponent>.txt`` (``vs_<opponent>_<n>p.txt``); a report keeps its other entries."""
    from grinch_env.evaluation.evaluate import evaluate

    cfg = run.cfg
    report = cfg.run_dir / "report"
    report.mkdir(parents=True, exist_ok=True)
    earlier = report / "summary.json"
    kept = json.loads(earlier.read_text()) if earlier.exists() else {}
    spec = f"{cfg.run_dir}:play={cfg.final_play}"  # the saved checkpoint, as any user loads it (and picklable for the workers)
    out = {}
    for n in cfg.table_sizes:
        for opp in cfg.final_opponents:
            res = evaluate([spec] + [opp] * (n - 1), num_players=n, num_games=games, seed=seed, game=cfg.game, processes=processes)
            a = res.per_agent[res.agents[0]]
            out[f"{opp}{run._at(n)}"] = {"games": games, "num_players": n, "play": cfg.final_play, "generation": run.generation - 1,
                                         "win_rate": a["win_rate"], "win_rate_ci": a["win_rate_ci"], "mean_score": a["mean_score"], "parity": 1.0 / n}
            (report / (f"vs_{opp}_{n}p.txt" if cfg.multi else f"vs_{opp}.txt")).write_text(res.table() + "\n")
            (report / "summary.json").write_text(json.dumps({**kept, **out}, indent=2) + "\n")  # each match as it ends
            print(res.table(), flush=True)
    return out


__all__ = ["RECORD_KEYS", "AfterstateConfig", "AfterstateRun", "Explorer", "explorer_of", "features_version", "fit_generation", "fit_value", "game_seeds", "read_cache", "table_of", "value_target", "write_cache",
           "load_config", "play_game", "record_keys", "train"]

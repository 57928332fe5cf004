"""Distil a teacher agent into the policy network (DAgger): ``python -m training.distill --config configs/distill_expectimax.yaml``.

Self-play PPO from scratch learns the hand arithmetic slowly on two cores; a
rules-aware agent already plays well.  This command gives PPO a strong start
(as AlphaStar's supervised phase does), in rounds:

* **round 0** plays ``games_per_round`` games with the teacher in every seat
  (with chance ``explore`` a decision plays a random legal move instead, so
  that the data also covers a few states the teacher would not reach) and
  records, for every decision with at least two legal moves, the
  observation, the mask, the teacher's move and the actor's final margin
  reward;
* **round k > 0** (DAgger, Ross et al. 2011) plays the same number of games
  with the current student in every seat, sampling its policy, and labels the
  states it reaches with the teacher's move: the student learns to recover
  from its own mistakes, which pure imitation never shows it;
* after each round the student trains ``epochs`` passes over all the data
  gathered so far: cross-entropy of the masked policy against the teacher's
  move, plus ``value_coef`` times the squared error of the value head against
  the actor's final margin reward (the value PPO starts from).  Games whose
  index is a multiple of ``validation_every`` are held out; the log prints the
  student's agreement with the teacher on them.

After every round the run commits a resume checkpoint (the student, the
torch random state, the log, and the SHA-256 of every data round it was
trained on: :func:`training.checkpoint.save_checkpoint`); a run stopped at any
point (SIGKILL included) and started again with the same command resumes after
its last finished round and ends on the same student, bit for bit.  SIGINT or
SIGTERM drops the round in flight (a round can take long), prints the resume
command and exits with 130 / 143.  The student is also written to
``<run dir>/best.pt`` after every round (``round_<k>.pt`` keeps every round's), in the PPO checkpoint format, so it plays
in tournaments (``make_agent``/``load_agent``) and starts a PPO run through
the training config's ``init_checkpoint``.  Each round's data are kept in
``<run dir>/data/round_<k>.npz`` (git-ignored); a rerun with the same config
reuses them instead of replaying the games.  Every game is a pure function
of ``(seed, round, game index)``, so results do not depend on ``processes``.
"""

from __future__ import annotations

import argparse
import json
import pickle
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from grinch_env.parallel import worker_pool
from training.checkpoint import (  # both trainers save and resume here (`duplicates` pairs this list with train.py's: names, not logic)
    BEST,
    GracefulStop,
    Interrupted,
    PolicyAgent,
    atomic_write_bytes,
    committed_checkpoints,
    load_latest,
    load_weights,
    make_checkpoint,
    restore_rng_states,
    rng_states,
    save_checkpoint,
    save_verified,
    validate_checkpoint,
)
from training.config import DistillConfig, command_parser, config_differences, run_command, write_config_yaml
from training.model import MaskedCategorical, PolicyValueNet

DATA_DIR = "data"
FIELDS = ("obs", "mask", "action", "ret", "game")


def build_student(cfg: DistillConfig) -> PolicyValueNet:
    """Return the student network (``cfg.model``; its value head learns the margin reward)."""
    return PolicyValueNet.from_config(cfg.model, cfg.bonus_layout, game=cfg.game)


def game_seeds(seed: int, round_index: int, game: int) -> np.random.Generator:
    """Return the generator of one data game: a pure function of ``(seed, round, game)``."""
    return np.random.default_rng(np.random.SeedSequence([seed, round_index, game]))


# ------------------------------------------------------------------ data games
_WORKER: dict[str, Any] = {}


def _init_worker(cfg_dict: dict[str, Any], round_index: int, student_state: bytes | None) -> None:
    from grinch_env.agents import make_agent

    torch.set_num_threads(1)
    cfg = DistillConfig.model_validate(cfg_dict)
    _WORKER["cfg"] = cfg
    _WORKER["round"] = round_index
    _WORKER["teachers"] = [make_agent(cfg.teacher, num_players=None, game=cfg.game) for _ in range(cfg.spec.max_players)]
    if student_state is not None:
        with torch.random.fork_rng(devices=[]):  # a worker's net (its weights are overwritten) must not draw from the trainer's torch stream
            net = build_student(cfg)
        net.load_state_dict(pickle.loads(student_state))
        net.eval()
        _WORKER["student"] = PolicyAgent(net, name="student", deterministic=False)
    else:
        _WORKER["student"] = None


def play_data_game(index: int) -> dict[str, np.ndarray]:
    """Play data game ``index`` of the worker's round; return its labelled decisions (see the module docstring)."""
    cfg: DistillConfig = _WORKER["cfg"]
    rng = game_seeds(cfg.seed, _WORKER["round"], index)
    sizes = cfg.table_sizes
    n = int(sizes[rng.integers(len(sizes))])
    game = cfg.spec.new_game(n, int(rng.integers(2**63)), **cfg.game_options())
    encoder = cfg.spec.encoder()
    teachers = _WORKER["teachers"][:n]
    for t in teachers:
        t.reset(int(rng.integers(2**63)))
    student = _WORKER["student"]
    if student is not None:
        student.reset(int(rng.integers(2**63)))
    obs, masks, actions, seats = [], [], [], []
    while not game.done:
        seat = game.current
        view = encoder.observe(game, seat)
        mask = view["action_mask"]
        legal = np.flatnonzero(mask)
        if len(legal) == 1:
            game.step(int(legal[0]))
            continue
        label = int(teachers[seat].act(view["observation"], mask))
        obs.append(view["observation"].astype(np.float16))
        masks.append(mask.astype(bool))
        actions.append(label)
        seats.append(seat)
        if student is not None:
            action = int(student.act(view["observation"], mask))
        elif rng.random() < cfg.explore:
            action = int(legal[rng.integers(len(legal))])
        else:
            action = label
        game.step(action)
    margin = np.array(game.rewards("margin"), dtype=np.float32)
    return {
        "obs": np.stack(obs),
        "mask": np.stack(masks),
        "action": np.array(actions, dtype=np.int8),
        "ret": margin[np.array(seats)],
        "game": np.full(len(actions), index, dtype=np.int32),
    }


def collect_round(cfg: DistillConfig, round_index: int, student: PolicyValueNet | None, progress: bool) -> dict[str, np.ndarray]:
    """Play one round's data games (in ``cfg.processes`` workers) and return the concatenated decisions."""
    # A plain pickle: the pool's own pickler would pass tensors as shared-memory handles (see grinch_env.evaluation.evaluate).
    state = None if student is None else pickle.dumps({k: v.detach().clone() for k, v in student.state_dict().items()})
    init_args = (cfg.model_dump(), round_index, state)
    bar = tqdm(total=cfg.games_per_round, disable=not progress, desc=f"round {round_index} games", unit="game", dynamic_ncols=True)
    parts: list[dict[str, np.ndarray]] = []
    if cfg.distributed.backend != "local":  # Ray workers play the same games (each a pure function of its index)
        from training.distributed import collect_labels

        parts = collect_labels(cfg, round_index, state, _init_worker, play_data_game)
        bar.update(cfg.games_per_round)
    elif cfg.processes == 1:
        _init_worker(*init_args)
        for i in range(cfg.games_per_round):
            parts.append(play_data_game(i))
            bar.update(1)
    else:
        with worker_pool(cfg.processes, _init_worker, init_args) as pool:
            for part in pool.imap(play_data_game, range(cfg.games_per_round), chunksize=8):
                parts.append(part)
                bar.update(1)
    bar.close()
    return {k: np.concatenate([p[k] for p in parts]) for k in FIELDS}


# -------------------------------------------------------------------- training
def train_student(net: PolicyValueNet, data: dict[str, np.ndarray], cfg: DistillConfig, round_index: int, progress: bool) -> dict[str, float]:
    """Train ``net`` for ``cfg.epochs`` passes over ``data``; return the held-out agreement and value error."""
    held_out = data["game_key"] % cfg.validation_every == 0
    train_idx, val_idx = np.flatnonzero(~held_out), np.flatnonzero(held_out)
    if len(train_idx) == 0:
        raise ValueError(f"no training decisions: every data game is held out (validation_every={cfg.validation_every}); play more games")
    steps_per_epoch = max(1, len(train_idx) // cfg.batch_size)
    optimizer = torch.optim.Adam(net.parameters(), lr=cfg.learning_rate)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=cfg.learning_rate, total_steps=cfg.epochs * steps_per_epoch, pct_start=0.05)
    rng = np.random.default_rng([cfg.seed, round_index])
    net.train()
    bar = tqdm(total=cfg.epochs * steps_per_epoch, disable=not progress, desc=f"round {round_index} training", unit="batch", dynamic_ncols=True)
    for _ in range(cfg.epochs):
        order = rng.permutation(train_idx)
        for k in range(steps_per_epoch):
            dist, value, action, ret = _forward(net, data, np.sort(order[k * cfg.batch_size:(k + 1) * cfg.batch_size]))
            loss = -dist.log_prob(action).mean() + cfg.value_coef * ((value - ret) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), cfg.max_grad_norm)
            optimizer.step()
            schedule.step()
            bar.update(1)
    bar.close()
    net.eval()
    return held_out_metrics(net, data, val_idx)


def _forward(net: PolicyValueNet, data: dict[str, np.ndarray], idx: np.ndarray) -> tuple[MaskedCategorical, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Return the masked policy and value of the decisions ``idx``, with the teacher's moves and the final margins."""
    feats = data.get("feats")
    dist, value = net.distribution(
        torch.from_numpy(data["obs"][idx].astype(np.float32)),
        torch.from_numpy(data["mask"][idx]),
        None if feats is None else torch.from_numpy(feats[idx].astype(np.float32)),
    )
    return dist, value, torch.from_numpy(data["action"][idx].astype(np.int64)), torch.from_numpy(data["ret"][idx])


@torch.no_grad()
def held_out_metrics(net: PolicyValueNet, data: dict[str, np.ndarray], idx: np.ndarray) -> dict[str, float]:
    """Return the student's agreement with the teacher's moves and its value MSE on the decisions ``idx``."""
    if len(idx) == 0:
        return {"agreement": float("nan"), "value_mse": float("nan"), "held_out_decisions": 0}
    agree, sq = 0, 0.0
    for start in range(0, len(idx), 4096):
        dist, value, action, ret = _forward(net, data, idx[start:start + 4096])
        agree += int((dist.logits.argmax(-1) == action).sum())
        sq += float(((value - ret) ** 2).sum())
    return {"agreement": agree / len(idx), "value_mse": sq / len(idx), "held_out_decisions": int(len(idx))}


def features_of(net: PolicyValueNet, data: dict[str, np.ndarray], chunk: int = 8192) -> np.ndarray | None:
    """Return the network's action features for every decision (float16; None for a network that reads none)."""
    if not net.action_features:
        return None
    out = np.empty((len(data["action"]), *net.feature_shape), dtype=np.float16)
    for i in range(0, len(out), chunk):
        out[i:i + chunk] = net.features(data["obs"][i:i + chunk].astype(np.float32), data["mask"][i:i + chunk])
    return out


# ------------------------------------------------------------------------ run
def round_file(run_dir: Path, round_index: int) -> Path:
    return run_dir / DATA_DIR / f"round_{round_index}.npz"


def load_round(path: Path, cfg: DistillConfig, round_index: int) -> dict[str, np.ndarray] | None:
    """Return a saved round's data if it was made by this config (teacher, seed, sizes, games), else None."""
    if not path.is_file():
        return None
    with np.load(path, allow_pickle=False) as saved:
        if str(saved["key"]) != _round_key(cfg, round_index):
            return None
        return {k: saved[k] for k in FIELDS}


def _round_key(cfg: DistillConfig, round_index: int) -> str:
    """Return what a round's games depend on: the game settings for round 0; for later rounds also everything that trained the student."""
    if round_index == 0:
        key = cfg.model_dump(include={"game", "seed", "teacher", "num_players", "bonus_layout", "games_per_round", "explore"})
    else:
        key = cfg.model_dump(exclude={"run_name", "checkpoint_dir", "processes", "torch_threads", "eval", "rounds", "distributed"})
    return json.dumps({"round": round_index, **key}, sort_keys=True)


def save_round(path: Path, cfg: DistillConfig, round_index: int, data: dict[str, np.ndarray]) -> None:
    """Write a round's data durably (temporary file, fsync, rename): a crash never leaves a half-written ``.npz``."""
    import io

    buffer = io.BytesIO()
    np.savez(buffer, key=np.array(_round_key(cfg, round_index)), **data)
    atomic_write_bytes(path, buffer.getvalue())


def _resume_key(cfg: DistillConfig) -> dict[str, Any]:
    """Return what the student after a round depends on (not the round count: more rounds continue a run)."""
    return cfg.model_dump(exclude={"run_name", "checkpoint_dir", "processes", "torch_threads", "eval", "rounds", "distributed"})


def _resume_point(cfg: DistillConfig, run_dir: Path) -> dict[str, Any] | None:
    """Return the newest verified round checkpoint of ``run_dir`` made by this config, or None (say why when one is not used)."""
    if not committed_checkpoints(run_dir):
        return None
    state, info = load_latest(run_dir, report=tqdm.write)
    validate_checkpoint(state, run_dir / info["state"])
    stored = DistillConfig.model_validate(state["config"])
    diffs = config_differences(_resume_key(cfg), _resume_key(stored))
    if diffs:
        tqdm.write(f"the checkpoint in {run_dir} was trained with other values of {', '.join(k for k, _, _ in diffs)}: "
                   "starting from round 0 (data rounds this config also plays are reused)")
        return None
    return state


def run(cfg: DistillConfig, run_dir: Path, progress: bool = True, override_config: bool = False) -> tuple[PolicyValueNet, list[dict[str, Any]]]:
    """Run every round not yet done (resuming after the newest verified round checkpoint); write ``best.pt`` after each; return the student and the per-round log."""
    torch.set_num_threads(cfg.torch_threads)
    random.seed(cfg.seed)  # nothing here draws from it today; seeded and checkpointed so that nothing ever could differ on resume
    torch.manual_seed(cfg.seed)
    run_dir.mkdir(parents=True, exist_ok=True)
    write_config_yaml(cfg, run_dir, check_as="distillation", override=override_config)
    net = build_student(cfg)
    if cfg.init_checkpoint is not None:
        load_weights(net, cfg.init_checkpoint)
    net.eval()
    log: list[dict[str, Any]] = []
    merged: dict[str, np.ndarray] | None = None
    start = 0
    resumed = _resume_point(cfg, run_dir)
    if resumed is not None:
        net.load_state_dict(resumed["model"])
        restore_rng_states(resumed["rng"])
        log = list(resumed["distill_log"])
        start = int(resumed["round"]) + 1
        for r in range(min(start, cfg.rounds)):
            data = load_round(round_file(run_dir, r), cfg, r)  # verified against the manifest by load_latest
            if data is None:
                raise ValueError(f"{round_file(run_dir, r)} was not played by this config although the checkpoint names it; delete {run_dir} to start over")
            merged = _add_round(net, merged, data)
        if start >= cfg.rounds:
            tqdm.write(f"{run_dir}: all {cfg.rounds} rounds are done")
            atomic_write_bytes(run_dir / "distill_log.json", json.dumps(log[:cfg.rounds], indent=1).encode())
            return net, log[:cfg.rounds]
        tqdm.write(f"resuming {run_dir} at round {start} of {cfg.rounds}")
    with GracefulStop("round", drop=True, report=tqdm.write):
        try:
            for r in range(start, cfg.rounds):
                merged = _one_round(cfg, run_dir, net, merged, r, log, progress)
        except KeyboardInterrupt as err:
            signum = getattr(err, "signum", 2)
            done = committed_checkpoints(run_dir)
            where = (f"checkpoint {run_dir / done[0]['state']} holds {done[0]['label']}" if done else "no round was finished yet")
            tqdm.write(f"interrupted: dropped the round in flight; {where}; resume by running the same command again")
            raise Interrupted(signum) from None
    atomic_write_bytes(run_dir / "distill_log.json", json.dumps(log, indent=1).encode())
    return net, log


def _add_round(net: PolicyValueNet, merged: dict[str, np.ndarray] | None, data: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    data["game_key"] = data["game"].astype(np.int64)
    feats = features_of(net, data)  # once per round's data, not again for every later round
    if feats is not None:
        data["feats"] = feats
    return data if merged is None else {k: np.concatenate([merged[k], data[k]]) for k in data}


def _one_round(cfg: DistillConfig, run_dir: Path, net: PolicyValueNet, merged: dict[str, np.ndarray] | None, r: int,
               log: list[dict[str, Any]], progress: bool) -> dict[str, np.ndarray]:
    """Play (or reuse) round ``r``'s data, train the student on everything so far, commit the round's checkpoint; return the merged data."""
    t0 = time.perf_counter()
    path = round_file(run_dir, r)
    data = load_round(path, cfg, r)
    reused = data is not None
    if data is None:
        data = collect_round(cfg, r, None if r == 0 else net, progress)
        save_round(path, cfg, r, data)
    merged = _add_round(net, merged, data)
    t1 = time.perf_counter()
    metrics = train_student(net, merged, cfg, r, progress)
    t2 = time.perf_counter()
    entry = {"round": r, "decisions": int(len(data["action"])), "total_decisions": int(len(merged["action"])), "data_reused": reused,
             "data_seconds": round(t1 - t0, 1), "train_seconds": round(t2 - t1, 1), **metrics}
    log.append(entry)
    tqdm.write(f"round {r}: {entry['decisions']} decisions ({entry['total_decisions']} in all), held-out agreement with "
               f"{cfg.teacher} {metrics['agreement']:.3f}, value MSE {metrics['value_mse']:.4f}; data {t1 - t0:.0f} s, training {t2 - t1:.0f} s")
    ckpt = make_checkpoint(net, cfg.model_dump(), None, update=0, env_steps=0, learner_steps=int(len(merged["action"])), distill_log=log)
    save_verified(ckpt, run_dir / BEST)
    save_verified(ckpt, run_dir / f"round_{r}.pt")  # each round's student, to compare rounds
    label = f"the student after round {r + 1} of {cfg.rounds}"
    save_checkpoint(run_dir, {**ckpt, "round": r, "rng": rng_states(), "label": label},
                    [f"{DATA_DIR}/{round_file(run_dir, k).name}" for k in range(r + 1)], label=label)
    return merged


def build_parser() -> argparse.ArgumentParser:
    return command_parser("grinch-distill", "Distil a teacher agent into the policy network (DAgger rounds).", "configs/distill_lookahead.yaml",
                          override_config=True)


def _command(cfg: DistillConfig, run_dir: Path, args: argparse.Namespace) -> None:
    from grinch_env.agents import make_agent
    from grinch_env.evaluation.versus import write_final_report
    from training.checkpoint import load_agent

    make_agent(cfg.teacher, game=cfg.game)  # a bad teacher spec fails before any game is played
    for spec in cfg.eval.opponents:
        make_agent(spec, game=cfg.game)
    if not args.report_only:
        run(cfg, run_dir, progress=not args.no_progress, override_config=args.override_config)
        print(f"saved {run_dir / BEST}")
    if args.report_only or (not args.no_report and cfg.eval.games):
        if cfg.eval.games == 0:
            raise ValueError("eval.games is 0: set it (e.g. --set eval.games=200) to write a report")
        print(write_final_report(run_dir, load_agent(run_dir), cfg.eval.opponents, cfg.eval.num_players, cfg.eval.games,
                                 seed=10_000 + cfg.seed, processes=cfg.eval.processes, game=cfg.game))


def main(argv: list[str] | None = None) -> int:
    return run_command(build_parser(), argv, DistillConfig, _command)


__all__ = ["build_student", "collect_round", "held_out_metrics", "main", "play_data_game", "run", "train_student"]

if __name__ == "__main__":
    sys.exit(main())

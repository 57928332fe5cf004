"""Checkpoints of training runs, and loading any trained policy as an agent.

A run directory ``checkpoints/<run_name>/`` holds ``latest.pt`` (everything
needed to resume exactly: weights, optimizer state, the resolved config, the
update and step counts, the python/numpy/torch random states, the opponent
pool's snapshot names), ``best.pt`` (the same, saved when a periodic
evaluation beats the previous best), ``snapshots/*.pt`` (the pool's frozen
weights) and ``config.yaml``.  Every ``.pt`` records the environment version
and spaces so that an incompatible checkpoint is refused with a clear error.
Resuming is crash-consistent (:func:`save_checkpoint`, :func:`load_latest`):
every resume checkpoint is one transaction.  Its state file
``resume/state_<seq>.pt`` is written and fsynced first, then a manifest
``manifest_<seq>.json`` listing the SHA-256 and size of that file and of every
file the state refers to (the opponent pool's snapshots, a distillation's data
rounds) is written, fsynced and renamed into place (the commit point; the
directory is fsynced too); only then are files that no kept manifest names
deleted.  ``latest.pt`` is a hard link to the newest state file, for the
commands that read it.  The two newest manifests are kept; :func:`load_latest`
verifies them newest first and resumes from the first that checks out, saying
which one and why any newer one was skipped.  A crash at any instant leaves the
previous transaction intact; leftover ``.tmp`` files are removed on the next
save or load.
"""

from __future__ import annotations

import hashlib
import inspect
import io
import json
import os
import random
import signal
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

import grinch_env
from grinch_env.agent_base import AgentOptionError, NetworkAgent
from grinch_env.agents import TRUST_ENV  # the variable --trust-checkpoint sets
from grinch_env.games import DEFAULT_GAME, GAMES, get_game
from training.files import atomic_write_bytes, fsync_dir
from training.model import ARCHITECTURE, WEIGHT_KEYS, PolicyValueNet

FORMAT = "grinch_ppo_checkpoint_v1"
LATEST = "latest.pt"
BEST = "best.pt"


class CheckpointError(ValueError):
    """A checkpoint that fails verification (missing, truncated or altered file, unreadable manifest)."""


MANIFEST_FORMAT = "grinch_checkpoint_manifest_v1"
STATE_DIR = "resume"
KEEP = 2


def atomic_torch_save(obj: Any, path: str | Path) -> None:
    """Write ``obj`` to ``path`` with :func:`atomic_write_bytes` (temporary file, fsync, ``os.replace``)."""
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    atomic_write_bytes(path, buffer.getvalue())


def save_verified(obj: Any, path: str | Path) -> None:
    """Write ``obj`` (``torch.save``) to ``path`` durably, with a sidecar ``<name>.sha256`` that :func:`load_checkpoint` checks.

    Two-phase, so that a crash at any instant leaves a file its sidecar accepts: the sidecar first lists the old
    and the new file's SHA-256, then the file is replaced, then the sidecar lists the new one only.
    """
    path = Path(path)
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    data = buffer.getvalue()
    new = hashlib.sha256(data).hexdigest()
    sidecar = _sidecar(path)
    old = [d for d in _sidecar_sums(sidecar) if path.is_file() and d == sha256_file(path)]
    atomic_write_bytes(sidecar, json.dumps(sorted({*old, new})).encode())
    atomic_write_bytes(path, data)
    atomic_write_bytes(sidecar, json.dumps([new]).encode())


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def _sidecar_sums(sidecar: Path) -> list[str]:
    try:
        sums = json.loads(sidecar.read_text())
    except (OSError, ValueError):
        return []
    return [d for d in sums if isinstance(d, str)] if isinstance(sums, list) else []


def sha256_file(path: str | Path) -> str:
    """Return the hex SHA-256 of the file at ``path``."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def remove_orphan_tmp(run_dir: str | Path) -> list[Path]:
    """Delete the temporary files an interrupted write left in ``run_dir`` (and its subdirectories); return them."""
    run_dir = Path(run_dir)
    found = [p for p in run_dir.rglob(".*.tmp") if p.is_file()] if run_dir.is_dir() else []
    for p in found:
        p.unlink(missing_ok=True)
    return found


def _manifests(run_dir: Path) -> list[Path]:
    """Return the run directory's manifests, newest (highest sequence number) first."""
    found = []
    for p in run_dir.glob("manifest_*.json"):
        seq = p.stem.removeprefix("manifest_")
        if seq.isdigit():
            found.append((int(seq), p))
    return [p for _, p in sorted(found, reverse=True)]


def _read_manifest(path: Path) -> dict[str, Any]:
    try:
        info = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise CheckpointError(f"manifest {path.name} is unreadable ({err})") from None
    if not isinstance(info, dict) or info.get("format") != MANIFEST_FORMAT or not isinstance(info.get("files"), dict) or info.get("state") not in info["files"]:
        raise CheckpointError(f"manifest {path.name} is not a {MANIFEST_FORMAT} manifest")
    for rel, entry in info["files"].items():  # a flipped byte in a key ("sha256" -> "sha2%6") still parses as JSON
        if not isinstance(entry, dict) or not isinstance(entry.get("bytes"), int) or not isinstance(entry.get("sha256"), str):
            raise CheckpointError(f"manifest {path.name} is damaged: its entry for {rel!r} lacks the file's size or SHA-256")
    return info


def verify_manifest(run_dir: str | Path, info: dict[str, Any]) -> None:
    """Raise :class:`CheckpointError` naming the first file of the manifest ``info`` that is missing, of another size or another SHA-256."""
    run_dir = Path(run_dir)
    for rel, entry in info["files"].items():
        path = run_dir / rel
        if not path.is_file():
            raise CheckpointError(f"{rel} is missing")
        size = path.stat().st_size
        if size != entry["bytes"]:
            raise CheckpointError(f"{rel} has {size} bytes, the manifest recorded {entry['bytes']} (truncated or replaced)")
        if sha256_file(path) != entry["sha256"]:
            raise CheckpointError(f"{rel} does not match its SHA-256 in the manifest (the file was altered or corrupted)")


def save_checkpoint(run_dir: str | Path, state: dict[str, Any], files: list[str] | tuple[str, ...] = (), label: str = "",
                    gc_dirs: tuple[str, ...] = (), keep: int = KEEP, extra_text: dict[str, str] | None = None) -> Path:
    """Commit one resume checkpoint of ``run_dir`` as a transaction; return its state file.

    ``state`` is any ``torch.save``-able dictionary (tensors, numbers, strings,
    lists, dicts: it is read back with ``weights_only=True``).  ``files`` are
    paths relative to ``run_dir`` of files already written (atomically) that
    the state refers to: they are checksummed into the same manifest and are
    never deleted while a kept manifest names them.  After the commit, files in
    ``gc_dirs`` that no kept manifest names are deleted (an opponent pool's
    dropped snapshots), and ``extra_text`` files (name -> text, e.g. the run's
    ``config.yaml``) are rewritten.  ``label`` says what the checkpoint holds
    (printed when it is resumed).
    """
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    remove_orphan_tmp(run_dir)
    manifests = _manifests(run_dir)
    seq = int(manifests[0].stem.removeprefix("manifest_")) + 1 if manifests else 1
    state_rel = f"{STATE_DIR}/state_{seq:06d}.pt"
    state_path = run_dir / state_rel
    atomic_torch_save(state, state_path)
    entries = {}
    for rel in (state_rel, *files):
        path = run_dir / rel
        entries[rel] = {"bytes": path.stat().st_size, "sha256": sha256_file(path)}
    info = {"format": MANIFEST_FORMAT, "seq": seq, "label": label, "state": state_rel, "files": entries, "written": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    atomic_write_bytes(run_dir / f"manifest_{seq:06d}.json", (json.dumps(info, indent=1) + "\n").encode())  # the commit point
    _link(state_path, run_dir / LATEST)
    _prune(run_dir, keep, gc_dirs)
    for name, text in (extra_text or {}).items():
        atomic_write_bytes(run_dir / name, text.encode())
    return state_path


def _link(source: Path, alias: Path) -> None:
    """Point ``alias`` at ``source``'s bytes atomically: a hard link where the file system has them, else a durable copy."""
    tmp = alias.with_name(f".{alias.name}.link.tmp")
    tmp.unlink(missing_ok=True)
    try:
        os.link(source, tmp)
    except OSError:
        atomic_write_bytes(alias, source.read_bytes())
        return
    os.replace(tmp, alias)
    fsync_dir(alias.parent)


def _files_named(manifest: Path) -> set[str]:
    """Return the files the manifest names (none when it is unreadable: a damaged manifest protects nothing)."""
    try:
        return set(_read_manifest(manifest)["files"])
    except CheckpointError:
        return set()


def _prune(run_dir: Path, keep: int, gc_dirs: tuple[str, ...]) -> None:
    """Delete manifests beyond the ``keep`` newest, then every file they named, and every file in ``gc_dirs``, that no kept manifest names."""
    manifests = _manifests(run_dir)
    kept, dropped = manifests[:keep], manifests[keep:]
    named = set().union(*map(_files_named, kept))
    candidates = set().union(*map(_files_named, dropped))
    for m in dropped:
        m.unlink(missing_ok=True)  # the manifests go first: a crash from here on leaves files that nothing names, never a manifest naming nothing
    fsync_dir(run_dir)
    for folder in (STATE_DIR, *gc_dirs):
        if (run_dir / folder).is_dir():
            candidates |= {f"{folder}/{p.name}" for p in (run_dir / folder).iterdir() if p.is_file() and not p.name.startswith(".")}
    for rel in sorted(candidates - named):
        (run_dir / rel).unlink(missing_ok=True)


def load_latest(run_dir: str | Path, report: Any = print) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """Return ``(state, manifest)`` of the newest checkpoint of ``run_dir`` that verifies, or None when it holds no manifest.

    Each manifest is checked newest first (every file's size and SHA-256, then
    the state file is read with ``weights_only=True``); ``report`` is called
    with one line saying which checkpoint is resumed and, for each newer one
    skipped, why.  Raises :class:`CheckpointError` listing every problem when
    none verifies.
    """
    run_dir = Path(run_dir)
    remove_orphan_tmp(run_dir)
    problems = []
    for path in _manifests(run_dir):
        try:
            info = _read_manifest(path)
            verify_manifest(run_dir, info)
            state = _read_state(run_dir / info["state"])
        except CheckpointError as err:
            problems.append(f"{path.name}: {err}")
            continue
        skipped = f" (skipped newer {'; '.join(problems)})" if problems else ""
        report(f"checkpoint {run_dir / info['state']} verified against {path.name}: {info.get('label') or 'no label'}{skipped}")
        return state, info
    if problems:
        raise CheckpointError(f"no checkpoint in {str(run_dir)!r} verifies: " + "; ".join(problems))
    return None


def _read_state(path: Path) -> dict[str, Any]:
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # a file whose checksum matched but torch cannot read: written by something else
        raise CheckpointError(f"{path.name} is not a readable torch file ({type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''})") from None
    if not isinstance(state, dict):
        raise CheckpointError(f"{path.name} holds a {type(state).__name__}, not a checkpoint dictionary")
    return state


def load_verified_tensors(run_dir: str | Path, info: dict[str, Any], rel: str) -> Any:
    """Return the ``weights_only`` contents of ``rel``, a file the (verified) manifest ``info`` names; raise :class:`CheckpointError` otherwise."""
    if rel not in info["files"]:
        raise CheckpointError(f"{rel} is not part of checkpoint {info['state']}")
    return _read_state(Path(run_dir) / rel)


def committed_checkpoints(run_dir: str | Path) -> list[dict[str, Any]]:
    """Return the manifests of ``run_dir`` (newest first) that can be read, unverified: for messages."""
    out = []
    for path in _manifests(Path(run_dir)):
        try:
            out.append(_read_manifest(path))
        except CheckpointError:
            continue
    return out


# ------------------------------------------------------------------ signals
class Interrupted(KeyboardInterrupt):
    """Raised when SIGINT or SIGTERM stops a run; ``signum`` says which (the exit status is ``128 + signum``)."""

    def __init__(self, signum: int = signal.SIGINT) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = int(signum)

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


class GracefulStop:
    """Context manager: SIGINT and SIGTERM ask the loop to stop at the next consistent point instead of killing it mid-update.

    The first signal sets :attr:`signum` (the loop checks :attr:`requested`
    between units of work); with ``drop=True``, or on a second signal, the
    handler raises :class:`Interrupted` at once, so the unit in flight is
    dropped (nothing of it may then be saved).  Outside the main thread (no
    handlers can be installed) it does nothing.
    """

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self, what: str = "update", drop: bool = False, report: Any = print) -> None:
        self.what, self.drop, self.report = what, drop, report
        self.signum: int | None = None
        self._old: dict[int, Any] = {}

    @property
    def requested(self) -> bool:
        return self.signum is not None

    def _handle(self, signum: int, frame: Any) -> None:
        if self.signum is not None or self.drop:
            self.signum = signum
            raise Interrupted(signum)
        self.signum = signum
        self.report(f"{signal.Signals(signum).name}: finishing the current {self.what}, then saving a checkpoint "
                    f"(send it again, or press Ctrl-C again, to drop the {self.what} and keep the last checkpoint)")

    def install(self) -> None:
        import threading

        if threading.current_thread() is not threading.main_thread():
            return
        for sig in self.SIGNALS:
            self._old[sig] = signal.signal(sig, self._handle)

    def __enter__(self) -> GracefulStop:
        self.install()
        return self

    def __exit__(self, *exc: Any) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)
        self._old = {}


def rng_states(np_rng: np.random.Generator | None = None) -> dict[str, Any]:
    """Return the python, numpy (the trainer's generator: nothing here draws from numpy's global one) and torch random states."""
    states = {"python": random.getstate(), "torch": torch.get_rng_state()}
    if np_rng is not None:
        states["numpy"] = np_rng.bit_generator.state
    return states


def restore_rng_states(states: dict[str, Any], np_rng: np.random.Generator | None = None) -> None:
    """Restore the states saved by :func:`rng_states` (``np_rng`` is updated in place)."""
    random.setstate(_as_tuple(states["python"]))
    if np_rng is not None:
        np_rng.bit_generator.state = states["numpy"]
    torch.set_rng_state(states["torch"])


def _as_tuple(x: Any) -> Any:
    return tuple(_as_tuple(v) for v in x) if isinstance(x, (list, tuple)) else x


def make_checkpoint(model: PolicyValueNet, config: dict[str, Any], optimizer: torch.optim.Optimizer | None = None, **extra: Any) -> dict[str, Any]:
    """Return a checkpoint dictionary: weights, config, versions, spaces and ``extra`` (counters, RNG states...)."""
    spec = get_game(model.game)
    ckpt = {
        "format": FORMAT,
        "env_version": spec.env_version,
        "package_version": grinch_env.__version__,
        "obs_size": spec.obs_size,
        "num_actions": spec.num_actions,
        **model.architecture(),
        "config": config,
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict() if optimizer is not None else None,
    }
    ckpt["model_sha256"] = tensors_sha256(ckpt["model"])  # checked on load: a flipped byte in the weights is an error, not a NaN later
    ckpt.update(extra)
    return ckpt


def tensors_sha256(state_dict: dict[str, torch.Tensor]) -> str:
    """Return the SHA-256 of a state dict's names, dtypes, shapes and bytes (independent of how the file stores them)."""
    digest = hashlib.sha256()
    for name in sorted(state_dict):
        t = state_dict[name].detach().cpu().contiguous()
        digest.update(f"{name}|{t.dtype}|{tuple(t.shape)}|".encode())
        digest.update(t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    return digest.hexdigest()


def load_checkpoint(path: str | Path) -> dict[str, Any]:
    """Return the checkpoint dictionary at ``path`` (a ``.pt`` file or a run directory); raise if missing or incompatible."""
    path = resolve_checkpoint(path)
    _check_against_manifests(path)
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # a truncated or foreign file
        raise ValueError(f"{str(path)!r} is not a readable torch checkpoint: {err}") from None
    return validate_checkpoint(ckpt, path)


def validate_checkpoint(ckpt: Any, path: str | Path) -> dict[str, Any]:
    """Return ``ckpt`` if it is a checkpoint of this package's format, game version and spaces, with intact weights; raise ``ValueError`` saying what is wrong."""
    if not isinstance(ckpt, dict) or ckpt.get("format") != FORMAT:
        raise ValueError(f"{str(path)!r} is not a grinch_env PPO checkpoint (expected format {FORMAT!r})")
    expected = ckpt.get("model_sha256")  # checkpoints from before it was recorded have none
    if expected is not None and (not isinstance(ckpt.get("model"), dict) or tensors_sha256(ckpt["model"]) != expected):
        raise CheckpointError(f"checkpoint {str(path)!r}: its weights do not match the SHA-256 recorded when it was written (the file was altered or corrupted)")
    try:
        spec = get_game(ckpt.get("game", DEFAULT_GAME))  # checkpoints from before the second game are the Grinch's
    except ValueError as err:
        raise ValueError(f"checkpoint {str(path)!r}: {err}") from None
    if ckpt.get("obs_size") != spec.obs_size or ckpt.get("num_actions") != spec.num_actions or ckpt.get("env_version") != spec.env_version:
        raise ValueError(
            f"checkpoint {str(path)!r} was made for {ckpt.get('env_version')} with observation size {ckpt.get('obs_size')} and "
            f"{ckpt.get('num_actions')} actions; this package's {spec.name} environment is {spec.env_version} with {spec.obs_size} and {spec.num_actions}"
        )
    return ckpt


def _check_against_manifests(path: Path) -> None:
    """Refuse a file whose sidecar ``.sha256`` does not list its SHA-256, and ``latest.pt`` (or a state file) of a run directory with manifests when no manifest records it."""
    sidecar = _sidecar(path)
    if sidecar.is_file():
        sums = _sidecar_sums(sidecar)
        if sha256_file(path) not in sums:
            raise CheckpointError(f"checkpoint {str(path)!r} does not match the SHA-256 in {sidecar.name}" + (" (unreadable)" if not sums else "")
                                  + ": it was altered, truncated or corrupted after it was written")
    run_dir = path.parent.parent if path.parent.name == STATE_DIR else path.parent
    if path.name != LATEST and path.parent.name != STATE_DIR:
        return
    infos = committed_checkpoints(run_dir)
    if not infos:
        return  # a run directory from before manifests, or a copied latest.pt
    digest = sha256_file(path)
    if not any(info["files"][info["state"]]["sha256"] == digest for info in infos):
        raise CheckpointError(f"checkpoint {str(path)!r} matches none of the SHA-256 sums in {run_dir}'s manifests: it was altered or "
                              f"corrupted after it was written (resume with --resume {run_dir}, which falls back to the newest checkpoint that verifies)")


def resolve_checkpoint(path: str | Path) -> Path:
    """Return the ``.pt`` file for ``path``: the file itself, or a run directory's best.pt, else latest.pt."""
    path = Path(path)
    if path.is_dir():
        for name in (BEST, LATEST):
            if (path / name).is_file():
                return path / name
        raise FileNotFoundError(f"run directory {str(path)!r} holds neither {BEST} nor {LATEST}")
    if not path.is_file():
        raise FileNotFoundError(f"checkpoint {str(path)!r} does not exist (give a run directory, a .pt checkpoint or an SB3 .zip)")
    return path


def stored_architecture(ckpt: dict[str, Any]) -> dict[str, Any]:
    """Return the network's constructor arguments stored in ``ckpt``; an older checkpoint lacks newer keys: their defaults."""
    defaults = {name: param.default for name, param in inspect.signature(PolicyValueNet).parameters.items()}
    return {key: ckpt.get(key, defaults[key]) for key in ARCHITECTURE}


def model_from_checkpoint(ckpt: dict[str, Any]) -> PolicyValueNet:
    """Return the network stored in ``ckpt``, in eval mode."""
    net = PolicyValueNet(**stored_architecture(ckpt))
    net.load_state_dict(ckpt["model"])
    net.eval()
    return net


def check_network(ckpt: dict[str, Any], net: PolicyValueNet, path: str | Path) -> None:
    """Refuse a checkpoint whose weights do not fit ``net``: other shapes, or other action features.

    ``margin_baseline`` has no weights, so it may differ; ``draw_lookahead`` changes what the
    weights read, so it may not.
    """
    theirs_game = stored_architecture(ckpt)["game"]
    if theirs_game != net.game:
        raise ValueError(f"checkpoint {str(path)!r} holds a network for game {theirs_game!r}; the config's network plays {net.game!r}")
    mine = {key: value for key, value in net.architecture().items() if key in WEIGHT_KEYS}
    theirs = {key: value for key, value in stored_architecture(ckpt).items() if key in WEIGHT_KEYS}
    if mine != theirs:
        def describe(arch: dict[str, Any]) -> str:
            return ", ".join(f"{key} {arch[key]}" for key in WEIGHT_KEYS)

        raise ValueError(f"checkpoint {str(path)!r} holds a network with {describe(theirs)}; the config's network has {describe(mine)}")


def load_weights(net: PolicyValueNet, path: str | Path) -> dict[str, Any]:
    """Load the weights of the checkpoint at ``path`` into ``net`` (shape checked); return the checkpoint."""
    ckpt = load_checkpoint(path)
    check_network(ckpt, net, path)
    net.load_state_dict(ckpt["model"])
    return ckpt


class PolicyAgent(NetworkAgent):
    """An agent playing a trained network: argmax of the masked policy by default, or sampling it."""

    def __init__(self, net: PolicyValueNet, name: str = "ppo", deterministic: bool = True, seed: int | None = None) -> None:
        self.net = net
        self.game = net.game
        super().__init__(name, deterministic, seed)

    def _scores(self, observations: np.ndarray, masks: np.ndarray) -> torch.Tensor:
        dist, _, _ = self.net.distribution_np(observations, masks)
        return dist.probs


class SB3Agent:
    """An agent playing an sb3-contrib ``MaskablePPO`` model saved as a ``.zip``."""

    def __init__(self, path: Path, name: str, deterministic: bool = True, seed: int | None = None) -> None:
        from sb3_contrib import MaskablePPO

        self.model = MaskablePPO.load(str(path), device="cpu")
        space = self.model.observation_space
        shapes = {(spec.obs_size, spec.num_actions): spec.name for spec in GAMES.values()}
        found = (getattr(space, "shape", (None,))[0], getattr(self.model.action_space, "n", None))
        if getattr(space, "shape", None) is None or len(space.shape) != 1 or found not in shapes:
            expected = " or ".join(f"Box(({s.obs_size},)) and Discrete({s.num_actions}) ({s.name})" for s in GAMES.values())
            raise ValueError(f"SB3 model {str(path)!r} has observation space {space} and action space {self.model.action_space}; expected {expected}")
        self.game = shapes[found]  # the game whose Gymnasium wrapper the model was trained on (training/train_sb3.py)
        self.name = name
        self.deterministic = deterministic
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.model.set_random_seed(int(seed))

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        actions, _ = self.model.predict(np.asarray(observations, dtype=np.float32), action_masks=np.asarray(masks).astype(bool), deterministic=self.deterministic)
        return np.asarray(actions, dtype=np.int64)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(self.act_batch(np.asarray(observation)[None], np.asarray(action_mask)[None])[0])




class UntrustedCheckpointError(ValueError):
    """An SB3 ``.zip`` or RLlib checkpoint loaded without the user's opt-in (loading it unpickles Python objects)."""


def _require_trust(kind: str, path: Path, trust: bool) -> None:
    if trust or os.environ.get(TRUST_ENV) == "1":
        return
    raise UntrustedCheckpointError(
        f"{kind} {str(path)!r} is not loaded: loading it unpickles Python objects, which can run arbitrary code, so load only files you "
        f"made or trust. To load it, pass --trust-checkpoint to the command, or add the option trust=1 to the agent spec "
        f"({str(path)}:trust=1); our own .pt checkpoints need neither (they are read with weights_only=True)"
    )


def _learner_checkpoint(p: Path) -> tuple[dict[str, Any], Path] | None:
    """Return ``(checkpoint, file)`` if ``p`` is a learner checkpoint (run directory with ``latest.pt`` and no ``best.pt``, or the file), else ``None``."""
    from training.learner.search import learner_formats

    file = p / LATEST if p.is_dir() and not (p / BEST).exists() else p
    if not file.is_file() or file.suffix != ".pt":
        return None
    try:
        ckpt = torch.load(file, map_location="cpu", weights_only=True)
    except Exception:  # not a torch file, or not one of ours: the PPO loader says why
        return None
    from training.learner.formats import AFTERSTATE_FORMAT

    return (ckpt, file) if isinstance(ckpt, dict) and ckpt.get("format") in learner_formats() + (AFTERSTATE_FORMAT,) else None


def load_agent(path: str | Path, seed: int | None = None, deterministic: bool = True, trust: bool = False, options: dict[str, Any] | None = None):
    """Return an agent (``name``, ``reset``, ``act``, ``act_batch``) from a run directory, a ``.pt`` checkpoint or an SB3 ``.zip``.

    ``deterministic=True`` plays the most probable legal action (evaluation);
    ``False`` samples the masked policy with a generator seeded by ``seed``.
    An SB3 ``.zip`` or an RLlib checkpoint directory is unpickled when loaded
    (it can run code), so it is refused with :class:`UntrustedCheckpointError`
    unless ``trust=True`` (or the environment variable ``GRINCH_ENV_TRUST_CHECKPOINTS=1``,
    which ``--trust-checkpoint`` sets so that worker processes inherit it).
    A learner checkpoint (:mod:`training.learner.run`: a run directory holding
    its ``latest.pt``, or the file) loads as :mod:`training.learner.search`'s
    agent; ``options`` are its spec options (``search=1,samples=N,top_k=K,horizon=H|round|end``).  An afterstate
    run's (:mod:`training.learner.afterstate_run`) loads as :class:`training.learner.afterstate.AfterstateAgent`,
    with options ``play`` and ``generation`` (a Gnoming run's as :class:`training.learner.gnoming_afterstate.GnomingAfterstateAgent`).
    Other checkpoints take no options.
    """
    from training.learner.formats import AFTERSTATE_FORMAT

    p = Path(path)
    options = {k: v for k, v in (options or {}).items() if k != "trust"}
    learner = _learner_checkpoint(p)
    if learner is not None and learner[0]["format"] == AFTERSTATE_FORMAT and learner[0]["config"].get("game") == "gnoming":
        from training.learner.gnoming_afterstate import agent_from as gnoming_agent_from

        return gnoming_agent_from(learner[0], learner[1], seed, options)
    if learner is not None and learner[0]["format"] == AFTERSTATE_FORMAT:  # training.learner.afterstate_run
        from training.learner.afterstate import agent_from

        return agent_from(learner[0], learner[1], seed, options)
    if learner is not None:
        from training.learner.search import learner_agent_from

        return learner_agent_from(learner[0], learner[1], seed, options)
    if options:
        raise AgentOptionError(f"checkpoint {str(p)!r}: unknown option(s) {sorted(options)}; a checkpoint path takes only trust=1 "
                               "(load an SB3 .zip or RLlib checkpoint, which unpickles code: only for files you trust), except a learner checkpoint "
                               "(training.learner), which takes search, samples, top_k and horizon, or an afterstate run's, which takes play and generation")
    if p.suffix == ".zip":
        if not p.is_file():
            raise FileNotFoundError(f"SB3 model {str(p)!r} does not exist")
        _require_trust("SB3 model", p, trust)
        return SB3Agent(p, name=f"{p.parent.name}/{p.stem}", deterministic=deterministic, seed=seed)
    for rllib_dir in (p, p / "rllib_checkpoint"):  # an RLlib algorithm checkpoint (training.train_rllib); needs the [ray] extra
        if (rllib_dir / "learner_group").is_dir():
            _require_trust("RLlib checkpoint", rllib_dir, trust)
            from grinch_env.integrations.rllib import RLlibAgent

            return RLlibAgent(rllib_dir, name=f"{p.name}/rllib", deterministic=deterministic, seed=seed)
    file = resolve_checkpoint(p)
    ckpt = load_checkpoint(file)
    run = ckpt.get("config", {}).get("run_name", file.parent.name)
    return PolicyAgent(model_from_checkpoint(ckpt), name=f"{run}/{file.stem}", deterministic=deterministic, seed=seed)


__all__ = [
    "BEST", "LATEST", "STATE_DIR", "CheckpointError", "GracefulStop", "Interrupted", "PolicyAgent", "SB3Agent", "UntrustedCheckpointError",
    "atomic_torch_save", "atomic_write_bytes", "check_network", "committed_checkpoints", "load_agent", "load_checkpoint", "load_latest",
    "load_verified_tensors", "load_weights", "make_checkpoint", "model_from_checkpoint", "remove_orphan_tmp", "resolve_checkpoint",
    "restore_rng_states", "rng_states", "save_checkpoint", "save_verified", "sha256_file", "tensors_sha256", "validate_checkpoint", "verify_manifest",
]


# make_agent(<checkpoint path>) finds this loader once training is imported (and through the entry point when installed).
def _register() -> None:
    from grinch_env.agent_base import register_checkpoint_loader

    register_checkpoint_loader(load_agent)


_register()

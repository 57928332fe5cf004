"""Checkpoints of training runs, and loading any trained policy as an agent.

A run directory ``checkpoints/<run_name>/`` holds ``latest.pt`` (everything
needed to resume exactly: weights, optimizer state, the resolved config, the
update and step counts, the python/numpy/torch random states, the opponent
pool's snapshot names), ``best.pt`` (the same, saved when a periodic
evaluation beats the previous best), ``snapshots/*.pt`` (the pool's frozen
weights) and ``config.yaml``.  Every ``.pt`` records the environment version
and spaces so that an incompatible checkpoint is refused with a clear error.
Files are written to a temporary name and moved into place with
``os.replace``, so an interrupted write never leaves a broken checkpoint.
"""

from __future__ import annotations

import inspect
import os
import random
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import torch

import grinch_env
from grinch_env.games import DEFAULT_GAME, get_game
from grinch_env.grinch.encoding import OBS_SIZE
from grinch_env.grinch.game import NUM_ACTIONS
from training.model import ARCHITECTURE, WEIGHT_KEYS, PolicyValueNet

FORMAT = "grinch_ppo_checkpoint_v1"
LATEST = "latest.pt"
BEST = "best.pt"


def atomic_torch_save(obj: Any, path: str | Path) -> None:
    """Write ``obj`` to ``path`` through a temporary file in the same directory and ``os.replace``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            torch.save(obj, f)
        os.chmod(tmp, 0o644)  # mkstemp makes owner-only files; a checkpoint is meant to be shared
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def rng_states(np_rng: np.random.Generator) -> dict[str, Any]:
    """Return the python, numpy (the trainer's generator) and torch random states."""
    return {"python": random.getstate(), "numpy": np_rng.bit_generator.state, "torch": torch.get_rng_state()}


def restore_rng_states(states: dict[str, Any], np_rng: np.random.Generator) -> None:
    """Restore the states saved by :func:`rng_states` (``np_rng`` is updated in place)."""
    random.setstate(_as_tuple(states["python"]))
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
    ckpt.update(extra)
    return ckpt


def load_checkpoint(path: str | Path) -> dict[str, Any]:
    """Return the checkpoint dictionary at ``path`` (a ``.pt`` file or a run directory); raise if missing or incompatible."""
    path = resolve_checkpoint(path)
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # a truncated or foreign file
        raise ValueError(f"{str(path)!r} is not a readable torch checkpoint: {err}") from None
    if not isinstance(ckpt, dict) or ckpt.get("format") != FORMAT:
        raise ValueError(f"{str(path)!r} is not a grinch_env PPO checkpoint (expected format {FORMAT!r})")
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


class PolicyAgent:
    """An agent playing a trained network: argmax of the masked policy by default, or sampling it."""

    def __init__(self, net: PolicyValueNet, name: str = "ppo", deterministic: bool = True, seed: int | None = None) -> None:
        self.net = net
        self.game = net.game
        self.name = name
        self.deterministic = deterministic
        self._generator = torch.Generator()
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self._generator.manual_seed(int(seed))

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        dist, _, _ = self.net.distribution_np(observations, masks)
        if self.deterministic:
            return dist.probs.argmax(dim=-1).numpy().astype(np.int64)
        return torch.multinomial(dist.probs, 1, generator=self._generator).squeeze(-1).numpy().astype(np.int64)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(self.act_batch(np.asarray(observation)[None], np.asarray(action_mask)[None])[0])


class SB3Agent:
    """An agent playing an sb3-contrib ``MaskablePPO`` model saved as a ``.zip``."""

    def __init__(self, path: Path, name: str, deterministic: bool = True, seed: int | None = None) -> None:
        from sb3_contrib import MaskablePPO

        self.game = "grinch"  # the SB3 config trains on grinch_env.gym_env.GameGymEnv with game="grinch"
        self.model = MaskablePPO.load(str(path), device="cpu")
        space = self.model.observation_space
        if getattr(space, "shape", None) != (OBS_SIZE,) or getattr(self.model.action_space, "n", None) != NUM_ACTIONS:
            raise ValueError(
                f"SB3 model {str(path)!r} has observation space {space} and action space {self.model.action_space}; "
                f"expected Box(({OBS_SIZE},)) and Discrete({NUM_ACTIONS})"
            )
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


def load_agent(path: str | Path, seed: int | None = None, deterministic: bool = True):
    """Return an agent (``name``, ``reset``, ``act``, ``act_batch``) from a run directory, a ``.pt`` checkpoint or an SB3 ``.zip``.

    ``deterministic=True`` plays the most probable legal action (evaluation);
    ``False`` samples the masked policy with a generator seeded by ``seed``.
    """
    p = Path(path)
    if p.suffix == ".zip":
        if not p.is_file():
            raise FileNotFoundError(f"SB3 model {str(p)!r} does not exist")
        return SB3Agent(p, name=f"{p.parent.name}/{p.stem}", deterministic=deterministic, seed=seed)
    for rllib_dir in (p, p / "rllib_checkpoint"):  # an RLlib algorithm checkpoint (training.train_rllib); needs the [ray] extra
        if (rllib_dir / "learner_group").is_dir():
            from grinch_env.integrations.rllib import RLlibAgent

            return RLlibAgent(rllib_dir, name=f"{p.name}/rllib", deterministic=deterministic, seed=seed)
    file = resolve_checkpoint(p)
    ckpt = load_checkpoint(file)
    run = ckpt.get("config", {}).get("run_name", file.parent.name)
    return PolicyAgent(model_from_checkpoint(ckpt), name=f"{run}/{file.stem}", deterministic=deterministic, seed=seed)


__all__ = [
    "BEST", "LATEST", "PolicyAgent", "SB3Agent", "atomic_torch_save", "check_network", "load_agent", "load_checkpoint", "load_weights", "make_checkpoint",
    "model_from_checkpoint", "resolve_checkpoint", "restore_rng_states", "rng_states",
]


# make_agent(<checkpoint path>) finds this loader once training is imported (and through the entry point when installed).
def _register() -> None:
    from grinch_env.agent_base import register_checkpoint_loader

    register_checkpoint_loader(load_agent)


_register()

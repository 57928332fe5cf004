"""Loading any trained policy as an agent (:func:`load_agent`, the ``grinch_env.checkpoint_loaders`` entry point), and
:func:`atomic_torch_save`, the trainers' durable ``torch.save``.

:func:`load_agent` takes

* a run directory of ``python -m training.train`` (holding ``latest.pt``) or that ``.pt`` file: an afterstate run's
  (:mod:`training.learner.afterstate_run`, Grinch or Gnoming) or a token learner's (:mod:`training.learner.run`),
  read with ``weights_only=True``;
* an SB3 ``model.zip`` (``python -m training.train_sb3``) and
* an RLlib run directory or its ``rllib_checkpoint/`` (``python -m training.train_rllib``), both of which unpickle
  Python objects when loaded and so need the opt-in (``trust=True``, ``--trust-checkpoint``, ``path:trust=1``).
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import numpy as np
import torch

from grinch_env.agent_base import AgentOptionError
from grinch_env.agents import TRUST_ENV  # the variable --trust-checkpoint sets
from grinch_env.games import GAMES
from training.files import atomic_write_bytes
from training.learner.formats import AFTERSTATE_FORMAT, LATEST, LEARNER_FORMATS

RLLIB_CHECKPOINT = "rllib_checkpoint"  # training.train_rllib's CHECKPOINT
RETIRED_FORMATS = {"grinch_ppo_checkpoint_v1": "the retired PPO trainer's (training.ppo, PolicyValueNet)"}


def atomic_torch_save(obj: Any, path: str | Path) -> None:
    """Write ``obj`` to ``path`` with :func:`atomic_write_bytes` (temporary file, fsync, ``os.replace``)."""
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    atomic_write_bytes(path, buffer.getvalue())


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


def _allowed() -> str:
    return (f"give a run directory of python -m training.train (holding {LATEST}) or its .pt file, an SB3 model .zip "
            f"(python -m training.train_sb3) or an RLlib run directory or its {RLLIB_CHECKPOINT}/ (python -m training.train_rllib)")


def _torch_checkpoint(file: Path) -> dict[str, Any]:
    """The learner or afterstate checkpoint dictionary in ``file`` (read with ``weights_only=True``); ``ValueError`` saying why not."""
    try:
        ckpt = torch.load(file, map_location="cpu", weights_only=True)
    except Exception as err:  # a truncated or foreign file
        first = str(err).splitlines()[0] if str(err) else ""
        raise ValueError(f"{str(file)!r} is not a readable torch checkpoint ({type(err).__name__}: {first})") from None
    fmt = ckpt.get("format") if isinstance(ckpt, dict) else None
    formats = (*LEARNER_FORMATS, AFTERSTATE_FORMAT)
    if fmt not in formats:
        retired = f": {RETIRED_FORMATS[fmt]}, which no longer loads" if fmt in RETIRED_FORMATS else ""
        raise ValueError(f"{str(file)!r} is not a checkpoint this package loads (format {fmt!r}{retired}; expected one of {list(formats)})")
    return ckpt


def load_agent(path: str | Path, seed: int | None = None, deterministic: bool = True, trust: bool = False, options: dict[str, Any] | None = None):
    """Return an agent (``name``, ``reset``, ``act``, ``act_batch``) from a run directory, its ``latest.pt``, an SB3 ``.zip``
    or an RLlib checkpoint.

    A learner checkpoint (:mod:`training.learner.run`: a run directory holding its ``latest.pt``, or the file) loads
    as :mod:`training.learner.search`'s agent; ``options`` are its spec options
    (``search=1,samples=N,top_k=K,horizon=H|round|end``).  An afterstate run's (:mod:`training.learner.afterstate_run`)
    loads as :class:`training.learner.afterstate.AfterstateAgent`, with options ``play`` and ``generation`` (a Gnoming
    run's as :class:`training.learner.gnoming_afterstate.GnomingAfterstateAgent`).  An SB3 ``.zip`` or an RLlib
    checkpoint directory is unpickled when loaded (it can run code), so it is refused with
    :class:`UntrustedCheckpointError` unless ``trust=True`` (or the environment variable
    ``GRINCH_ENV_TRUST_CHECKPOINTS=1``, which ``--trust-checkpoint`` sets so that worker processes inherit it); they
    take no options, and ``deterministic=True`` plays their most probable legal action (``False`` samples the masked
    policy with a generator seeded by ``seed``).  Anything else is a ``ValueError`` (``FileNotFoundError`` for a path
    that does not exist) saying what is allowed.
    """
    p = Path(path)
    options = {k: v for k, v in (options or {}).items() if k != "trust"}
    file = p / LATEST if p.is_dir() else p
    if file.is_file() and file.suffix == ".pt":
        ckpt = _torch_checkpoint(file)
        if ckpt["format"] == AFTERSTATE_FORMAT and ckpt["config"].get("game") == "gnoming":
            from training.learner.gnoming_afterstate import agent_from as gnoming_agent_from

            return gnoming_agent_from(ckpt, file, seed, options)
        if ckpt["format"] == AFTERSTATE_FORMAT:  # training.learner.afterstate_run
            from training.learner.afterstate import agent_from

            return agent_from(ckpt, file, seed, options)
        from training.learner.search import learner_agent_from

        return learner_agent_from(ckpt, file, seed, options)
    if options:
        raise AgentOptionError(f"checkpoint {str(p)!r}: unknown option(s) {sorted(options)}; a checkpoint path takes only trust=1 "
                               "(load an SB3 .zip or RLlib checkpoint, which unpickles code: only for files you trust), except a learner checkpoint "
                               "(training.learner), which takes search, samples, top_k and horizon, or an afterstate run's, which takes play and generation")
    if p.suffix == ".zip":
        if not p.is_file():
            raise FileNotFoundError(f"no checkpoint at {p}: the SB3 model does not exist; {_allowed()}")
        _require_trust("SB3 model", p, trust)
        return SB3Agent(p, name=f"{p.parent.name}/{p.stem}", deterministic=deterministic, seed=seed)
    for rllib_dir in (p, p / RLLIB_CHECKPOINT):  # an RLlib algorithm checkpoint (training.train_rllib); needs the [ray] extra
        if (rllib_dir / "learner_group").is_dir():
            _require_trust("RLlib checkpoint", rllib_dir, trust)
            from grinch_env.integrations.rllib import RLlibAgent

            return RLlibAgent(rllib_dir, name=f"{p.name}/rllib", deterministic=deterministic, seed=seed)
    if not p.exists():
        raise FileNotFoundError(f"no checkpoint at {p}: it does not exist; {_allowed()}")
    what = f"the directory holds neither {LATEST} nor {RLLIB_CHECKPOINT}/" if p.is_dir() else "the file is neither a .pt checkpoint nor an SB3 .zip"
    raise ValueError(f"no checkpoint at {p}: {what}; {_allowed()}")


__all__ = ["LATEST", "SB3Agent", "UntrustedCheckpointError", "atomic_torch_save", "load_agent"]


# make_agent(<checkpoint path>) finds this loader once training is imported (and through the entry point when installed).
def _register() -> None:
    from grinch_env.agent_base import register_checkpoint_loader

    register_checkpoint_loader(load_agent)


_register()

"""What every game's agents share: the :class:`Agent` interface, a seeded base class, input checks, and the checkpoint loaders.

Checkpoints are loaded by the loaders in :data:`CHECKPOINT_LOADERS`: the
trainer's torch loader is found through the ``grinch_env.checkpoint_loaders``
entry point (``training.checkpoint:load_agent``), and any installed package
may add one there, so ``grinch_env`` never imports the trainer (or torch).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any, Protocol, runtime_checkable

import numpy as np

from grinch_env.games import DEFAULT_GAME, get_game


@runtime_checkable
class Agent(Protocol):
    """What every agent provides (a structural type: no subclassing needed); ``act_batch(obs, masks)`` is optional."""

    name: str

    def reset(self, seed: int | None = None) -> None: ...

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int: ...



def check_mask(action_mask: np.ndarray, num_actions: int) -> np.ndarray:
    """Return the legal actions of ``action_mask`` (sorted), raising ``ValueError`` for a wrong shape or no legal action."""
    mask = np.asarray(action_mask)
    if mask.shape != (num_actions,):
        raise ValueError(f"action_mask must have shape ({num_actions},), got {mask.shape}")
    legal = np.flatnonzero(mask)
    if len(legal) == 0:
        raise ValueError("action_mask has no legal action: an agent is only asked to act when it is its turn")
    return legal


class SeededAgent:
    """Common plumbing: a seeded generator, input checks and a default ``act_batch``.

    A subclass sets ``num_actions`` (its game's action count) and implements
    ``_act(observation, legal)``, called only when there is a choice, with the
    legal actions as an int64 array (or a list of ints with ``legal_as_list``).
    """

    name = "base"
    num_actions: int
    legal_as_list = False

    def __init__(self, seed: int | None = None) -> None:
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        """Start a new game; the same seed gives the same decisions."""
        self.rng = np.random.default_rng(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """Return a legal action for this observation."""
        legal = check_mask(action_mask, self.num_actions)
        if len(legal) == 1:
            return int(legal[0])
        return int(self._act(np.asarray(observation, dtype=np.float32), legal.tolist() if self.legal_as_list else legal))

    def _act(self, observation: np.ndarray, legal) -> int:  # noqa: ANN001 - an array or a list, as the subclass asks
        raise NotImplementedError

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Return ``int64[B]`` actions, one ``act`` per row."""
        return np.array([self.act(o, m) for o, m in zip(observations, masks)], dtype=np.int64)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class AgentOptionError(ValueError):
    """Options in an agent spec that the checkpoint does not take (raised as it is, not as one loader's complaint among several)."""


class NetworkAgent:
    """A network's masked policy as an agent: its argmax (``deterministic``), or a sample drawn with a seeded ``torch.Generator``.

    RLlib's checkpoints
    (``grinch_env.integrations.rllib.RLlibAgent``) play through it.  A subclass
    implements ``_scores(observations, masks)``: a torch tensor ``[B, actions]``
    of probabilities, or of logits when ``scores_are_logits``, with every
    illegal action at zero probability.  torch is imported only when such an
    agent is made, so ``grinch_env`` itself needs no torch.
    """

    scores_are_logits = False

    def __init__(self, name: str, deterministic: bool = True, seed: int | None = None) -> None:
        import torch

        self.name = name
        self.deterministic = deterministic
        self._generator = torch.Generator()
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        """Seed the sampling generator (``None`` keeps its stream); argmax play draws nothing."""
        if seed is not None:
            self._generator.manual_seed(int(seed))

    def _scores(self, observations: np.ndarray, masks: np.ndarray) -> Any:
        raise NotImplementedError

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Return ``int64[B]`` actions: the best-scored legal action of each row, or one sampled from the policy."""
        import torch

        scores = self._scores(observations, masks)
        if self.deterministic:
            return scores.argmax(dim=-1).numpy().astype(np.int64)
        probs = torch.softmax(scores, -1) if self.scores_are_logits else scores
        return torch.multinomial(probs, 1, generator=self._generator).squeeze(-1).numpy().astype(np.int64)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(self.act_batch(np.asarray(observation)[None], np.asarray(action_mask)[None])[0])


CheckpointLoader = Callable[..., Agent]
CHECKPOINT_LOADERS: list[CheckpointLoader] = []
"""Functions ``loader(path, seed=None) -> agent`` tried in order on a checkpoint path (raise ``ValueError`` if not theirs)."""
ENTRY_POINT_GROUP = "grinch_env.checkpoint_loaders"


def register_checkpoint_loader(loader: CheckpointLoader) -> None:
    """Add ``loader`` to the checkpoint loaders (once)."""
    if loader not in CHECKPOINT_LOADERS:
        CHECKPOINT_LOADERS.append(loader)


def _loaders() -> list[CheckpointLoader]:
    if not CHECKPOINT_LOADERS:
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            try:
                register_checkpoint_loader(ep.load())
            except ImportError:  # the extra that provides it (e.g. torch for the trainer's) is not installed
                continue
    return CHECKPOINT_LOADERS


TRUST_ENV = "GRINCH_ENV_TRUST_CHECKPOINTS"  # set by --trust-checkpoint (trust_checkpoints); worker processes inherit it


def trust_checkpoints(enabled: bool = True) -> None:
    """Allow (or forbid again) loading SB3 ``.zip`` and RLlib checkpoints, which unpickle Python objects: what ``--trust-checkpoint`` does.

    It is an environment variable, so that worker processes (evaluation pools) inherit it.
    """
    if enabled:
        os.environ[TRUST_ENV] = "1"
    else:
        os.environ.pop(TRUST_ENV, None)


def load_checkpoint_agent(path: str, seed: int | None = None, num_players: int | None = None, game: str = DEFAULT_GAME,
                          trust: bool = False, options: dict[str, Any] | None = None) -> Agent:
    """Return the agent a checkpoint ``path`` holds, checked to play ``game`` at ``num_players`` (``ValueError`` otherwise).

    ``trust`` allows formats whose loading unpickles code (SB3 ``.zip``, RLlib checkpoints); a loader that
    takes no ``trust`` argument loads only safe formats.  ``options`` are the spec's other ``key=value`` options
    (a learner checkpoint's search options); only loaders that take an ``options`` argument are offered them.
    """
    import inspect

    loaders = _loaders()
    if not loaders:
        raise ValueError(f"cannot load checkpoint {path!r}: no checkpoint loader is installed (install grinch_env[train] for torch checkpoints)")
    errors = []
    for loader in loaders:
        try:
            params = inspect.signature(loader).parameters
            kwargs: dict[str, Any] = {"trust": trust} if "trust" in params else {}
            if options:
                if "options" not in params:
                    raise ValueError(f"this loader takes no agent options (got {sorted(options)})")
                kwargs["options"] = options
            agent = loader(path, seed=seed, **kwargs)
            break
        except Exception as exc:  # missing, truncated or foreign files raise many kinds of errors
            if isinstance(exc, AgentOptionError) or type(exc).__name__ == "UntrustedCheckpointError":
                raise ValueError(str(exc)) from None  # the reason and the opt-in, not a list of every loader's complaint
            errors.append(str(exc))
    else:
        raise ValueError(f"cannot load checkpoint {path!r}: {'; '.join(errors)}")
    trained_for = getattr(agent, "game", DEFAULT_GAME)
    if trained_for != game:
        raise ValueError(f"checkpoint {path!r} plays {get_game(trained_for).title} (game {trained_for!r}), not {get_game(game).title} (game {game!r})")
    supported = getattr(agent, "num_players", None)
    if num_players is not None and supported is not None and not _supports(supported, num_players):
        raise ValueError(f"checkpoint {path!r} was trained for num_players={supported}, not {num_players}")
    return agent


def _supports(supported: Any, num_players: int) -> bool:
    if isinstance(supported, int):
        return supported == num_players
    try:
        return num_players in supported
    except TypeError:
        return True


__all__ = ["CHECKPOINT_LOADERS", "TRUST_ENV", "Agent", "AgentOptionError", "NetworkAgent", "SeededAgent", "check_mask", "load_checkpoint_agent", "register_checkpoint_loader", "trust_checkpoints"]

"""PettingZoo's classic wrapper stack in one class, shared by every game's ``env()``.

:class:`ClassicWrapper` behaves as ``OrderEnforcingWrapper(AssertOutOfBoundsWrapper(
TerminateIllegalWrapper(env, illegal_reward=-1)))`` around any AEC env with a
``Discrete`` action space, with the hot methods (``last``, ``step``,
``agent_iter``) on a slotted object.  A game's ``raw_env`` opts into the fast
path by setting ``raw_env._fast_loop_class = raw_env`` and providing
``_game`` (whose ``step`` raises :class:`~grinch_env.games.IllegalActionError`),
``_encoder.observe(game, seat)``, ``action_log`` and ``_after_step(agent,
action)`` (the bookkeeping after an applied action); a subclass of it, or any
other env, goes through its own ``observe``/``step``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
from pettingzoo import AECEnv
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers import BaseWrapper

from grinch_env.games import IllegalActionError

ILLEGAL_REWARD = -1.0


_RESET_FIRST = frozenset({"rewards", "terminations", "truncations", "infos", "agent_selection", "num_agents", "agents"})


def _reset_first(name: str) -> AttributeError:
    return AttributeError(f"{name} cannot be accessed before reset")


def _forward(name: str) -> property:
    """Return a property reading ``name`` from the wrapped env, refused before ``reset`` like OrderEnforcingWrapper."""

    def get(self: ClassicWrapper) -> Any:
        if not self._has_reset:
            raise _reset_first(name)
        return getattr(self.env, name)

    return property(get, doc=f"The wrapped environment's ``{name}`` (an AttributeError before reset).")


class ClassicWrapper(BaseWrapper):
    """PettingZoo's classic wrapper stack in one class, with direct methods on the hot path.

    Same behaviour as ``OrderEnforcingWrapper(AssertOutOfBoundsWrapper(
    TerminateIllegalWrapper(env, illegal_reward=-1)))``:

    * ``step``, ``observe``, ``render``, ``state`` and ``agent_iter`` before
      ``reset`` raise ``AssertionError``; ``agents``, ``rewards``, ... raise
      ``AttributeError``; ``step`` with no agent left only warns;
    * an action that is not ``None`` (for a terminated agent) or in the action
      space fails an assertion;
    * an illegal action ends the game: -1 for the offender, 0 for the others,
      every agent terminated and truncated, and PettingZoo's warning.

    PettingZoo's stack costs more than the game itself, because each wrapper
    layer forwards attribute reads through ``__getattr__``.  Here the hot
    attributes are properties, and ``last``, ``step`` and ``agent_iter`` are
    the methods of a small :class:`_Loop` object kept in the instance
    dictionary: a class with ``__getattr__`` (as every ``BaseWrapper``) gets
    no specialised attribute reads, so the hot path reads its state from an
    object without one.  Around a :class:`raw_env` itself (not a subclass),
    ``last`` calls its encoder's ``observe`` (observation and mask) and
    ``step`` its game's ``step`` directly (methods replaced on the instance
    later are not seen; wrap a subclass instead).
    """

    agents = _forward("agents")
    agent_selection = _forward("agent_selection")
    rewards = _forward("rewards")
    terminations = _forward("terminations")
    truncations = _forward("truncations")
    infos = _forward("infos")
    _cumulative_rewards = _forward("_cumulative_rewards")

    def __init__(self, env: AECEnv, illegal_reward: float = ILLEGAL_REWARD) -> None:
        if not isinstance(env, AECEnv):
            raise ValueError(f"ClassicWrapper wraps an AECEnv, got {type(env).__name__}")
        super().__init__(env)
        loop = self._loop = _Loop(self, env, float(illegal_reward))
        # Instance attributes shadow the class methods below (same signatures): the user's
        # env.last / env.step / env.agent_iter then call _Loop's methods with no extra layer.
        self.last = loop.last
        self.step = loop.step
        self.agent_iter = loop.agent_iter

    def __getattr__(self, name: str) -> Any:
        # Reached when a property above raised AttributeError (before reset) or for any other attribute.
        if name in _RESET_FIRST and not self._loop.has_reset:
            raise _reset_first(name)
        return super().__getattr__(name)

    @property
    def _has_reset(self) -> bool:
        return self._loop.has_reset

    @property
    def num_agents(self) -> int:
        if not self._loop.has_reset:
            raise _reset_first("num_agents")
        return len(self.env.agents)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        loop = self._loop
        loop.has_reset = True
        loop.has_updated = True
        loop.terminated = False
        self.env.reset(seed=seed, options=options)

    def observe(self, agent: str) -> Any:
        if not self._loop.has_reset:
            EnvLogger.error_observe_before_reset()
        return self.env.observe(agent)

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        return self._loop.last(observe)

    def agent_iter(self, max_iter: int = 2**63) -> Iterator[str]:
        return self._loop.agent_iter(max_iter)

    def step(self, action: int | None) -> None:
        self._loop.step(action)

    def render(self) -> Any:
        if not self._loop.has_reset:
            EnvLogger.error_render_before_reset()
        return self.env.render()

    def state(self) -> np.ndarray:
        if not self._loop.has_reset:
            EnvLogger.error_state_before_reset()
        return self.env.state()

    def __str__(self) -> str:
        return str(self.env)


class _Loop:
    """The state and hot methods of a :class:`ClassicWrapper` (``last``, ``step``, ``agent_iter``).

    A plain slotted class, so that its attribute reads are specialised by the
    interpreter (a ``BaseWrapper``'s are not, because of its ``__getattr__``).
    """

    __slots__ = ("env", "fast", "encoder", "num_actions", "illegal_reward", "has_reset", "has_updated", "terminated")

    def __init__(self, wrapper: ClassicWrapper, env: AECEnv, illegal_reward: float) -> None:
        self.env = env
        # Our raw_env (not a subclass that may override observe or step) is run through its fast path.
        self.fast = getattr(env, "_fast_loop_class", None) is type(env)
        self.encoder = env._encoder if self.fast else None
        self.num_actions = int(env.action_space(env.possible_agents[0]).n)
        self.illegal_reward = illegal_reward
        self.has_reset = False
        self.has_updated = False
        self.terminated = False  # terminated by an illegal move

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self.has_reset:
            raise _reset_first("agent_selection")
        e = self.env
        agent = e.agent_selection
        if not observe:
            obs = None
        elif self.fast:
            obs = self.encoder.observe(e._game, e.agent_name_mapping[agent])  # raw_env.observe, inlined
        else:
            obs = e.observe(agent)
        return obs, e._cumulative_rewards[agent], e.terminations[agent], e.truncations[agent], e.infos[agent]

    def agent_iter(self, max_iter: int = 2**63) -> Iterator[str]:
        if not self.has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return self._agents(max_iter)

    def _agents(self, left: int) -> Iterator[str]:
        """Yield the agent to act until none is left, checking that each one was stepped (PettingZoo's AECIterator)."""
        e = self.env
        while e.agents and left > 0:
            left -= 1
            assert self.has_updated, "need to call step() or reset() in a loop over `agent_iter`"
            self.has_updated = False
            yield e.agent_selection

    def step(self, action: int | None) -> None:
        if not self.has_reset:
            EnvLogger.error_step_before_reset()
        e = self.env
        self.has_updated = True
        if not e.agents:
            EnvLogger.warn_step_after_terminated_truncated()
            return
        agent = e.agent_selection
        dead = e.terminations[agent] or e.truncations[agent]
        # Fast path of Discrete(62).contains for plain ints; anything else asks the space.
        if not (type(action) is int and 0 <= action < self.num_actions) and not ((action is None and dead) or e.action_space(agent).contains(action)):
            raise AssertionError(_bad_action_message(action, agent, dead, self.num_actions))
        if dead:
            (e if self.fast else e.unwrapped)._was_dead_step(action)
            return
        if not self.fast:
            try:
                e.step(action)
            except IllegalActionError:
                self._terminate_illegal(agent)
            return
        game = e._game
        try:
            game.step(action)  # raw_env._step_alive from here on, with its usual case inlined
        except IllegalActionError:
            self._terminate_illegal(agent)
            return
        current = game.current
        if current is not None and type(action) is int and e.render_mode is None:
            e.action_log.append((agent, action))
            e._cumulative_rewards[agent] = 0.0
            e.agent_selection = e.possible_agents[current]
        else:
            e._after_step(agent, action)

    def _terminate_illegal(self, agent: str) -> None:
        """End the game because ``agent`` chose an illegal action (TerminateIllegalWrapper's semantics)."""
        EnvLogger.warn_on_illegal_move()
        u = self.env.unwrapped
        u._cumulative_rewards[agent] = 0
        u.terminations = dict.fromkeys(u.agents, True)
        u.truncations = dict.fromkeys(u.agents, True)
        u.rewards = dict.fromkeys(u.truncations, 0)
        u.rewards[agent] = self.illegal_reward
        u._accumulate_rewards()
        u._deads_step_first()
        self.terminated = True


def _bad_action_message(action: Any, agent: str, dead: bool, num_actions: int) -> str:
    """Return the error for an action outside the action space (an AssertionError, as PettingZoo's AssertOutOfBoundsWrapper raises)."""
    if dead:
        return f"action is not in action space: {agent} is terminated, so its action must be None, got {action!r}"
    if action is None:
        return f"action is not in action space: None is only for a terminated agent; {agent} is to act: give an int in 0..{num_actions - 1}"
    return f"action is not in action space: got {action!r} ({type(action).__name__}) for {agent}; allowed: an int in 0..{num_actions - 1} (Discrete({num_actions}))"


def log_to_json(log: Iterable[tuple[str, int]], seed: int | None = None, **env_kwargs: Any) -> str:
    """Return a JSON text holding ``seed``, the env arguments and the log."""
    return json.dumps({"seed": seed, "env_kwargs": env_kwargs, "log": [[a, int(x)] for a, x in log]})


def log_from_json(text: str) -> tuple[int | None, list[tuple[str, int]], dict[str, Any]]:
    """Return ``(seed, log, env_kwargs)`` read from :func:`log_to_json`'s text."""
    data = json.loads(text)
    return data.get("seed"), [(a, int(x)) for a, x in data["log"]], dict(data.get("env_kwargs", {}))


__all__ = ["ILLEGAL_REWARD", "ClassicWrapper", "IllegalActionError", "log_from_json", "log_to_json"]

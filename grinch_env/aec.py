"""PettingZoo's classic wrapper stack in one class, shared by every game's ``env()``.

:class:`ClassicWrapper` behaves as ``OrderEnforcingWrapper(AssertOutOfBoundsWrapper(
TerminateIllegalWrapper(env, illegal_reward=-1)))`` around any AEC env with a
``Discrete`` action space, with the hot methods (``last``, ``step``,
``agent_iter``) on a slotted object.  A game's ``raw_env`` opts into the fast
path by subclassing ``GameEnv`` with an ``env_name`` (``class raw_env(GameEnv,
env_name="..."))``, which sets ``raw_env._fast_loop_class = raw_env``) and providing
``_game`` and ``_encoder.observe(game, seat)``: then ``last`` reads the encoder
directly and ``step`` (after the wrapper's own checks) calls
:meth:`GameEnv._step_alive`, the one step path of every env, so the rules run
through ``Game.step`` and the bookkeeping through the same code either way.  A
subclass of it, or any other env, goes through its own ``observe``/``step``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from importlib import import_module
from typing import Any

import numpy as np
from gymnasium import spaces
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


# PettingZoo classic's modes: "human" opens a pygame window, "rgb_array" returns uint8[H, W, 3] (the game's
# render.draw_table), and "ansi" returns the table as text.
RENDER_MODES = ("ansi", "human", "rgb_array")


class GameEnv(AECEnv):
    """The AEC glue every game's ``raw_env`` shares: reset and seeding, observe, step, rewards, render, extras.

    A subclass names in its class line its ``env_name``, ``render_fps``, ``render_module`` and ``game_class`` (its rules
    engine: ``game_class(num_players, rng=..., **options)``
    with ``current``, ``step``, ``rewards(reward_mode)``, ``legal_actions``, ``render``, ``state_dict``), checks its
    arguments with :meth:`_check_modes`, then calls :meth:`_setup` with a first game, its options and the observation
    box (and the render seat).  Rewards are 0 until the game ends, then ``game.rewards(reward_mode)`` for every seat.

    Recording: ``action_log`` lists the ``(agent, action)`` pairs of the current game and ``game_seed`` the seed of its
    shuffles, so ``reset(options={"game_seed": s})`` starts that game again (each game's ``replay.play_log`` replays a log).
    """

    game_class: type

    def __init_subclass__(cls, env_name: str | None = None, render_fps: int = 1, game_class: type | None = None,
                          render_module: str | None = None, **kwargs: Any) -> None:
        """``class raw_env(GameEnv, env_name="<name>_v0", render_fps=k, game_class=Game, render_module="grinch_env.<game>.render")``
        gives a game's env its metadata, its rules engine, its picture module and :class:`ClassicWrapper`'s fast path.

        Only that class runs the fast path: a subclass of it (which may
        override ``observe`` or ``step``) goes through its own methods.
        """
        super().__init_subclass__(**kwargs)
        if game_class is not None:
            cls.game_class = game_class
        if render_module is not None:
            cls.render_module = render_module
        if env_name is not None:
            cls.metadata = {"render_modes": list(RENDER_MODES), "name": env_name, "is_parallelizable": False, "render_fps": render_fps}
            cls._fast_loop_class = cls

    @staticmethod
    def _check_modes(reward_mode: Any, render_mode: Any, reward_modes: tuple[str, ...]) -> None:
        if not isinstance(reward_mode, str) or reward_mode not in reward_modes:
            raise ValueError(f"reward_mode must be one of {reward_modes}, got {reward_mode!r}")
        if render_mode is not None and (not isinstance(render_mode, str) or render_mode not in RENDER_MODES):
            raise ValueError(f"render_mode must be None or one of {RENDER_MODES}, got {render_mode!r}")

    def _setup(self, game: Any, options: dict[str, Any], observation: spaces.Box, num_actions: int, encoder: Any,
               reward_mode: str, render_mode: str | None, render_seat: Any = None) -> None:
        """Set the spaces, agents, render seat and first (unseeded) state from a validated first ``game`` and its ``options``."""
        AECEnv.__init__(self)
        self._game = game
        self.num_players = game.num_players
        self._options = options
        self._encoder = encoder
        self.reward_mode = reward_mode
        self.render_mode = render_mode
        self.possible_agents = [f"player_{i}" for i in range(self.num_players)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        obs_space = spaces.Dict({"observation": observation, "action_mask": spaces.Box(0, 1, (num_actions,), np.int8)})
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(num_actions) for a in self.possible_agents}
        self.agents: list[str] = []
        self._seed_rng = np.random.default_rng()
        self.game_seed: int | None = None
        self.action_log: list[tuple[str, int]] = []
        self._set_render_seat(render_seat)

    def __getattr__(self, name: str) -> Any:
        # Only reached when normal lookup fails: the per-game attributes that reset() creates, read before reset().
        if name in _RESET_FIRST:
            raise AttributeError(f"raw_env.{name} does not exist before reset(): call env.reset() (optionally with a seed) first")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # -------------------------------------------------------------- AEC API
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self._seed_rng = np.random.default_rng(seed)
        game_seed = None if options is None else options.get("game_seed")
        if game_seed is None:
            # Each game gets its own seed drawn from the seeded stream, so that
            # reset(seed) then reset() gives a reproducible sequence of games,
            # and game_seed alone reproduces the current game's deals.
            game_seed = int(self._seed_rng.integers(2**63))
        elif isinstance(game_seed, bool) or not isinstance(game_seed, (int, np.integer)) or game_seed < 0:
            raise ValueError(f"options['game_seed'] must be an int >= 0 (a raw_env.game_seed), got {game_seed!r}")
        self.game_seed = int(game_seed)
        self._game = self.game_class(self.num_players, rng=np.random.default_rng(self.game_seed), **self._options)
        self.action_log = []
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[self._game.current]
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        return self._encoder.observe(self._game, self.agent_name_mapping[agent])

    def step(self, action: int | None) -> None:
        try:
            agent = self.agent_selection
        except AttributeError:  # set by reset(); a try costs nothing on the normal path
            raise RuntimeError("raw_env.step() before reset(): call env.reset() (optionally with a seed) first") from None
        if not self.agents:  # every agent is done and stepped out: nothing to do (PettingZoo's wrappers warn the same way)
            EnvLogger.warn_step_after_terminated_truncated()
            return
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if type(action) is not int and isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer):
            action = int(action)  # a 0-d integer array (tensor.argmax().numpy()) is an action, as Discrete.contains says
        self._step_alive(agent, action)

    def _step_alive(self, agent: str, action: int) -> None:
        """Apply ``agent``'s action through the rules (``agent`` is to act and not terminated), record it, then hand the turn on or end the game.

        The one step path: ``step`` and :class:`ClassicWrapper`'s fast loop both come here.
        """
        game = self._game
        game.step(action)  # raises IllegalActionError naming the phase, the action and the legal actions
        self.action_log.append((agent, action if type(action) is int else int(action)))
        self._cumulative_rewards[agent] = 0.0
        current = game.current
        if current is not None:
            # Rewards stay zero until the end, so there is nothing to accumulate here.
            self.agent_selection = self.possible_agents[current]
        else:
            for a, r in zip(self.possible_agents, game.rewards(self.reward_mode)):
                self.rewards[a] = r
                self.terminations[a] = True
            self._accumulate_rewards()
            self.agent_selection = agent
        if self.render_mode == "human":
            self.render()

    # --------------------------------------------------------------- render
    render_module: str = ""
    """The game's picture module (``"grinch_env.<game>.render"``: ``draw_table``, ``action_text``), imported on first use."""
    render_seat: int | None = None

    def _set_render_seat(self, render_seat: Any) -> None:
        """Set whose view ``render()`` draws: ``None`` (the spectator, every card shown) or a seat."""
        from grinch_env.rendering import check_seat

        self.render_seat = check_seat(render_seat, self.num_players)
        self._window = None

    def last_action_text(self) -> str | None:
        """Return the last logged action in words (``"player_1: discard W3'"``), or ``None`` before the first."""
        if not self.action_log:
            return None
        agent, action = self.action_log[-1]
        return import_module(self.render_module).action_text(self.num_players, self.agent_name_mapping[agent], action)

    def render(self) -> str | np.ndarray | None:
        """Return the table as text (``"ansi"``) or ``uint8[H, W, 3]`` (``"rgb_array"``), or show it in a window (``"human"``).

        The picture is ``render_seat``'s view (``None``: the spectator's).
        """
        if self.render_mode is None:
            import gymnasium

            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        if self.render_mode == "ansi":
            return self._game.render(seat=self.render_seat)
        frame = import_module(self.render_module).draw_table(self._game, self.render_seat, self.last_action_text())
        if self.render_mode == "rgb_array":
            return frame
        if getattr(self, "_window", None) is None:
            from grinch_env.rendering import HumanWindow

            self._window = HumanWindow(self.metadata["name"], self.metadata["render_fps"])
        self._window.show(frame)
        return None

    def close(self) -> None:
        window = getattr(self, "_window", None)
        if window is not None:
            window.close()
            self._window = None

    # ------------------------------------------------------------- extras
    @property
    def game(self) -> Any:
        """The rules engine's state (true state: hidden cards included)."""
        return self._game

    def game_state(self) -> dict[str, Any]:
        """Return a JSON-serialisable snapshot of the true state (hidden cards included)."""
        return self._game.state_dict()

    def legal_actions(self, agent: str | None = None) -> list[int]:
        """Return the legal actions of ``agent`` (default: the agent to act)."""
        agent = self.agent_selection if agent is None else agent
        if self._game.current != self.agent_name_mapping[agent]:
            return []
        return self._game.legal_actions()


def classic_env(raw_env: type[GameEnv]) -> Any:
    """Return a game's ``env(**kwargs)`` factory: its ``raw_env(**kwargs)`` wrapped in :class:`ClassicWrapper`."""

    def env(**kwargs: Any) -> ClassicWrapper:
        """Return the environment wrapped like PettingZoo's classic environments (see :class:`ClassicWrapper`).

        An illegal action ends the game with reward -1 for the offender (and a
        warning), an action outside the ``Discrete`` action space is an
        assertion error, and calling ``step``/``observe`` before ``reset`` is an error.
        """
        return ClassicWrapper(raw_env(**kwargs))

    env.__module__ = raw_env.__module__
    env.__qualname__ = "env"
    return env


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
    ``step`` its :meth:`GameEnv._step_alive` directly (methods replaced on the
    instance later are not seen; wrap a subclass instead).
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

    __slots__ = ("env", "fast", "encoder", "step_alive", "num_actions", "illegal_reward", "has_reset", "has_updated", "terminated")

    def __init__(self, wrapper: ClassicWrapper, env: AECEnv, illegal_reward: float) -> None:
        self.env = env
        # Our raw_env (not a subclass that may override observe or step) is run through its fast path.
        self.fast = getattr(env, "_fast_loop_class", None) is type(env)
        self.encoder = env._encoder if self.fast else None
        # Bound once: a raw_env has __getattr__, so looking the method up at every step costs as much as the bookkeeping.
        self.step_alive = env._step_alive if self.fast else None
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
        # Fast path for plain ints; anything else is what Discrete(n).contains accepts (numpy integers, 0-d integer
        # arrays) less bools, as a Python int, or an error (a huge int is out of range, not an OverflowError).
        if not (type(action) is int and 0 <= action < self.num_actions) and not (action is None and dead):
            index = action_index(action, self.num_actions)
            if index is None:
                raise AssertionError(_bad_action_message(action, agent, dead, self.num_actions))
            action = index
        if dead:
            (e if self.fast else e.unwrapped)._was_dead_step(action)
            return
        try:
            if self.fast:
                self.step_alive(agent, action)  # raw_env.step from here on (GameEnv._step_alive): its checks are done above
            else:
                e.step(action)
        except IllegalActionError:
            self._terminate_illegal(agent)

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


def action_index(action: Any, num_actions: int) -> int | None:
    """Return ``action`` as a Python int when it is an action of ``Discrete(num_actions)``, else None.

    Accepted, as Gymnasium's ``Discrete.contains`` accepts them: Python ints, numpy integers and 0-d integer
    arrays, in ``0..num_actions - 1``.  Refused: bools (``Discrete.contains(True)`` is true, but a bool is no
    move), floats, ``None``, other arrays, and integers out of range however large.
    """
    if isinstance(action, (bool, np.bool_)):
        return None
    if isinstance(action, (int, np.integer)):
        value = int(action)
    elif isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer):
        value = int(action)
    else:
        return None
    return value if 0 <= value < num_actions else None


def _bad_action_message(action: Any, agent: str, dead: bool, num_actions: int) -> str:
    """Return the error for an action outside the action space (an AssertionError, as PettingZoo's AssertOutOfBoundsWrapper raises)."""
    if dead:
        return f"action is not in action space: {agent} is terminated, so its action must be None, got {action!r}"
    if action is None:
        return f"action is not in action space: None is only for a terminated agent; {agent} is to act: give an int in 0..{num_actions - 1}"
    kind = "bool: a bool is not an action" if isinstance(action, (bool, np.bool_)) else type(action).__name__
    return f"action is not in action space: got {action!r} ({kind}) for {agent}; allowed: an int in 0..{num_actions - 1} (Discrete({num_actions}))"


def log_to_json(log: Iterable[tuple[str, int]], seed: int | None = None, **env_kwargs: Any) -> str:
    """Return a JSON text holding ``seed``, the env arguments and the log."""
    return json.dumps({"seed": seed, "env_kwargs": env_kwargs, "log": [[a, int(x)] for a, x in log]})


def log_from_json(text: str) -> tuple[int | None, list[tuple[str, int]], dict[str, Any]]:
    """Return ``(seed, log, env_kwargs)`` read from :func:`log_to_json`'s text."""
    data = json.loads(text)
    return data.get("seed"), [(a, _logged_action(i, a, x)) for i, (a, x) in enumerate(data["log"])], dict(data.get("env_kwargs", {}))


def _logged_action(i: int, agent: Any, action: Any) -> int:
    """Return a JSON log entry's action; a float (2.7, or 3.0) or a bool is an error, never truncated to an int."""
    if type(action) is not int:
        raise ValueError(f"log entry {i} ({agent}, {action!r}): the action must be a JSON integer, got {type(action).__name__} {action!r}")
    return action


def replay_log(make_env: Any, seed: int | None, log: Iterable[tuple[str, int]], *, game_seed: int | None = None, **env_kwargs: Any) -> Any:
    """Return ``make_env(**env_kwargs)`` (a game's ``raw_env``) reset with ``seed`` (or ``game_seed``) and stepped through ``log``.

    Raises ``ValueError`` if an entry's agent is not the one to act or its
    action is illegal at that point (the message names the entry).
    """
    if seed is None and game_seed is None:
        raise ValueError("play_log needs the reset seed or the game_seed of the recorded game, got neither")
    env = make_env(**env_kwargs)
    env.reset(seed=seed, options=None if game_seed is None else {"game_seed": game_seed})
    for i, entry in enumerate(log):
        try:
            agent, action = entry
        except (TypeError, ValueError):
            raise ValueError(f"log entry {i} must be a pair (agent, action), got {entry!r}") from None
        if not env.agents:
            raise ValueError(f"log entry {i} ({agent}, {action}): the game is already over")
        if agent != env.agent_selection:
            raise ValueError(f"log entry {i} ({agent}, {action}): {env.agent_selection} is to act, not {agent}")
        if env.terminations[agent]:
            env.step(None)
            continue
        try:
            env.step(action)
        except ValueError as err:  # IllegalActionError names the phase and the legal actions
            raise ValueError(f"log entry {i} ({agent}, {action}): {err}") from None
    return env


__all__ = ["ILLEGAL_REWARD", "RENDER_MODES", "ClassicWrapper", "GameEnv", "IllegalActionError", "action_index", "log_from_json", "log_to_json", "replay_log"]

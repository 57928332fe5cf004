"""PettingZoo AEC environment for *Grinch Grow Your Heart* (glue over :mod:`grinch_env.game`).

Creation::

    import grinch_env
    env = grinch_env.env(num_players=4, render_mode="ansi")
    env.reset(seed=7)
    for agent in env.agent_iter():
        obs, reward, termination, truncation, info = env.last()
        action = None if termination or truncation else policy(obs["observation"], obs["action_mask"])
        env.step(action)

=================  ==========================================================
Agents             ``player_0`` .. ``player_{n-1}`` (seat ``i`` is ``player_i``), n = 2..6
Action space       ``Discrete(62)`` for every table size (below)
Observation space  ``Dict(observation=Box(0, 1, (1337,), float32),
                   action_mask=Box(0, 1, (62,), int8))``
Import             ``grinch_env.env(...)`` / ``grinch_env.raw_env(...)``
=================  ==========================================================

Actions
-------
=========  ==================================================================
``0..47``  discard the card with that canonical id (``suit = c // 12``,
           ``rank = (c % 12) // 2 + 1``, ``copy = c % 2``)
``48``     draw the top card of the draw pile (Grinch only)
``49 + j`` draw the top card of the discard pile of the player ``j`` seats to
           the actor's left, ``j = 0`` (own pile) .. ``5`` (Grinch only)
``55 + k`` score the hand in row ``k``: 0 Wreaths, 1 Noise, 2 Ornaments,
           3 Presents, 4 Rainbow, 5 Match, 6 Run
=========  ==================================================================

A Who's two draws from the draw pile happen automatically when its turn
begins; the Grinch's two draws are two actions, then one discard action.

Observation
-----------
``observation`` is encoded from the observer's seat (own features first, the
others by relative seat, absent seats zero); its index table is in
:mod:`grinch_env.encoding`.  ``action_mask[a] == 1`` exactly when ``a`` is
legal for the agent to act; it is all zeros for the others.

Rewards
-------
Zero until the game ends.  Then, with ``reward_mode="win"`` (default,
zero-sum): the players with the highest total share +1, the others share -1
(each winner ``+1/w``, each loser ``-1/(n-w)``); if every player ties, all get
0.  With ``reward_mode="margin"`` (zero-sum too): ``(own total - mean of the
others' totals) / 100``.

Episode end
-----------
After the scoring of the last round (6 rounds for 2, 3 and 6 players, 4 for
4 players, 5 for 5); every agent is then terminated.  There is no truncation:
a game has a fixed number of decisions (:func:`grinch_env.game.decisions_per_game`).

Arguments
---------
``num_players``   2..6 (default 4).
``bonus_layout``  ``"standard"`` (default), ``"none"`` or a table
                  ``{card_id: (points, suit, count)}``.
``first_grinch``  seat of the first round's Grinch (default 0, the "oldest player").
``num_rounds``    rounds to play (default: the rules' number for the table size).
``reward_mode``   ``"win"`` (default) or ``"margin"``.
``render_mode``   ``None``, ``"ansi"`` (``render()`` returns the table as text)
                  or ``"human"`` (prints it).

Wrappers
--------
``env()`` wraps ``raw_env`` in :class:`ClassicWrapper`, one class with the
conventions of PettingZoo's classic stack (``OrderEnforcingWrapper``,
``AssertOutOfBoundsWrapper``, ``TerminateIllegalWrapper(illegal_reward=-1)``):
``step``/``observe``/``render`` before ``reset`` raise, an action outside
``Discrete(62)`` fails an assertion, and an illegal action ends the game with
-1 for the offender, 0 for the others and a warning.  ``raw_env.step`` instead
raises :class:`~grinch_env.game.IllegalActionError` naming the phase, the
action and the legal actions.

Recording and replay
--------------------
``raw_env.action_log`` lists the ``(agent, action)`` pairs of the current game
and ``raw_env.game_seed`` the seed of its deck shuffles
(``reset(options={"game_seed": s})`` starts that game again);
:func:`grinch_env.replay.play_log` replays a log.

Version history
---------------
* v0: initial release.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers import BaseWrapper

from grinch_env.encoding import OBS_SIZE, Encoder
from grinch_env.game import NUM_ACTIONS, Game, IllegalActionError

REWARD_MODES = ("win", "margin")
RENDER_MODES = ("ansi", "human")
MARGIN_SCALE = 100.0
ILLEGAL_REWARD = -1.0


def terminal_rewards(totals: list[int], reward_mode: str = "win") -> list[float]:
    """Return every seat's terminal reward for the final ``totals`` under ``reward_mode``."""
    n = len(totals)
    if reward_mode == "win":
        best = max(totals)
        winners = [t == best for t in totals]
        w = sum(winners)
        if w == n:
            return [0.0] * n
        return [1.0 / w if is_winner else -1.0 / (n - w) for is_winner in winners]
    if reward_mode == "margin":
        total = sum(totals)
        return [(t - (total - t) / (n - 1)) / MARGIN_SCALE for t in totals]
    raise ValueError(f"reward_mode must be one of {REWARD_MODES}, got {reward_mode!r}")


class raw_env(AECEnv):  # noqa: N801 - PettingZoo's naming convention
    metadata = {
        "render_modes": list(RENDER_MODES),
        "name": "grinch_grow_your_heart_v0",
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(
        self,
        num_players: int = 4,
        bonus_layout: str | Mapping = "standard",
        first_grinch: int = 0,
        num_rounds: int | None = None,
        reward_mode: str = "win",
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        if not isinstance(reward_mode, str) or reward_mode not in REWARD_MODES:
            raise ValueError(f"reward_mode must be one of {REWARD_MODES}, got {reward_mode!r}")
        if render_mode is not None and (not isinstance(render_mode, str) or render_mode not in RENDER_MODES):
            raise ValueError(f"render_mode must be None or one of {RENDER_MODES}, got {render_mode!r}")
        # Validates num_players, first_grinch, num_rounds and bonus_layout with clear errors.
        self._game = Game(num_players, bonus_layout=bonus_layout, first_grinch=first_grinch, num_rounds=num_rounds, rng=0)
        self.num_players = self._game.num_players
        self._options = dict(bonus_layout=self._game.layout, first_grinch=self._game.first_grinch, num_rounds=self._game.num_rounds)
        self._encoder = Encoder()
        self.reward_mode = reward_mode
        self.render_mode = render_mode
        self.possible_agents = [f"player_{i}" for i in range(self.num_players)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32),
                "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(NUM_ACTIONS) for a in self.possible_agents}
        self.agents: list[str] = []
        self._seed_rng = np.random.default_rng()
        self.game_seed: int | None = None
        self.action_log: list[tuple[str, int]] = []

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
        self._game = Game(self.num_players, rng=np.random.default_rng(self.game_seed), **self._options)
        self.action_log = []
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[self._game.current]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        return self._encoder.observe(self._game, self.agent_name_mapping[agent])

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._step_alive(agent, action)

    def _step_alive(self, agent: str, action: int) -> None:
        """Apply ``agent``'s action (``agent`` is the agent to act and not terminated)."""
        self._game.step(action)  # raises IllegalActionError naming the phase, the action and the legal actions
        self._after_step(agent, action)

    def _after_step(self, agent: str, action: int) -> None:
        """Record ``agent``'s applied ``action``, then hand the turn on or end the game (ClassicWrapper inlines the usual case)."""
        game = self._game
        self.action_log.append((agent, action if type(action) is int else int(action)))
        self._cumulative_rewards[agent] = 0.0
        current = game.current
        if current is None:
            for a, r in zip(self.possible_agents, terminal_rewards(game.totals, self.reward_mode)):
                self.rewards[a] = r
                self.terminations[a] = True
            self._accumulate_rewards()
            self.agent_selection = agent
        else:
            # Rewards stay zero until the end, so there is nothing to accumulate here.
            self.agent_selection = self.possible_agents[current]
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | None:
        if self.render_mode is None:
            import gymnasium

            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        text = self._game.render()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass

    # ------------------------------------------------------------- extras
    @property
    def game(self) -> Game:
        """The rules engine's state (true state: hidden information included)."""
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

    def __init__(self, env: raw_env, illegal_reward: float = ILLEGAL_REWARD) -> None:
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

    __slots__ = ("env", "fast", "encoder", "illegal_reward", "has_reset", "has_updated", "terminated")

    def __init__(self, wrapper: ClassicWrapper, env: AECEnv, illegal_reward: float) -> None:
        self.env = env
        # Our raw_env (not a subclass that may override observe or step) is run through its fast path.
        self.fast = type(env) is raw_env
        self.encoder = env._encoder if self.fast else None
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
        if not (type(action) is int and 0 <= action < NUM_ACTIONS):
            assert (action is None and dead) or e.action_space(agent).contains(action), "action is not in action space"
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


def env(**kwargs: Any) -> ClassicWrapper:
    """Return the environment wrapped like PettingZoo's classic environments (see :class:`ClassicWrapper`).

    An illegal action ends the game with reward -1 for the offender (and a
    warning), an action outside ``Discrete(62)`` is an assertion error, and
    calling ``step``/``observe`` before ``reset`` is an error.
    """
    return ClassicWrapper(raw_env(**kwargs))

"""Gymnasium single-agent view of either game: one learner seat, the other seats played by agent specs.

Creation (``import grinch_env`` registers both ids; the ``grinch_env:``
prefix makes Gymnasium import the package first, for code that has not)::

    import gymnasium
    env = gymnasium.make("grinch_env:grinch_env/GrinchGrowYourHeart-v0", num_players=4, opponents=["greedy"])
    env = gymnasium.make("grinch_env:grinch_env/GnomingARound-v0", num_players=5, opponents=["greedy", "random"] * 2,
                         render_mode="rgb_array")
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(int(info["action_mask"].nonzero()[0][0]))

=================  ==========================================================
Ids                ``grinch_env/GrinchGrowYourHeart-v0`` (``game="grinch"``),
                   ``grinch_env/GnomingARound-v0`` (``game="gnoming"``)
Observation space  the learner's ``observation`` box of the game's AEC env
                   (Grinch ``Box(0, 1, (1337,))``, Gnoming ``(1046,)``),
                   always at a learner decision
Action space       the AEC env's (Grinch ``Discrete(62)``, Gnoming ``Discrete(15)``)
Action mask        ``env.action_masks()`` (bool, for sb3-contrib's MaskablePPO)
                   and ``info["action_mask"]`` (int8)
Reward             0 until the game ends, then the learner seat's terminal
                   reward (the game's ``reward_mode``)
Episode end        one full game (terminated); never truncated
Render             ``"rgb_array"`` / ``"human"`` / ``"ansi"`` as the AEC env;
                   ``render_seat="learner"`` (default) draws the learner's view,
                   ``None`` the spectator's, an int that seat's
=================  ==========================================================

Arguments: ``game`` (``"grinch"`` or ``"gnoming"``), ``num_players`` (the
game's table sizes; default its default), ``opponents`` (one agent spec or
object for every other seat, or a list of them: one entry, repeated, or
exactly ``num_players - 1`` entries in seat order after the learner; specs go
through :func:`grinch_env.agents.make_agent`, so ``"random"``, ``"greedy"``,
``"expectimax:samples=32"`` and checkpoint paths work), ``learner_seat`` (a
seat, or ``None``: drawn at every reset), ``reward_mode``, ``render_mode``,
``render_seat``, and every other keyword is the game's own option
(``bonus_layout`` for the Grinch, ``discard_take`` for Gnoming, ...), passed
to its AEC env.  An illegal action ends the episode with reward -1 and
``info["illegal_action"] = True``, as the PettingZoo ``env()`` wrapper does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from grinch_env.aec import RENDER_MODES
from grinch_env.games import get_game

ILLEGAL_ACTION_REWARD = -1.0
LEARNER = "learner"
ENV_IDS = {"grinch": "grinch_env/GrinchGrowYourHeart-v0", "gnoming": "grinch_env/GnomingARound-v0"}


class GameGymEnv(gymnasium.Env):
    """One seat of a game as a Gymnasium env (see the module docstring)."""

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 2}

    def __init__(
        self,
        game: str = "grinch",
        num_players: int | None = None,
        opponents: Any = ("random",),
        learner_seat: int | None = None,
        reward_mode: str | None = None,
        render_mode: str | None = None,
        render_seat: int | str | None = LEARNER,
        **game_options: Any,
    ) -> None:
        self.spec_game = spec = get_game(game)
        n = spec.default_players if num_players is None else num_players
        self.reward_mode = spec.reward_modes[0] if reward_mode is None else reward_mode
        # The AEC env checks num_players, reward_mode, render_mode and the game's options with its clear errors.
        self._env = spec.raw_env(num_players=n, reward_mode=self.reward_mode, render_mode=render_mode, **game_options)
        self.num_players = n = self._env.num_players
        if learner_seat is not None and (isinstance(learner_seat, bool) or not isinstance(learner_seat, (int, np.integer)) or not 0 <= learner_seat < n):
            raise ValueError(f"learner_seat must be None or a seat in 0..{n - 1}, got {learner_seat!r}")
        if render_seat != LEARNER:
            self._env._set_render_seat(render_seat)  # checks it
        self.render_seat_option = render_seat
        self.render_mode = render_mode
        if isinstance(opponents, str) or not isinstance(opponents, Sequence):
            opponents = [opponents]
        if len(opponents) not in (1, n - 1):
            raise ValueError(f"opponents must hold 1 or num_players - 1 = {n - 1} agents or specs, got {len(opponents)}: {list(opponents)!r}")
        from grinch_env.agents import make_agent  # lazy: the agents import the encodings, not this module

        agent_options = {k: game_options[k] for k in spec.harness.AGENT_OPTIONS if k in game_options}
        specs = list(opponents) * (n - 1) if len(opponents) == 1 else list(opponents)
        # One object per seat, so that stateful agents never see two seats' games interleaved.
        self.opponents = [make_agent(s, num_players=n, game=spec.name, game_options=agent_options) if isinstance(s, str) else s for s in specs]
        if len(opponents) == 1 and not isinstance(opponents[0], str):
            self.opponents = [opponents[0]] * (n - 1)
        self.learner_seat_option = learner_seat
        self.learner_seat = 0 if learner_seat is None else int(learner_seat)
        agent = self._env.possible_agents[0]
        self.observation_space = self._env.observation_space(agent)["observation"]
        self.action_space = spaces.Discrete(int(self._env.action_space(agent).n))
        self._done = True

    # ----------------------------------------------------------------- helpers
    def _opponent_of(self, seat: int) -> Any:
        return self.opponents[(seat - self.learner_seat - 1) % self.num_players]

    def _play_opponents(self) -> None:
        """Let the other seats act until it is the learner's turn or the game is over."""
        env, g = self._env, self._env.game
        while not g.done and g.current != self.learner_seat:
            seat = g.current
            obs = env._encoder.observe(g, seat)
            env.step(int(self._opponent_of(seat).act(obs["observation"], obs["action_mask"])))

    def _observe(self) -> dict[str, np.ndarray]:
        return self._env._encoder.observe(self._env.game, self.learner_seat)

    def _info(self, obs: dict[str, np.ndarray]) -> dict[str, Any]:
        return {"action_mask": obs["action_mask"], "learner_seat": self.learner_seat}

    # ------------------------------------------------------------- Gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        rng = self.np_random
        if self.learner_seat_option is None:
            self.learner_seat = int(rng.integers(self.num_players))
        if self.render_seat_option == LEARNER:
            self._env.render_seat = self.learner_seat
        self._env.reset(options={"game_seed": int(rng.integers(2**63))})
        for agent in self.opponents:
            agent.reset(int(rng.integers(2**31)))
        self._done = False
        self._play_opponents()
        obs = self._observe()
        return obs["observation"], self._info(obs)

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self._done:
            raise RuntimeError("the episode is over: call reset() before step()")
        g = self._env.game
        if not g.is_legal(int(action)):
            self._done = True
            obs = self._observe()
            info = self._info(obs)
            info["illegal_action"] = True
            return obs["observation"], ILLEGAL_ACTION_REWARD, True, False, info
        self._env.step(int(action))
        # The opponents move until the learner's next decision, so the reward
        # is the learner's own and the observation returned is the learner's next.
        self._play_opponents()
        obs = self._observe()
        if g.done:
            self._done = True
            return obs["observation"], float(g.rewards(self.reward_mode)[self.learner_seat]), True, False, self._info(obs)
        return obs["observation"], 0.0, False, False, self._info(obs)

    def action_masks(self) -> np.ndarray:
        """Return the learner's legal actions as a bool array (all False once the game is over)."""
        return self._observe()["action_mask"].astype(bool)

    def render(self) -> str | np.ndarray | None:
        """Return or show the table as the AEC env's ``render()`` does (``render_seat``'s view)."""
        if self.render_mode is None:
            return None
        return self._env.render()

    def close(self) -> None:
        self._env.close()

    @property
    def game(self) -> Any:
        """The rules engine's true state (for tests and debugging; agents must not read it)."""
        return self._env.game

    @property
    def aec_env(self) -> Any:
        """The AEC ``raw_env`` this wrapper plays (its ``action_log`` and ``game_seed`` record the game)."""
        return self._env


__all__ = ["ENV_IDS", "GameGymEnv", "ILLEGAL_ACTION_REWARD"]


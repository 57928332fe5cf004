"""Gymnasium single-agent view of *Grinch Grow Your Heart*: one learner seat, the other seats played by agents.

Creation (the ``grinch_env:`` prefix makes Gymnasium import the package,
which registers the id; after ``import grinch_env`` the bare id works too;
Gymnasium 1.0 removed the entry-point plugins that registered ids without an import)::

    import gymnasium
    env = gymnasium.make("grinch_env:grinch_env/GrinchGrowYourHeart-v0", num_players=4, opponents=["greedy"])
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(int(info["action_mask"].nonzero()[0][0]))

=================  ==========================================================
Observation space  ``Box(0, 1, (1337,), float32)``: the learner's observation
                   (:mod:`grinch_env.grinch.encoding`), always at a learner decision
Action space       ``Discrete(62)`` (the AEC env's actions)
Action mask        ``env.action_masks()`` (bool[62], for sb3-contrib's
                   MaskablePPO) and ``info["action_mask"]`` (int8[62])
Reward             0 until the game ends, then the learner seat's terminal
                   reward (``reward_mode`` ``"win"`` or ``"margin"``)
Episode end        one full game (terminated); never truncated
=================  ==========================================================

Arguments: ``num_players`` (2..6), ``opponents`` (one agent spec or object
for every other seat, or a list of them: one entry, repeated, or exactly
``num_players - 1`` entries in seat order after the learner; specs go through
:func:`grinch_env.agents.make_agent`, so checkpoints work too),
``learner_seat`` (a seat, or ``None``: drawn at every reset), ``bonus_layout``,
``reward_mode``.  An illegal action ends the episode with reward -1 and
``info["illegal_action"] = True``, as the PettingZoo ``env()`` wrapper does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from grinch_env.grinch.encoding import OBS_SIZE, Scales, action_mask, encode
from grinch_env.grinch.game import NUM_ACTIONS, REWARD_MODES, Game, check_num_players, terminal_rewards

ILLEGAL_ACTION_REWARD = -1.0


class GrinchGymEnv(gymnasium.Env):
    """One seat of a Grinch game as a Gymnasium env (see the module docstring)."""

    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(
        self,
        num_players: int = 4,
        opponents: Any = ("random",),
        learner_seat: int | None = None,
        bonus_layout: str | Mapping = "standard",
        reward_mode: str = "win",
        render_mode: str | None = None,
    ) -> None:
        self.num_players = n = check_num_players(num_players)
        if reward_mode not in REWARD_MODES:
            raise ValueError(f"reward_mode must be one of {REWARD_MODES}, got {reward_mode!r}")
        if learner_seat is not None and (isinstance(learner_seat, bool) or not isinstance(learner_seat, (int, np.integer)) or not 0 <= learner_seat < n):
            raise ValueError(f"learner_seat must be None or a seat in 0..{n - 1}, got {learner_seat!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        if isinstance(opponents, str) or not isinstance(opponents, Sequence):
            opponents = [opponents]
        if len(opponents) not in (1, n - 1):
            raise ValueError(f"opponents must hold 1 or num_players - 1 = {n - 1} agents or specs, got {len(opponents)}: {list(opponents)!r}")
        from grinch_env.agents import make_agent  # lazy: the agents import the encoding, not this module

        specs = list(opponents) * (n - 1) if len(opponents) == 1 else list(opponents)
        # One object per seat, so that stateful agents never see two seats' games interleaved.
        self.opponents = [make_agent(s, num_players=n) if isinstance(s, str) else s for s in specs]
        if len(opponents) == 1 and not isinstance(opponents[0], str):
            self.opponents = [opponents[0]] * (n - 1)
        self.learner_seat_option = learner_seat
        self.reward_mode = reward_mode
        self.render_mode = render_mode
        self._game = Game(n, bonus_layout=bonus_layout, rng=0)
        self._layout = self._game.layout
        self._scales = Scales(self._layout)
        self.learner_seat = 0 if learner_seat is None else int(learner_seat)
        self.observation_space = spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32)
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self._done = True

    # ----------------------------------------------------------------- helpers
    def _opponent_of(self, seat: int) -> Any:
        return self.opponents[(seat - self.learner_seat - 1) % self.num_players]

    def _play_opponents(self) -> None:
        """Let the other seats act until it is the learner's turn or the game is over."""
        g = self._game
        while not g.done and g.current != self.learner_seat:
            seat = g.current
            g.step(int(self._opponent_of(seat).act(encode(g, seat, self._scales), action_mask(g, seat))))

    def _obs(self) -> np.ndarray:
        return encode(self._game, self.learner_seat, self._scales)

    def _info(self) -> dict[str, Any]:
        return {"action_mask": action_mask(self._game, self.learner_seat), "learner_seat": self.learner_seat}

    # ------------------------------------------------------------- Gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        rng = self.np_random
        if self.learner_seat_option is None:
            self.learner_seat = int(rng.integers(self.num_players))
        self._game = Game(self.num_players, bonus_layout=self._layout, rng=np.random.default_rng(rng.integers(2**63)))
        for agent in self.opponents:
            agent.reset(int(rng.integers(2**31)))
        self._done = False
        self._play_opponents()
        return self._obs(), self._info()

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self._done:
            raise RuntimeError("the episode is over: call reset() before step()")
        g = self._game
        if not g.is_legal(int(action)):
            self._done = True
            info = self._info()
            info["illegal_action"] = True
            return self._obs(), ILLEGAL_ACTION_REWARD, True, False, info
        g.step(int(action))
        # The opponents move until the learner's next decision, so the reward
        # is the learner's own and the observation returned is the learner's next.
        self._play_opponents()
        if g.done:
            self._done = True
            reward = terminal_rewards(g.totals, self.reward_mode)[self.learner_seat]
            return self._obs(), float(reward), True, False, self._info()
        return self._obs(), 0.0, False, False, self._info()

    def action_masks(self) -> np.ndarray:
        """Return the learner's legal actions as bool[62] (all False once the game is over)."""
        return action_mask(self._game, self.learner_seat).astype(bool)

    def render(self) -> str | None:
        if self.render_mode == "ansi":
            return self._game.render(seat=self.learner_seat)
        return None

    @property
    def game(self) -> Game:
        """The rules engine's true state (for tests and debugging; agents must not read it)."""
        return self._game


ENV_ID = "grinch_env/GrinchGrowYourHeart-v0"

__all__ = ["ENV_ID", "GrinchGymEnv"]

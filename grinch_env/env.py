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

Version history
---------------
* v0: initial release.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from grinch_env.encoding import OBS_SIZE, Scales, action_mask, encode
from grinch_env.game import NUM_ACTIONS, Game

REWARD_MODES = ("win", "margin")
RENDER_MODES = ("ansi", "human")
MARGIN_SCALE = 100.0


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
        if reward_mode not in REWARD_MODES:
            raise ValueError(f"reward_mode must be one of {REWARD_MODES}, got {reward_mode!r}")
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode must be None or one of {RENDER_MODES}, got {render_mode!r}")
        # Validates num_players, first_grinch, num_rounds and bonus_layout with clear errors.
        self._game = Game(num_players, bonus_layout=bonus_layout, first_grinch=first_grinch, num_rounds=num_rounds, rng=0)
        self.num_players = self._game.num_players
        self._options = dict(bonus_layout=self._game.layout, first_grinch=first_grinch, num_rounds=num_rounds)
        self._scales = Scales(self._game.layout)
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

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # -------------------------------------------------------------- AEC API
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self._seed_rng = np.random.default_rng(seed)
        # Each game gets its own generator drawn from the seeded stream, so that
        # reset(seed) then reset() gives a reproducible sequence of games.
        game_rng = np.random.default_rng(self._seed_rng.integers(2**63))
        self._game = Game(self.num_players, rng=game_rng, **self._options)
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[self._game.current]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self.agent_name_mapping[agent]
        return {
            "observation": encode(self._game, seat, self._scales),
            "action_mask": action_mask(self._game, seat),
        }

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self._game
        game.step(action)  # raises IllegalActionError naming the phase, the action and the legal actions
        self._cumulative_rewards[agent] = 0.0
        if game.current is None:
            for a, r in zip(self.possible_agents, terminal_rewards(game.totals, self.reward_mode)):
                self.rewards[a] = r
                self.terminations[a] = True
            self.agent_selection = agent
        else:
            self.agent_selection = self.possible_agents[game.current]
        self._accumulate_rewards()
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


def env(**kwargs: Any) -> AECEnv:
    """Return the environment wrapped like PettingZoo's classic environments.

    An illegal action ends the game with reward -1 for the offender (and a
    warning), an action outside ``Discrete(62)`` is an assertion error, and
    calling ``step``/``observe`` before ``reset`` is an error.
    """
    e = raw_env(**kwargs)
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=-1)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    e = wrappers.OrderEnforcingWrapper(e)
    return e

"""PettingZoo AEC environment for *Grinch Grow Your Heart* (glue over :mod:`grinch_env.grinch.game`).

Creation::

    import grinch_env
    env = grinch_env.grinch.env(num_players=4, render_mode="ansi")
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
Import             ``grinch_env.grinch.env(...)`` / ``grinch_env.raw_env(...)``
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
:mod:`grinch_env.grinch.encoding`.  ``action_mask[a] == 1`` exactly when ``a`` is
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
a game has a fixed number of decisions (:func:`grinch_env.grinch.game.decisions_per_game`).

Arguments
---------
``num_players``   2..6 (default 4).
``bonus_layout``  ``"standard"`` (default), ``"none"`` or a table
                  ``{card_id: (points, suit, count)}``.
``first_grinch``  seat of the first round's Grinch (default 0, the "oldest player").
``num_rounds``    rounds to play (default: the rules' number for the table size).
``reward_mode``   ``"win"`` (default) or ``"margin"``.
``render_mode``   ``None``, ``"rgb_array"`` (``render()`` returns the table as
                  ``uint8[H, W, 3]``, :func:`grinch_env.grinch.render.draw_table`),
                  ``"human"`` (shows it in a pygame window) or ``"ansi"`` (text).
``render_seat``   whose view is rendered: ``None`` (default, the spectator:
                  every hand shown) or a seat (other hands face down but for
                  the cards known from discard piles).

Wrappers
--------
``env()`` wraps ``raw_env`` in :class:`ClassicWrapper`, one class with the
conventions of PettingZoo's classic stack (``OrderEnforcingWrapper``,
``AssertOutOfBoundsWrapper``, ``TerminateIllegalWrapper(illegal_reward=-1)``):
``step``/``observe``/``render`` before ``reset`` raise, an action outside
``Discrete(62)`` fails an assertion, and an illegal action ends the game with
-1 for the offender, 0 for the others and a warning.  ``raw_env.step`` instead
raises :class:`~grinch_env.grinch.game.IllegalActionError` naming the phase, the
action and the legal actions.

Recording and replay
--------------------
``raw_env.action_log`` and ``raw_env.game_seed`` (the seed of the deck
shuffles) record the current game, as in every game's env
(:class:`~grinch_env.aec.GameEnv`); :func:`grinch_env.grinch.replay.play_log`
replays a log.

Version history
---------------
* v0: initial release.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from gymnasium import spaces

from grinch_env.aec import GameEnv, classic_env
from grinch_env.grinch.encoding import OBS_SIZE, Encoder
from grinch_env.grinch.game import NUM_ACTIONS, REWARD_MODES, Game


class raw_env(GameEnv, env_name="grinch_grow_your_heart_v0", render_fps=2, game_class=Game, render_module="grinch_env.grinch.render"):  # noqa: N801 - PettingZoo's naming convention

    def __init__(
        self,
        num_players: int = 4,
        bonus_layout: str | Mapping = "standard",
        first_grinch: int = 0,
        num_rounds: int | None = None,
        reward_mode: str = "win",
        render_mode: str | None = None,
        render_seat: int | None = None,
    ) -> None:
        self._check_modes(reward_mode, render_mode, REWARD_MODES)
        # Validates num_players, first_grinch, num_rounds and bonus_layout with clear errors.
        game = Game(num_players, bonus_layout=bonus_layout, first_grinch=first_grinch, num_rounds=num_rounds, rng=0)
        options = dict(bonus_layout=game.layout, first_grinch=game.first_grinch, num_rounds=game.num_rounds)
        self._setup(game, options, spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32), NUM_ACTIONS, Encoder(), reward_mode, render_mode, render_seat)


env = classic_env(raw_env)

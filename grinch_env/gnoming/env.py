"""PettingZoo AEC environment for *Gnoming A Round* (glue over :mod:`grinch_env.gnoming.game`).

Creation::

    import grinch_env.gnoming
    env = grinch_env.gnoming.env(num_players=4, render_mode="ansi")
    env.reset(seed=7)
    for agent in env.agent_iter():
        obs, reward, termination, truncation, info = env.last()
        mask = obs["action_mask"]  # or a policy of obs["observation"] and the mask
        action = None if termination or truncation else env.action_space(agent).sample(mask)
        env.step(action)
    env.close()

=================  ==========================================================
Agents             ``player_0`` .. ``player_{n-1}`` (seat ``i`` is ``player_i``), n = 3..7
Action space       ``Discrete(15)`` for every table size (below)
Observation space  ``Dict(observation=Box(low, high, (1046,), float32),
                   action_mask=Box(0, 1, (15,), int8))``; ``low``/``high``
                   are 0/1 except the totals (``[-1.59, 2.49]``), the round
                   scores (``[-1.06, 1.66]``) and the turn counter (up to
                   ``(cap + n - 1) / cap``)
Import             ``grinch_env.gnoming.env(...)`` / ``grinch_env.gnoming.raw_env(...)``
=================  ==========================================================

Actions
-------
=========  ==================================================================
``0..8``   slot ``p = 3*row + col`` of the actor's own layout: turn it face
           up (reveal, Hazard response) or place the held card there (play,
           bounce)
``9``      DRAW: take the top card of the draw pile
``10/11``  TAKE_A / TAKE_B: take the top card of discard pile A / B
``12/13``  DISCARD_A / DISCARD_B: discard the held card onto pile A / B; in a
           bounce, stop bouncing; a Hazard leaves the round (only ``12``)
``14``     PASS: decline a Hazard response
=========  ==================================================================

A decision with exactly one legal action is played by the engine and is not
asked (``raw_env.game.auto_log`` lists them).  Who decides what:

==========================  ============================  ================================================
phase                       who acts                      legal actions
==========================  ============================  ================================================
reveal                      each player, twice            own face-down slots
draw                        turn player                   ``9``; ``10``/``11`` if that pile's top can be placed
play (held from the draw)   turn player                   placeable slots, ``12``/``13`` by the pile rule
play (held from a pile)     turn player                   placeable slots (``discard_take="free"``: also ``12``/``13``)
bounce                      turn player                   slots not filled this turn, ``12``/``13``
discard                     turn player                   ``12``/``13`` (usually forced, so automatic)
Hazard response             others with >= 2 face-down    own face-down slots, ``14``
==========================  ============================  ================================================

Observation
-----------
``observation`` is encoded from the observer's seat (relative seats, absent
seats zero); its index table is the docstring of
:mod:`grinch_env.gnoming.encoding`.  Nobody ever holds private information,
so every seat sees the same public state, rotated.  ``action_mask[a] == 1``
exactly when ``a`` is legal for the agent to act; it is all zeros for the others.

Rewards
-------
Zero until the game ends.  Then, with ``reward_mode="win"`` (default,
zero-sum): the lowest total wins (tied leaders: the lowest third-round score;
still tied: shared); winners share +1, the others share -1; if every player
wins, all get 0.  With ``reward_mode="margin"`` (zero-sum): ``(mean of the
others' totals - own total) / 100``.

Episode end
-----------
After the scoring of the third round every agent is terminated.  There is no
truncation: the turn cap is a rule.  A game has at most
:data:`~grinch_env.gnoming.game.MAX_GAME_LENGTH` (10,410) decisions.

Arguments
---------
``num_players``           3..7 (default 4).
``first_player``          seat that starts round 0 (default 0, "the youngest player").
``start_rotation``        ``"rotate"`` (default: round r starts at ``first_player + r``) or ``"fixed"``.
``discard_take``          ``"must_place"`` (default: a card taken from a pile is placed) or ``"free"``.
``mulligan_lines``        ``"independent"`` (default: a Mulligan's value per line) or ``"single"``.
``max_turns_per_player``  turn cap per round is this times n (int >= 10, default 30).
``reward_mode``           ``"win"`` (default) or ``"margin"``.
``render_mode``           ``None``, ``"rgb_array"`` (``render()`` returns the table as ``uint8[H, W, 3]``,
                          :func:`grinch_env.gnoming.render.draw_table`), ``"human"`` (a pygame window) or ``"ansi"`` (text).
``render_seat``           whose view is rendered: ``None`` (default, the spectator: face-down cards shown, marked)
                          or a seat (every face-down card's back: nobody may see one).

Wrappers
--------
``env()`` wraps ``raw_env`` in :class:`ClassicWrapper`, the project's one-class
version of PettingZoo's classic stack: ``step``/``observe``/``render`` before
``reset`` raise, an action outside ``Discrete(15)`` fails an assertion, and an
illegal action ends the game with -1 for the offender, 0 for the others and a
warning.  ``raw_env.step`` instead raises
:class:`~grinch_env.games.IllegalActionError` naming the phase, the action and
the legal actions.

Version history
---------------
* v0: initial release.

Recording and replay
--------------------
As in every game's env (:class:`~grinch_env.aec.GameEnv`): ``raw_env.action_log``
and ``raw_env.game_seed`` record the current game, here the decisions asked
(not the automatic ones); :func:`grinch_env.gnoming.replay.play_log` replays it.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from grinch_env.aec import GameEnv, classic_env
from grinch_env.gnoming.encoding import OBS_SIZE, Encoder, observation_bounds
from grinch_env.gnoming.game import NUM_ACTIONS, REWARD_MODES, Game, check_options


class raw_env(GameEnv, env_name="gnoming_a_round_v0", render_fps=4, game_class=Game, render_module="grinch_env.gnoming.render"):  # noqa: N801 - PettingZoo's naming convention

    # The rule options spelled out as keywords, as in game.check_options (the env's signature is its documentation).
    def __init__(
        self,
        num_players: int = 4,
        first_player: int = 0,
        start_rotation: str = "rotate",
        discard_take: str = "must_place",
        mulligan_lines: str = "independent",
        max_turns_per_player: int = 30,
        reward_mode: str = "win",
        render_mode: str | None = None,
        render_seat: int | None = None,
    ) -> None:
        self._check_modes(reward_mode, render_mode, REWARD_MODES)
        opts = check_options(num_players, first_player, start_rotation, discard_take, mulligan_lines, max_turns_per_player)
        n = opts.pop("num_players")
        low, high = observation_bounds(n, opts["max_turns_per_player"])
        self._setup(Game(n, rng=0, **opts), opts, spaces.Box(low, high, (OBS_SIZE,), np.float32), NUM_ACTIONS, Encoder(), reward_mode, render_mode, render_seat)


env = classic_env(raw_env)


__all__ = ["env", "raw_env"]

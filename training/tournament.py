"""Tournament schedule and game playing: seat rotation, paired deals, one game's record.

Schedule (documented in ``docs/agents.md``): with ``k`` agents and ``n`` seats,
block ``b`` (``b = 0..k-1``) fills seat ``s`` with agent ``(b + s) % k`` and is
then rotated ``r = 0..n-1`` seats (seat ``s`` gets the block's seat
``(s + r) % n``).  Repeated line-ups are dropped, keeping first appearances;
the ``m`` line-ups left form one *cycle*.  Game ``i`` uses line-up
``i % m`` and the deal seed ``seed * 1_000_000 + i // m``: every line-up of a
cycle replays the same shuffles (paired deals).  Over whole cycles every agent
sits in every seat equally often and, because the Grinch passes left each
round, plays each role equally often too.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import numpy as np

from grinch_env.encoding import Encoder
from grinch_env.game import PHASE_SCORE, SCORE_BASE, Game

DEAL_STRIDE = 1_000_000


def lineups(num_agents: int, num_players: int) -> list[tuple[int, ...]]:
    """Return one cycle of line-ups (agent index per seat), in schedule order."""
    if num_agents < 1:
        raise ValueError(f"a tournament needs at least one agent, got {num_agents}")
    seen: dict[tuple[int, ...], None] = {}
    for b in range(num_agents):
        block = [(b + s) % num_agents for s in range(num_players)]
        for r in range(num_players):
            seen.setdefault(tuple(block[(s + r) % num_players] for s in range(num_players)), None)
    return list(seen)


def deal_seed(seed: int, cycle: int) -> int:
    """Return the deal seed of a cycle: every game of the cycle replays these shuffles."""
    return seed * DEAL_STRIDE + cycle


def agent_seed(seed: int, game: int, seat: int) -> int:
    """Return the seed an agent is reset with for one game and seat (independent of process count)."""
    return int(np.random.SeedSequence([seed, game, seat]).generate_state(1)[0])


def schedule(num_agents: int, num_players: int, num_games: int, seed: int = 0) -> list[tuple[int, tuple[int, ...]]]:
    """Return ``(deal_seed, lineup)`` for each game ``0..num_games-1``."""
    cycle = lineups(num_agents, num_players)
    m = len(cycle)
    return [(deal_seed(seed, i // m), cycle[i % m]) for i in range(num_games)]


def play_game(
    agents: Sequence[Any], num_players: int, deal: int, seeds: Sequence[int], bonus_layout="standard",
) -> dict[str, Any]:
    """Return the record of one game: final totals and, per round and seat, (Grinch?, row, points).

    ``agents[s]`` plays seat ``s`` and sees only :func:`~grinch_env.encoding.encode`'s output.
    """
    game = Game(num_players, rng=deal, bonus_layout=bonus_layout)
    # The env's incremental encoder: the game changes only through step() here, as in the env.
    encoder = Encoder()
    for agent, s in zip(agents, seeds):
        agent.reset(s)
    rounds: list[list[tuple[int, int, int]]] = [[(0, 0, 0)] * num_players for _ in range(game.num_rounds)]
    while not game.done:
        seat = game.current
        view = encoder.observe(game, seat)
        action = int(agents[seat].act(view["observation"], view["action_mask"]))
        if game.phase == PHASE_SCORE:
            rnd, grinch = game.round, game.grinch
            game.step(action)
            row = action - SCORE_BASE
            rounds[rnd][seat] = (int(seat == grinch), row, game.score_sheet[seat][row])
        else:
            game.step(action)
    return {"totals": game.totals[:], "winners": game.winners(), "rounds": rounds}


class Table:
    """Agent instances for each (agent, seat), built once per process."""

    def __init__(self, specs: Sequence[Any], num_players: int, bonus_layout="standard") -> None:
        self.specs = list(specs)
        self.num_players = num_players
        self.bonus_layout = bonus_layout
        self._cache: dict[tuple[int, int], Any] = {}

    def agent(self, index: int, seat: int) -> Any:
        key = (index, seat)
        if key not in self._cache:
            self._cache[key] = build_agent(self.specs[index], self.num_players, self.bonus_layout, copy_objects=seat > 0)
        return self._cache[key]


def build_agent(spec: Any, num_players: int, bonus_layout="standard", copy_objects: bool = False) -> Any:
    """Return an agent for ``spec``; built-ins get the game's bonus layout, objects are copied per seat."""
    from grinch_env.agents import AGENT_CLASSES, make_agent, parse_spec

    if not isinstance(spec, str):
        return copy.deepcopy(spec) if copy_objects else spec
    name, options = parse_spec(spec)
    if name in AGENT_CLASSES and bonus_layout != "standard":
        agent = AGENT_CLASSES[name](bonus_layout=bonus_layout, **options)
        agent.name = spec
        return agent
    return make_agent(spec, num_players=num_players)


def run_game(table: Table, index: int, seed: int, sched: tuple[int, tuple[int, ...]]) -> dict[str, Any]:
    """Return the record of game ``index`` of the schedule (a pure function of its arguments)."""
    deal, lineup = sched
    agents = [table.agent(a, s) for s, a in enumerate(lineup)]
    seeds = [agent_seed(seed, index, s) for s in range(table.num_players)]
    record = play_game(agents, table.num_players, deal, seeds, table.bonus_layout)
    record.update(index=index, deal=deal, lineup=list(lineup))
    return record

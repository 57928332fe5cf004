"""Tournament schedule and game playing: seat rotation, paired deals, one game's record.

Schedule (documented in ``docs/agents.md``): with ``k`` agents and ``n`` seats,
block ``b`` (``b = 0..k-1``) fills seat ``s`` with agent ``(b + s) % k`` and is
then rotated ``r = 0..n-1`` seats (seat ``s`` gets the block's seat
``(s + r) % n``).  Repeated line-ups are dropped, keeping first appearances;
the ``m`` line-ups left form one *cycle*.  Game ``i`` uses line-up
``i % m`` and the deal seed ``seed * 1_000_000 + i // m``: every line-up of a
cycle replays the same shuffles (paired deals).  Over whole cycles every agent
sits in every seat equally often and, because the Grinch passes left each
round, plays each role equally often too.  Games come from the game interface
(:mod:`grinch_env.games`), so one schedule serves every game.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from grinch_env.games import DEFAULT_GAME, GameSpec, get_game

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


def game_steps(
    agents: Sequence[Any], num_players: int, deal: int, seeds: Sequence[int], game: str | GameSpec = DEFAULT_GAME, *,
    record_actions: bool = False, **game_options: Any,
) -> Generator[tuple[Any, Any, Any], int, dict[str, Any]]:
    """Play one game as a generator: it yields ``(agent, observation, action_mask)`` at each decision, is sent the
    action, and returns the record of :func:`play_game` (``StopIteration.value``).  :func:`play_game` answers each
    request at once; :func:`run_games_lockstep` holds the requests of many games and answers them together."""
    spec = get_game(game)
    state = spec.new_game(num_players, deal, **game_options)
    # The env's incremental encoder: the game changes only through step() here, as in the env.
    encoder = spec.encoder()
    recorder = spec.recorder(state)
    for agent, s in zip(agents, seeds):
        agent.reset(s)
    actions: list[tuple[int, int]] = []
    while not state.done:
        seat = state.current
        view = encoder.observe(state, seat)
        action = int((yield agents[seat], view["observation"], view["action_mask"]))
        if record_actions:
            actions.append((seat, action))
        recorder.step(action)
    record = {"totals": list(state.totals), "winners": state.winners(), "rounds": recorder.rounds}
    if record_actions:
        record["actions"] = actions
    return record


def play_game(
    agents: Sequence[Any], num_players: int, deal: int, seeds: Sequence[int], game: str | GameSpec = DEFAULT_GAME, *,
    record_actions: bool = False, **game_options: Any,
) -> dict[str, Any]:
    """Return the record of one game: final totals, winners and, per round and seat, the game's round record (role, points, ...).

    ``agents[s]`` plays seat ``s`` and sees only the game's encoder output
    (its observation and mask), as in the environment.  With ``record_actions``
    the record also holds ``actions``: ``(seat, action)`` per decision, the
    env's ``action_log`` of the same game (:mod:`grinch_env.evaluation.logs`).
    """
    return _answer_each(game_steps(agents, num_players, deal, seeds, game, record_actions=record_actions, **game_options))


def _answer_each(steps: Generator[tuple[Any, Any, Any], int, dict[str, Any]]) -> dict[str, Any]:
    """Drive a :func:`game_steps` game to its end, each request answered at once by its agent's ``act``; return its record."""
    try:
        request = next(steps)
        while True:
            agent, observation, mask = request
            request = steps.send(int(agent.act(observation, mask)))
    except StopIteration as done:
        return done.value


class Table:
    """Agent instances for each (agent, seat), built once per process."""

    def __init__(self, specs: Sequence[Any], num_players: int, game: str | GameSpec = DEFAULT_GAME, game_options: Mapping[str, Any] | None = None) -> None:
        self.specs = list(specs)
        self.num_players = num_players
        self.game = get_game(game).name
        self.game_options = dict(game_options or {})
        self._cache: dict[tuple[int, int], Any] = {}

    def agent(self, index: int, seat: int) -> Any:
        key = (index, seat)
        if key not in self._cache:
            self._cache[key] = build_agent(self.specs[index], self.num_players, self.game, self.game_options, copy_objects=seat > 0)
        return self._cache[key]


def build_agent(spec: Any, num_players: int, game: str | GameSpec = DEFAULT_GAME, game_options: Mapping[str, Any] | None = None,
                copy_objects: bool = False) -> Any:
    """Return an agent for ``spec``; built-ins get the game options they take, objects are copied per seat."""
    from grinch_env.agents import make_agent

    if not isinstance(spec, str):
        return copy.deepcopy(spec) if copy_objects else spec
    return make_agent(spec, num_players=num_players, game=get_game(game).name, game_options=agent_options(game, game_options))


def agent_options(game: str | GameSpec, game_options: Mapping[str, Any] | None) -> dict[str, Any]:
    """Return the game options that the game's built-in agents take (its harness's ``AGENT_OPTIONS``, e.g. the Grinch's bonus layout)."""
    wanted = get_game(game).harness.AGENT_OPTIONS
    return {k: v for k, v in (game_options or {}).items() if k in wanted}


def run_game(table: Table, index: int, seed: int, sched: tuple[int, tuple[int, ...]], record_actions: bool = False) -> dict[str, Any]:
    """Return the record of game ``index`` of the schedule (a pure function of its arguments); ``record_actions`` as in :func:`play_game`."""
    return _scheduled(_answer_each(_table_game(table, index, seed, sched, record_actions)), index, sched)


def _table_game(table: Table, index: int, seed: int, sched: tuple[int, tuple[int, ...]], record_actions: bool) -> Generator:
    """Game ``index`` of the schedule as a :func:`game_steps` generator: its deal, the table's agents of its line-up, their seeds."""
    deal, lineup = sched
    agents = [table.agent(a, s) for s, a in enumerate(lineup)]
    seeds = [agent_seed(seed, index, s) for s in range(table.num_players)]
    return game_steps(agents, table.num_players, deal, seeds, table.game, record_actions=record_actions, **table.game_options)


def _scheduled(record: dict[str, Any], index: int, sched: tuple[int, tuple[int, ...]]) -> dict[str, Any]:
    """``record`` with the game's place in the schedule: its index, deal seed and line-up."""
    record.update(index=index, deal=sched[0], lineup=list(sched[1]))
    return record


def run_games_lockstep(make_table: Callable[[], Table], indices: Iterable[int], seed: int, sched: Sequence[tuple[int, tuple[int, ...]]],
                       width: int, record_actions: bool = False) -> Iterator[dict[str, Any]]:
    """Yield the records of games ``indices`` (in the order they finish), ``width`` games at a time in this process.

    Each of the ``width`` slots has its own :class:`Table` (``make_table()``) and plays its games one after another,
    as :func:`run_game` does, so every record equals :func:`run_game`'s.  Requests of agents that have a
    ``batch_key`` (not ``None``) are held until every slot waits on one, then answered per key in one call of
    ``type(agent).act_together(agents, observations, masks)`` (a network's forward passes over many games at
    once); other agents answer at once.
    """
    pending = iter(indices)
    tables = [make_table() for _ in range(max(1, int(width)))]
    live: dict[int, tuple[int, Generator, tuple[Any, Any, Any]]] = {}  # slot -> (game index, game, its open request)

    def advance(slot: int, index: int, steps: Generator, action: int | None) -> dict[str, Any] | None:
        """Send ``action`` (None: start the game), then answer unbatched requests until the slot waits on a batched
        agent (return None) or its game ends (return its record)."""
        try:
            request = next(steps) if action is None else steps.send(action)
            while getattr(request[0], "batch_key", None) is None:
                agent, observation, mask = request
                request = steps.send(int(agent.act(observation, mask)))
        except StopIteration as done:
            return _scheduled(done.value, index, sched[index])
        live[slot] = (index, steps, request)
        return None

    def fill(slot: int) -> Iterator[dict[str, Any]]:
        """Start the slot's next games until one waits on a batched agent; yield the records of those that end first."""
        for index in pending:
            record = advance(slot, index, _table_game(tables[slot], index, seed, sched[index], record_actions), None)
            if record is None:
                return
            yield record

    for slot in range(len(tables)):
        yield from fill(slot)
    while live:
        groups: dict[Any, list[int]] = {}
        for slot, (_, _, (agent, _, _)) in live.items():
            groups.setdefault(agent.batch_key, []).append(slot)
        for slots in groups.values():
            requests = [live.pop(slot) for slot in slots]
            agents = [r[2][0] for r in requests]
            actions = type(agents[0]).act_together(agents, [r[2][1] for r in requests], [r[2][2] for r in requests])
            for slot, (index, steps, _), action in zip(slots, requests, actions):
                record = advance(slot, index, steps, int(action))
                if record is not None:
                    yield record
                    yield from fill(slot)

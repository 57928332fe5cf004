"""One game shown in the browser: watched, replayed from a log, or played from a human seat (no web framework here).

A :class:`Session` owns a game's ``raw_env`` and moves it on one action at a
time.  :meth:`Session.view` returns what the page shows, as JSON: for a human
seat only what that seat may see (the game's seat view of the table, the
seat's own hand, public descriptions of every move), for a spectator
everything, and it says which.

A game log is the JSON object :func:`grinch_env.aec.log_to_json` writes
(``seed``, ``env_kwargs``, ``log``: ``[agent, action]`` pairs), which the page
also offers for download, with ``game`` (``"grinch"`` or ``"gnoming"``) and
``names`` (the agents per seat) added.  ``game_seed`` may stand in for
``seed``, as in :func:`grinch_env.aec.replay_log`.
"""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from grinch_env.web._imports import (
    DEFAULT_GAME,
    GAMES,
    GameSpec,
    build_agent,
    card_name,
    champion_dir,
    draw_table,
    get_game,
    play_module,
    split_specs,
)

MODES = ("watch", "play", "replay")
HISTORY_SHOWN = 60
"""The page lists this many of the latest moves."""

_PROMPTS = {
    "grinch": {"discard": "discard a card", "score": "score your hand in an unused row"},
    "gnoming": {"reveal": "turn up one of your cards", "draw": "draw a card", "play": "place or discard the held card",
                "bounce": "bounce the turned-up card or stop", "discard": "choose a discard pile",
                "hazard": "a Hazard was discarded: turn up a card or pass"},
}
_LEGENDS = {
    "grinch": "> to act · ?? a card this view may not see · piles bottom to top · pad: Wreaths Noise Ornaments Presents Rainbow Match Run, . unused",
    "gnoming": "* the viewer's layout · > to act · ?? face down · layouts are slots 0-8 row by row · [ ] the round scores",
}
_AUTOMATIC = {12: "discard onto pile A", 13: "discard onto pile B", 9: "draw", 14: "pass"}
"""Gnoming's forced moves that the engine plays by itself (``Game.auto_log``), as the play CLI names them."""


def parse_options(text: str | Mapping[str, Any] | None) -> dict[str, Any]:
    """Return game options from ``"num_rounds=1, bonus_layout=none"`` (or a mapping); the env checks the values."""
    if text is None or isinstance(text, Mapping):
        return dict(text or {})
    options: dict[str, Any] = {}
    for item in filter(None, (s.strip() for s in str(text).split(","))):
        key, eq, value = item.partition("=")
        if not eq or not key.strip().isidentifier():
            raise ValueError(f"game option {item!r} must be written key=value, e.g. num_rounds=1 (Grinch) or max_turns_per_player=10 (Gnoming)")
        value = value.strip()
        try:
            options[key.strip()] = int(value)
        except ValueError:
            options[key.strip()] = value
    return options


def _int(name: str, value: Any, low: int | None = None, high: int | None = None, default: int | None = None) -> int | None:
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = None
    if number is None or isinstance(value, bool) or isinstance(value, float) or (low is not None and number < low) or (high is not None and number > high):
        span = f" in {low}..{high}" if high is not None else f" >= {low}" if low is not None else ""
        raise ValueError(f"{name} must be an integer{span}, got {value!r}")
    return number


def _specs(text: Any, what: str) -> list[str]:
    specs = split_specs(text) if isinstance(text, str) else [str(s) for s in text or []]
    if not specs:
        raise ValueError(f"give at least one agent for {what}: random, greedy, a game's search agent, champion or a checkpoint path, comma-separated")
    return specs


class Session:
    """A game between agents (``mode="watch"``), from a log (``"replay"``) or with a human at ``human`` (``"play"``)."""

    def __init__(self, mode: str, spec: GameSpec, num_players: int, env_kwargs: Mapping[str, Any], seed: int | None, names: Sequence[str],
                 agents: Mapping[int, Any], human: int | None = None, log: Sequence[tuple[str, int]] | None = None,
                 game_seed: int | None = None) -> None:
        self.mode, self.spec, self.num_players = mode, spec, num_players
        self.env_kwargs = dict(env_kwargs)
        self.seed, self.game_seed = seed, game_seed
        self.names = list(names)
        self.agents = dict(agents)
        self.human = human
        self.replay_log = list(log or [])
        self.lock = threading.Lock()  # one request at a time moves a session
        self._play = play_module(spec)
        self._draw = draw_table(spec)
        self._restart()

    # ------------------------------------------------------------ building
    @classmethod
    def watch(cls, game: str, num_players: Any, agents: Any, seed: Any = None, options: Any = None) -> Session:
        """Return a game between ``agents`` (one spec per seat from seat 0; a shorter list is repeated)."""
        spec, n, kwargs, seed = _table(game, num_players, options, seed)
        specs = _specs(agents, "the table")
        built = _build_agents(spec, n, kwargs, seed, {s: specs[s % len(specs)] for s in range(n)})
        return cls("watch", spec, n, kwargs, seed, [built[s].name for s in range(n)], built)

    @classmethod
    def play(cls, game: str, num_players: Any, seat: Any, opponents: Any, seed: Any = None, options: Any = None) -> Session:
        """Return a game with a human at ``seat`` and ``opponents`` in the other seats from the human's left (a shorter list is repeated)."""
        spec, n, kwargs, seed = _table(game, num_players, options, seed)
        seat = _int("seat", seat, 0, n - 1, default=0)
        specs = _specs(opponents, "the opponents")
        if len(specs) > n - 1:
            raise ValueError(f"{len(specs)} opponents given but a {n}-player table has {n - 1} other seats")
        others = {(seat + i) % n: specs[(i - 1) % len(specs)] for i in range(1, n)}
        built = _build_agents(spec, n, kwargs, seed, others)
        names = ["you" if s == seat else built[s].name for s in range(n)]
        return cls("play", spec, n, kwargs, seed, names, built, human=seat)

    @classmethod
    def replay(cls, text: str | bytes | Mapping[str, Any], game: str | None = None) -> Session:
        """Return a replay of a JSON game log (see the module docstring); ``game`` is used when the log does not name one."""
        data = _read_log(text)
        name = data.get("game", game or DEFAULT_GAME)
        try:
            spec = get_game(name)
        except ValueError as exc:
            raise ValueError(f"the log's game: {exc}") from None
        kwargs = data.get("env_kwargs", {})
        if not isinstance(kwargs, dict):
            raise ValueError(f"the log's env_kwargs must be an object such as {{\"num_players\": 4}}, got {kwargs!r}")
        seed, game_seed = data.get("seed"), data.get("game_seed")
        for key, value in (("seed", seed), ("game_seed", game_seed)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise ValueError(f"the log's {key} must be an integer >= 0, got {value!r}")
        if seed is None and game_seed is None:
            raise ValueError("the log has neither a seed nor a game_seed: the deal cannot be reproduced")
        log = _log_entries(data["log"])
        try:
            env = spec.raw_env(**kwargs)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"the log's env_kwargs do not make a {spec.title} table: {exc}") from None
        n = env.num_players
        names = data.get("names")
        if not (isinstance(names, list) and len(names) == n and all(isinstance(x, str) for x in names)):
            names = [f"player_{s}" for s in range(n)]
        session = cls("replay", spec, n, kwargs, seed, names, {}, log=log, game_seed=game_seed)
        session.seek(len(log))  # checks every entry now, so a bad log is refused before it is shown
        session.seek(0)
        return session

    def _restart(self) -> None:
        self.env = self.spec.raw_env(**self.env_kwargs)
        self.env.reset(seed=self.seed, options=None if self.game_seed is None else {"game_seed": self.game_seed})
        self.history: list[str] = []
        self.private: list[str] = []  # what only the human seat learns (its own draws), shown with the history
        self.position = 0
        self.fresh = 0
        self._round = self.env.game.round
        self._round_start = list(self.env.game.totals)
        if self.mode == "play":
            self._run_agents()

    # ------------------------------------------------------------ moving on
    @property
    def game(self) -> Any:
        return self.env.game

    @property
    def done(self) -> bool:
        return self.game.current is None

    def step(self, action: Any = None) -> None:
        """Move on one action: the human's ``action`` (then the agents until the human is to act again), or the next agent's or log entry's."""
        if self.done:
            raise ValueError("the game is over: start a new one")
        self.fresh = len(self.history)  # the page marks what happened since this click
        if self.mode == "play":
            if self.game.current != self.human:
                raise ValueError(f"it is seat {self.game.current}'s turn, not yours")
            legal = self.game.legal_actions()
            if isinstance(action, bool) or not isinstance(action, int) or action not in legal:
                raise ValueError(f"action {action!r} is not legal now; legal actions: {legal}")
            self._apply(action)
            self._run_agents()
        elif self.mode == "replay":
            if self.position >= len(self.replay_log):
                raise ValueError("the log ends here (the recorded game stopped before its end)")
            self._apply_entry(self.position)
        else:
            self._apply(self._agent_action(self.game.current))

    def seek(self, position: Any) -> None:
        """Replay the log up to ``position`` entries (a replay moves back by starting again)."""
        if self.mode != "replay":
            raise ValueError("only a replay can move to a position")
        position = _int("position", position, 0, len(self.replay_log))
        if position < self.position:
            self._restart()
        while self.position < position:
            self._apply_entry(self.position)

    def _apply_entry(self, i: int) -> None:
        agent, action = self.replay_log[i]
        env = self.env
        if self.done:
            raise ValueError(f"log entry {i} ({agent}, {action}): the game is already over")
        if agent != env.agent_selection:
            raise ValueError(f"log entry {i} ({agent}, {action}): {env.agent_selection} is to act, not {agent}")
        legal = self.game.legal_actions()
        if action not in legal:
            raise ValueError(f"log entry {i} ({agent}, {action}): action {action} is not legal here; legal actions: {legal}")
        self._apply(action)

    def _agent_action(self, seat: int) -> int:
        view = self.env.observe(self.env.possible_agents[seat])
        return int(self.agents[seat].act(view["observation"], view["action_mask"]))

    def _run_agents(self) -> None:
        while not self.done and self.game.current != self.human:
            self._apply(self._agent_action(self.game.current))

    def _apply(self, action: int) -> None:
        game, seat = self.game, self.game.current
        line = self._play.describe_action(game, seat, action, self.names)
        auto = len(getattr(game, "auto_log", ()))
        hand = self._own_hand() + [pile[-1] for pile in getattr(game, "piles", ()) if pile]  # a pile's top is public already
        self.env.step(action)
        self.position += 1
        self.history.append(line)
        for q, a in getattr(self.game, "auto_log", ())[auto:]:
            self.history.append(f"seat {q} ({self.names[q]}): {_AUTOMATIC.get(a, f'slot {a}')} (the only legal move)")
        new = [c for c in self._own_hand() if c not in hand]
        if new and self.game.round == self._round:
            self.history.append("you drew " + " ".join(self._card_name(c) for c in new))
        if self.game.round != self._round or self.done:
            totals = self.game.totals
            points = ", ".join(f"seat {q} {totals[q] - self._round_start[q]:+d}" for q in range(self.num_players))
            self.history.append(f"round {self._round + 1} over: {points}; totals " + ", ".join(str(t) for t in totals))
            self._round, self._round_start = self.game.round, list(totals)

    def _own_hand(self) -> list[int]:
        """Return the human's hand (Grinch; Gnoming has no hidden hand) to tell it about the cards it draws."""
        hands = getattr(self.game, "hands", None)
        return list(hands[self.human]) if self.human is not None and hands is not None else []

    def _card_name(self, card: int) -> str:
        return card_name(card)  # only Grinch has hidden hands

    # ------------------------------------------------------------ showing
    def viewer(self, seat: Any = None) -> int | None:
        """Return the seat whose view is shown: always the human's in a played game; a watched or replayed game shows ``seat`` or everything."""
        if self.mode == "play":
            return self.human
        return _int("view seat", seat, 0, self.num_players - 1)

    def last_action(self) -> str | None:
        moves = [h for h in self.history if not h.startswith(("round ", "you drew"))]
        return moves[-1] if moves else None

    def png(self, seat: Any = None) -> bytes | None:
        """Return the game's picture of the table for the viewer as PNG bytes, or ``None`` if the game has no ``render`` module."""
        if self._draw is None:
            return None
        from PIL import Image

        image = np.asarray(self._draw(self.game, seat=self.viewer(seat), last_action=self.last_action()), dtype=np.uint8)
        out = io.BytesIO()
        Image.fromarray(image).save(out, format="PNG")
        return out.getvalue()

    def view(self, seat: Any = None) -> dict[str, Any]:
        """Return what the page shows, as JSON (for a human seat only what it may see)."""
        game, viewer, n = self.game, self.viewer(seat), self.num_players
        current = game.current
        state: dict[str, Any] = {
            "mode": self.mode, "game": self.spec.name, "title": self.spec.title, "num_players": n, "names": self.names,
            "human": self.human, "viewer": viewer, "to_act": current, "done": current is None,
            "round": min(game.round + 1, game.num_rounds), "num_rounds": game.num_rounds,
            "totals": list(game.totals), "highest_total_wins": self.spec.highest_total_wins,
            "text": game.render(seat=viewer), "image": self._draw is not None, "version": self.position,
            "history": self.history[-HISTORY_SHOWN:], "history_start": max(0, len(self.history) - HISTORY_SHOWN) + 1,
            "fresh": self.fresh + 1, "moves": self.position, "legal": [],
            "roles": [self._role(s) for s in range(n)], "hand": self._hand(viewer), "table_note": self._table_note(viewer),
            "legend": _LEGENDS.get(self.spec.name, ""),
        }
        if self.mode == "replay":
            state["length"] = len(self.replay_log)
        if current is None:
            winners = game.winners()
            state["winners"] = winners
            state["banner"] = self._result(winners)
        elif current == self.human:
            legal = game.legal_actions()
            state["legal"] = [{"action": a, "label": self._play.move_label(game, a)[0]} for a in legal]
            state["banner"] = f"Your turn: {self._prompt()}"
        else:
            state["banner"] = f"Seat {current} ({self.names[current]}) to act"
        return state

    def _table_note(self, viewer: int | None) -> str:
        hidden = "face-down cards are hidden from everyone" if self.spec.name == "gnoming" else None
        if viewer is None:
            return f"spectator view: {hidden or 'every hand shown'}"
        return f"as seat {viewer} sees it: {hidden or 'cards hidden from this seat are ??'}"

    def _role(self, seat: int) -> str:
        if self.spec.name == "grinch":
            return "Grinch" if seat == self.game.grinch else "Who"
        return "out" if getattr(self.game, "went_out", None) == seat else ""

    def _hand(self, seat: int | None) -> list[str]:
        hands = getattr(self.game, "hands", None)
        return [] if seat is None or hands is None else [self._card_name(c) for c in sorted(hands[seat])]

    def _prompt(self) -> str:
        phase = str(getattr(self.game.phase, "value", self.game.phase))
        if self.spec.name == "grinch" and phase == "draw":
            return f"draw a card ({self.game.draws_made + 1} of 2)"
        return _PROMPTS.get(self.spec.name, {}).get(phase, phase)

    def _result(self, winners: list[int]) -> str:
        order = "highest" if self.spec.highest_total_wins else "lowest"
        if self.human is not None and self.human in winners:
            return ("You win!" if len(winners) == 1 else "You share the win!") + f" ({order} total wins)"
        who = ", ".join(f"seat {w} ({self.names[w]})" for w in winners)
        return f"Game over. Winner: {who} ({order} total wins)"

    def log_json(self) -> str:
        """Return the game so far as a JSON log that :meth:`replay` (and :func:`grinch_env.aec.log_from_json`) reads.

        A played game gives its log only once it is over: the seed in it would
        reveal every hidden card to the human seat.
        """
        if self.mode == "play" and not self.done:
            raise ValueError("the log of a game you play is ready when the game is over (its seed would show every hidden card)")
        return json.dumps({"game": self.spec.name, "seed": self.seed, "game_seed": self.env.game_seed, "env_kwargs": self.env_kwargs,
                           "names": self.names, "log": [[a, int(x)] for a, x in self.env.action_log]})


def _table(game: Any, num_players: Any, options: Any, seed: Any) -> tuple[GameSpec, int, dict[str, Any], int]:
    spec = get_game(game)
    n = _int("players", num_players, spec.min_players, spec.max_players, default=spec.default_players)
    kwargs = parse_options(options)
    if "num_players" in kwargs:
        raise ValueError("give the table size as players, not as a game option")
    for key in ("reward_mode", "render_mode"):
        if key in kwargs:
            raise ValueError(f"{key} is an env setting, not a game option: the page shows the game and its final scores")
    kwargs = {"num_players": n, **kwargs}
    try:
        spec.raw_env(**kwargs)
    except TypeError as exc:
        raise ValueError(f"bad game option for {spec.title}: {exc}") from None
    seed = _int("seed", seed, 0, default=None)
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1)[0])
    return spec, n, kwargs, seed


def _build_agents(spec: GameSpec, n: int, kwargs: dict[str, Any], seed: int, specs: Mapping[int, str]) -> dict[int, Any]:
    options = {k: v for k, v in kwargs.items() if k != "num_players"}
    seeds = np.random.SeedSequence(seed).generate_state(n)
    agents = {}
    for seat, text in specs.items():
        agent = build_agent(text, n, spec.name, options)
        agent.reset(int(seeds[seat]))
        agents[seat] = agent
    return agents


def _read_log(text: str | bytes | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(text, Mapping):
        data = dict(text)
    else:
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(f"the log is not JSON ({exc}); expected an object with seed, env_kwargs and log, as the game logs are written") from None
    if not isinstance(data, dict) or "log" not in data:
        raise ValueError('the log must be a JSON object with a "log" list of [agent, action] pairs (and "seed", "env_kwargs", optionally "game")')
    return data


def _log_entries(log: Any) -> list[tuple[str, int]]:
    if not isinstance(log, list):
        raise ValueError(f'the log\'s "log" must be a list of [agent, action] pairs, got {type(log).__name__}')
    entries = []
    for i, entry in enumerate(log):
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)
                and isinstance(entry[1], int) and not isinstance(entry[1], bool)):
            raise ValueError(f"log entry {i} must be a pair [agent, action] such as [\"player_0\", 12], got {entry!r}")
        entries.append((entry[0], entry[1]))
    return entries


def catalogue() -> dict[str, Any]:
    """Return the games the page offers: titles, table sizes, built-in agents, whether a shipped ``champion`` is installed, and game options."""
    games = {}
    for name, spec in GAMES.items():
        games[name] = {"title": spec.title, "min_players": spec.min_players, "max_players": spec.max_players,
                       "default_players": spec.default_players, "agents": sorted(spec.agent_classes()),
                       "champion": champion_dir(name) is not None, "highest_total_wins": spec.highest_total_wins}
    return games

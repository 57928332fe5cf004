"""The last round played for the win, learned from the games: ``Z``, the chance that a discard's afterstate wins the game.

The afterstate values ``V``, ``W`` and ``G`` are in points: the agent maximises its points in every round, the last
included, where only winning counts (``expectimax`` values its last round by the chance its points win, and that is
worth 0.511 [0.498, 0.524] to it against itself without it over 6,000 games).  ``Z`` learns that chance from self-play:
an MLP from a last-round discard's afterstate (the run's :func:`features`, 85 columns), the table's score context
(each other seat's total less the observer's /30, its used rows, whether it has scored this round; five seats, zeros
where absent), ``V`` of the afterstate /30 and the discard's charge ``weight x G`` /30, to the share of the game's win
the observer got (1, 1/2 for a tie shared by two, 0), by logistic loss.  No heuristic input: the run's own values and
the observation.

In the last round the agent discards to the highest ``Z`` and values the Grinch's draws by their chance nodes with a
hand worth its best discard's ``Z``; rows keep their points (the most points is the best chance in the last round);
every earlier round is the run's own play (``value`` or ``lookahead``).

    # games of the run's explorer (as its next generation would play them), the last round's discards recorded
    OMP_NUM_THREADS=1 PYTHONPATH=. python docs/results/learner_grinch_draws/last_round_win.py play RUN FIT GAMES SEED PROCESSES OUT.npz
    # fit Z (the last tenth of the records held out)
    OMP_NUM_THREADS=1 PYTHONPATH=. python docs/results/learner_grinch_draws/last_round_win.py fit DATA.npz[,DATA2.npz] STEPS OUT.pt
    # one seat against OPPONENT, seat-rotated paired deals; OUT/results.json pairs with paired.py
    OMP_NUM_THREADS=1 PYTHONPATH=. python docs/results/learner_grinch_draws/last_round_win.py match RUN FIT Z.pt PLAY OPPONENT PLAYERS GAMES SEED PROCESSES OUT
    # the other way: D, the last round's points from the afterstate as a distribution, and O, a seat's from its used rows
    # and role, on the run's own records of generations GENS (say 3,4,5); the win chance sum_p D(p) F(p) with F from O
    OMP_NUM_THREADS=1 PYTHONPATH=. python docs/results/learner_grinch_draws/last_round_win.py fitdist RUN GENS OUT.pt
    # DIST.pt, or DIST.pt:centred (D moved to V's mean)
    OMP_NUM_THREADS=1 PYTHONPATH=. python docs/results/learner_grinch_draws/last_round_win.py matchdist RUN FIT DIST.pt PLAY OPPONENT PLAYERS GAMES SEED PROCESSES OUT

None of the three gains on the network alone (paired: Z -0.011 +- 0.010, D -0.017 +- 0.013, D centred -0.006 +- 0.008).

docs/results/learner_grinch.md, twenty-seventh session.
"""
from __future__ import annotations

import sys
from multiprocessing import Pool

import numpy as np
import torch

from grinch_env.evaluation.evaluate import evaluate, write_report
from grinch_env.games import get_game
from grinch_env.grinch import encoding as enc
from grinch_env.grinch.agents.base import decode
from grinch_env.grinch.cards import NUM_CARDS
from grinch_env.grinch.game import DRAW_PILE_ACTION, MAX_ROUNDS
from grinch_env.grinch.scoring import NUM_ROWS
from training.learner.afterstate import (
    SCALES,
    AfterstateAgent,
    LaterValue,
    Value,
    _rounds_after,
    denial_of,
    features,
    legal_features,
    mlp,
)
from training.learner.afterstate_run import explorer_of

OTHERS = 5  # other seats in the context (a table of up to six)
CONTEXT = OTHERS * (2 + NUM_ROWS)


def context(obs: np.ndarray) -> np.ndarray:
    """``float32[CONTEXT]``: per other seat (relative 1..5), its total less the observer's /30, its used rows and whether
    it has scored this round; zeros for seats not at the table."""
    view = decode(obs, SCALES)
    out = np.zeros((OTHERS, 2 + NUM_ROWS), np.float32)
    for j in range(1, view.num_players):
        used = [v is not None for v in view.pads[j]]
        out[j - 1, 0] = (view.totals[j] - view.totals[0]) / 30
        out[j - 1, 1] = float(sum(used) > view.round)
        out[j - 1, 2:] = used
    return out.reshape(-1)


def last_round(obs: np.ndarray) -> bool:
    """Whether ``obs`` is in the game's last round."""
    return bool(obs[enc.ROUNDS_LEFT:enc.ROUNDS_LEFT + MAX_ROUNDS].any()) and _rounds_after(obs) == 0


class Win:
    """``Z``: an MLP of ``[x, context, V/30, charge/30]`` to the logit of the win share."""

    def __init__(self, net: torch.nn.Module) -> None:
        self.net = net.eval()

    def __call__(self, z: np.ndarray) -> np.ndarray:
        with torch.inference_mode():
            return torch.sigmoid(self.net(torch.from_numpy(np.ascontiguousarray(z, np.float32))).squeeze(-1)).numpy()


def inputs(x: np.ndarray, ctx: np.ndarray, v: np.ndarray, charge: np.ndarray) -> np.ndarray:
    return np.concatenate([x, np.broadcast_to(ctx, (len(x), len(ctx))), v[:, None] / 30, charge[:, None] / 30], 1).astype(np.float32)


class LastRound(Value):
    """The run's scorer ``base``, with the last round's discards and hands valued by :meth:`worth` (a chance to win)."""

    def __init__(self, base: Value, value: Value, deny) -> None:
        super().__init__(value.net, value.mu, value.sd, value.table)
        self.base, self.deny = base, deny

    def worth(self, obs: np.ndarray, x: np.ndarray, charge: np.ndarray) -> np.ndarray:
        """The chance to win of the afterstates ``x`` [K, F] of ``obs``, a discard giving the Grinch ``charge`` [K] points."""
        raise NotImplementedError

    def discards(self, obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if not last_round(obs):
            return self.base.discards(obs, mask)
        x, _, legal = legal_features(obs[None], mask[None], self.table)
        return legal, self.worth(obs, x, np.zeros(len(legal)) if self.deny is None else self.deny(obs, legal))

    def hands(self, obs: np.ndarray, hands: np.ndarray) -> np.ndarray:
        if not last_round(obs):
            return self.base.hands(obs, hands)
        o = np.repeat(np.asarray(obs, np.float32)[None], len(hands), 0)
        o[:, :NUM_CARDS] = hands
        x, d, c = legal_features(o, hands.astype(bool), self.table)
        z = np.full((len(hands), NUM_CARDS), -np.inf)
        z[d, c] = self.worth(obs, x, np.zeros(len(x)))  # only the Grinch draws: no charge
        return z.max(1)


class WinValue(LastRound):
    """The last round valued by ``Z``."""

    def __init__(self, base: Value, value: Value, deny, win: Win) -> None:
        super().__init__(base, value, deny)
        self.win = win

    def worth(self, obs: np.ndarray, x: np.ndarray, charge: np.ndarray) -> np.ndarray:
        return self.win(inputs(x, context(obs), Value.__call__(self, x), charge))


class WinAgent(AfterstateAgent):
    """:class:`AfterstateAgent` whose last round is played by ``Z`` (no charge subtracted there: ``Z`` reads it)."""

    def __init__(self, value, later, play, name, sizes, deny, win: Win) -> None:
        super().__init__(value, later, play, name, sizes, deny=deny)
        self.scorer = WinValue(self.scorer, value, deny, win)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        obs, mask = np.asarray(observation, np.float32), np.asarray(action_mask).astype(bool)
        if last_round(obs) and mask[:DRAW_PILE_ACTION].sum() > 1:
            acts, worth = self.scorer.discards(obs, mask)
            return int(acts[np.argmax(worth)])
        return super().act(observation, action_mask)


# ------------------------------------------------------------------ data
_W: dict = {}


def run_explorer(run: str, fit: int) -> tuple:
    """``(explorer, fitted)``: the run's generation play of its fit ``fit`` (as its next generation would play), one torch thread."""
    torch.set_num_threads(1)
    ck = torch.load(f"{run}/latest.pt", weights_only=True)
    cfg, fitted = ck["afterstate_config"], ck["values"][fit]
    return explorer_of(fitted, cfg["temperature"], cfg["play_draws"], cfg["draw_samples"]), fitted


def _init(run: str, fit: int) -> None:
    _W["explorer"], fitted = run_explorer(run, fit)
    _W["value"], _W["deny"] = Value.from_state(fitted["value"]), denial_of(fitted)


def _play(args: tuple[int, int]) -> dict[str, np.ndarray]:
    num_players, seed = args
    explorer, value, deny = _W["explorer"], _W["value"], _W["deny"]
    spec = get_game("grinch")
    rng = np.random.default_rng(seed)
    game = spec.new_game(num_players, int(rng.integers(2**62)))
    encoder = spec.encoder()
    rows, seats = [], []
    while not game.done:
        seat = game.current
        view = encoder.observe(game, seat)
        obs, mask = np.asarray(view["observation"], np.float32), np.asarray(view["action_mask"]).astype(bool)
        action, _ = explorer(obs, mask, rng) if mask.sum() > 1 else (int(np.flatnonzero(mask)[0]), 0.0)
        if mask[:DRAW_PILE_ACTION].sum() >= 2 and last_round(obs):
            x, _ = features(obs[None], mask[None])
            a = np.array([action])
            charge = np.zeros(1) if deny is None else deny(obs, a)
            rows.append(inputs(x[0, a], context(obs), value(x[0, a]), charge)[0])
            seats.append(seat)
        game.step(action)
    totals = np.array(game.totals, np.float64)
    best = totals == totals.max()
    share = np.where(best, 1.0 / best.sum(), 0.0)
    return {"z": np.array(rows, np.float32), "y": share[seats].astype(np.float32)}


def play(run: str, fit: int, games: int, seed: int, processes: int, out: str) -> None:
    seeds = [(2, int(s)) for s in np.random.default_rng([seed, 27]).integers(2**62, size=games)]
    with Pool(processes, _init, (run, fit)) as pool:
        recs = pool.map(_play, seeds, chunksize=50)
    np.savez_compressed(out, z=np.concatenate([r["z"] for r in recs]), y=np.concatenate([r["y"] for r in recs]))
    print(f"{out}: {sum(len(r['y']) for r in recs)} last-round discards of {games} games", flush=True)


def _train(net: torch.nn.Module, loss_of, size: int, steps: int, seed: int) -> None:
    """Adam (1e-3, cosine to 0) on ``loss_of(batch of 512 indices in 0..size)``, seeded; the net left in eval mode."""
    opt = torch.optim.Adam(net.parameters(), 1e-3)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    gen = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        loss = loss_of(torch.randint(0, size, (512,), generator=gen))
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    net.eval()


def fit(data: str, steps: int, out: str, width: int = 128, seed: int = 0) -> None:
    parts = [np.load(d) for d in data.split(",")]
    z, y = np.concatenate([p["z"] for p in parts]), np.concatenate([p["y"] for p in parts])
    cut = int(len(y) * 0.9)  # games in order: the held-out tenth is whole games
    torch.manual_seed(seed)
    net = mlp(z.shape[1], width)
    zt, yt = torch.from_numpy(z), torch.from_numpy(y)
    lossf = torch.nn.BCEWithLogitsLoss()
    _train(net, lambda idx: lossf(net(zt[idx]).squeeze(-1), yt[idx]), cut, steps, seed)
    with torch.inference_mode():
        p = torch.sigmoid(net(zt[cut:]).squeeze(-1))
        held = float(lossf(torch.logit(p.clamp(1e-6, 1 - 1e-6)), yt[cut:]))
        base = float(lossf(torch.logit(torch.full_like(p, float(yt[:cut].mean()))), yt[cut:]))
        brier = float(((p - yt[cut:]) ** 2).mean())
        acc = float(((p > 0.5) == (yt[cut:] > 0.5))[yt[cut:] != 0.5].float().mean())
    torch.save({"model": net.state_dict(), "inputs": z.shape[1], "width": width}, out)
    print(f"{out}: {len(y)} records ({cut} fitted), held out: log loss {held:.4f} (a constant: {base:.4f}), "
          f"Brier {brier:.4f}, right side of 1/2 {acc:.3f}", flush=True)


def load_win(path: str) -> Win:
    state = torch.load(path, weights_only=True)
    net = mlp(state["inputs"], state["width"])
    net.load_state_dict(state["model"])
    return Win(net)


def match(run: str, fit_index: int, zpath: str, play_mode: str, opponent: str, players: int, games: int, seed: int,
          processes: int, out: str) -> None:
    fitted = torch.load(f"{run}/latest.pt", weights_only=True)["values"][fit_index]
    value, later = Value.from_state(fitted["value"]), LaterValue(Value.from_state(fitted["later"]))
    name = f"{run.rstrip('/').split('/')[-1]}/g{fit_index}+Z" + ("" if play_mode == "lookahead" else f":play={play_mode}")
    agent = WinAgent(value, later, play_mode, name, [players], denial_of(fitted), load_win(zpath))
    res = evaluate([agent] + [opponent] * (players - 1), num_players=players, num_games=games, seed=seed, game="grinch",
                   processes=processes)
    write_report(res, out)
    print(res.table(), flush=True)


# ------------------------------------------------------------------ the last round's points as a distribution
POINTS = 81  # the round's points 0..80 (a last round in the runs' data: 0..50)
USED, ROUNDS, TURN, GRINCH = slice(68, 75), slice(75, 81), slice(81, 84), 84  # columns of features()' context


def categorical(inputs: int, width: int) -> torch.nn.Sequential:
    return torch.nn.Sequential(torch.nn.Linear(inputs, width), torch.nn.ReLU(), torch.nn.Linear(width, width), torch.nn.ReLU(),
                               torch.nn.Linear(width, width), torch.nn.ReLU(), torch.nn.Linear(width, POINTS))


def _fit_categorical(x: np.ndarray, y: np.ndarray, width: int, steps: int, seed: int) -> tuple[torch.nn.Module, str]:
    cut = int(len(y) * 0.9)
    torch.manual_seed(seed)
    net = categorical(x.shape[1], width)
    xt, yt = torch.from_numpy(np.ascontiguousarray(x, np.float32)), torch.from_numpy(y.astype(np.int64))
    lossf = torch.nn.CrossEntropyLoss()
    _train(net, lambda idx: lossf(net(xt[idx]), yt[idx]), cut, steps, seed)
    with torch.inference_mode():
        logits = net(xt[cut:])
        held = float(lossf(logits, yt[cut:]))
        mean = (torch.softmax(logits, -1) * torch.arange(POINTS)).sum(-1)
        resid = float(((mean - yt[cut:]) ** 2).mean() / yt[cut:].float().var())
    return net, f"held out: cross-entropy {held:.3f}, its mean's explained variance {1 - resid:.3f}"


def fit_dist(run: str, gens: str, out: str, steps: int = 6000) -> None:
    """``D``: the last round's own points from a discard's afterstate (categorical over 0..80), and ``O``: a seat's last-round
    points from its used rows and role alone (the opponent's, as the observer may know it), on the run's records."""
    parts = [np.load(f"{run}/data/gen{g}.npz") for g in gens.split(",")]
    x = np.concatenate([p["x"][p["rounds_after"] == 0] for p in parts])
    y = np.concatenate([p["round"][p["rounds_after"] == 0] for p in parts]).astype(np.int64)
    if y.max() >= POINTS:
        raise SystemExit(f"a last round of {y.max()} points: more than {POINTS - 1}")
    d, d_msg = _fit_categorical(x, y, 256, steps, 0)
    first = x[:, TURN][:, 0] > 0.5  # each seat's first discard of the round: one record a seat
    o_in = np.concatenate([x[first][:, USED], x[first][:, GRINCH:GRINCH + 1]], 1)
    o, o_msg = _fit_categorical(o_in, y[first], 64, 2000, 1)
    torch.save({"d": d.state_dict(), "o": o.state_dict(), "d_inputs": x.shape[1]}, out)
    print(f"{out}: D on {len(y)} last-round afterstates, {d_msg}; O on {int(first.sum())} seats' rounds, {o_msg}", flush=True)


class Dist:
    """``D`` and ``O`` of :func:`fit_dist`: a last-round afterstate's chance to win."""

    def __init__(self, path: str) -> None:
        state = torch.load(path, weights_only=True)
        self.d, self.o = categorical(state["d_inputs"], 256), categorical(NUM_ROWS + 1, 64)
        self.d.load_state_dict(state["d"])
        self.o.load_state_dict(state["o"])
        self.d.eval(), self.o.eval()

    def _probs(self, net: torch.nn.Module, x: np.ndarray) -> np.ndarray:
        with torch.inference_mode():
            return torch.softmax(net(torch.from_numpy(np.ascontiguousarray(x, np.float32))), -1).numpy().astype(np.float64)

    def win_of_points(self, obs: np.ndarray) -> np.ndarray:
        """``F[p]``: the chance to win (a tie half) if the observer's last round brings ``p`` points, each other seat's
        round drawn from ``O`` of its used rows and role, independently."""
        view = decode(obs, SCALES)
        p = np.arange(POINTS)
        chance = np.ones(POINTS)
        for j in range(1, view.num_players):
            used = [v is not None for v in view.pads[j]]
            if sum(used) > view.round:  # it has scored this round
                q = np.zeros(POINTS)
                q[0] = 1.0
            else:
                q = self._probs(self.o, np.array([used + [float(view.grinch == j)]], np.float32))[0]
            gap = view.totals[0] - view.totals[j] + p  # win iff gap > its points q
            cdf = np.concatenate([[0.0], np.cumsum(q)])  # cdf[k] = P(q < k)
            below = cdf[np.clip(gap, 0, POINTS)]
            equal = np.where((gap >= 0) & (gap < POINTS), q[np.clip(gap, 0, POINTS - 1)], 0.0)
            chance *= below + 0.5 * equal
        return chance

    def worth(self, x: np.ndarray, f: np.ndarray, shift: np.ndarray | None = None, mean: np.ndarray | None = None) -> np.ndarray:
        """The chance to win of afterstates ``x``: ``sum_p D(p | x) F[p - shift]`` (``shift``: points given to the Grinch;
        ``F`` read between its points linearly); with ``mean`` (``V`` of ``x``), ``D`` moved to that mean."""
        d = self._probs(self.d, x)
        p = np.arange(POINTS, dtype=np.float64)
        move = np.zeros(len(x)) if shift is None else -np.asarray(shift, np.float64)
        if mean is not None:
            move = move + np.asarray(mean, np.float64) - d @ p
        at = np.clip(p[None] + move[:, None], 0, POINTS - 1)
        lo = np.floor(at).astype(int)
        hi = np.minimum(lo + 1, POINTS - 1)
        fx = f[lo] + (at - lo) * (f[hi] - f[lo])
        points = d @ p + move  # more points break ties, e.g. when the game is already won or lost
        return (d * fx).sum(1) + 1e-6 * points


class DistValue(LastRound):
    """The last round valued by ``D`` and ``O``; ``centred``: ``D`` moved to ``V``'s mean."""

    def __init__(self, base: Value, value: Value, deny, dist: Dist, centred: bool = False) -> None:
        super().__init__(base, value, deny)
        self.dist, self.centred = dist, centred

    def worth(self, obs: np.ndarray, x: np.ndarray, charge: np.ndarray) -> np.ndarray:
        mean = Value.__call__(self, x) if self.centred else None
        return self.dist.worth(x, self.dist.win_of_points(obs), charge, mean)


class DistAgent(WinAgent):
    """:class:`AfterstateAgent` whose last round is played by ``D`` and ``O``."""

    def __init__(self, value, later, play, name, sizes, deny, dist: Dist, centred: bool = False) -> None:
        AfterstateAgent.__init__(self, value, later, play, name, sizes, deny=deny)
        self.scorer = DistValue(self.scorer, value, deny, dist, centred)


def match_dist(run: str, fit_index: int, dpath: str, play_mode: str, opponent: str, players: int, games: int, seed: int,
               processes: int, out: str) -> None:
    centred = dpath.endswith(":centred")
    dpath = dpath.removesuffix(":centred")
    fitted = torch.load(f"{run}/latest.pt", weights_only=True)["values"][fit_index]
    value, later = Value.from_state(fitted["value"]), LaterValue(Value.from_state(fitted["later"]))
    name = (f"{run.rstrip('/').split('/')[-1]}/g{fit_index}+D" + ("c" if centred else "")
            + ("" if play_mode == "lookahead" else f":play={play_mode}"))
    agent = DistAgent(value, later, play_mode, name, [players], denial_of(fitted), Dist(dpath), centred)
    res = evaluate([agent] + [opponent] * (players - 1), num_players=players, num_games=games, seed=seed, game="grinch",
                   processes=processes)
    write_report(res, out)
    print(res.table(), flush=True)


def main() -> None:
    cmd, args = sys.argv[1] if len(sys.argv) > 1 else "", sys.argv[2:]
    if cmd == "play" and len(args) == 6:
        play(args[0], int(args[1]), int(args[2]), int(args[3]), int(args[4]), args[5])
    elif cmd == "fit" and len(args) == 3:
        fit(args[0], int(args[1]), args[2])
    elif cmd == "fitdist" and len(args) == 3:
        fit_dist(args[0], args[1], args[2])
    elif cmd == "matchdist" and len(args) == 10:
        match_dist(args[0], int(args[1]), args[2], args[3], args[4], *map(int, args[5:9]), args[9])
    elif cmd == "match" and len(args) == 10:
        match(args[0], int(args[1]), args[2], args[3], args[4], *map(int, args[5:9]), args[9])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()


"""Can the Grinch's discards be learned from the games' outcomes?  One step of policy iteration on afterstates.

Policy evaluation: the network (``NETWORK``, a learner run trained from scratch) plays itself at 2 players, each move
sampled from its policy; at every discard with a choice the position after the discard (the kept hand and the public
context, written out by ``bc_teacher_data.features``: rules-level, no expectation) is stored with what followed.  An
MLP regresses the value of the afterstate on one of three outcomes (TD-Gammon's value of the position after a move,
fitted by Monte Carlo rather than TD):

* ``round``: the seat's own points in the round (the scored row and its bonuses);
* ``own``: the seat's own points still to come in the game (this round's and every later one's);
* ``margin``: the margin still to come (the learner's ``credit: pad`` target).

Policy improvement: discard to the afterstate of highest value.  Measured in games, 2 players, seat-rotated paired
deals, seed 4242: (1) ``swap``: that discard rule in one seat with `expectimax` deciding the draws and rows, against
`expectimax` (``swap_kinds.py``'s yardstick: points lost a game on the discards alone), beside the network's own
discards in the same composite; (2) ``greedy``: that discard rule with the network's draws and rows, against greedy,
beside the network alone.  docs/results/learner_grinch.md, nineteenth session.

    OMP_NUM_THREADS=1 PYTHONPATH=. python docs/results/learner_grinch_draws/afterstate_value.py NETWORK GAMES TARGETS MATCH_GAMES [WORKERS]

e.g. ``checkpoints/grinch_after_36 4000 round,own,margin 600 2``.  The self-play data are cached in
``/tmp/afterstate_value_<run>_<GAMES>.npz``.
"""
import sys
import time
from multiprocessing import Pool
from pathlib import Path

import numpy as np
import torch
from bc_teacher_data import features, mlp  # this folder's helper

from grinch_env.games import get_game
from grinch_env.grinch import encoding as enc
from grinch_env.grinch.game import DRAW_PILE_ACTION, SCORE_BASE
from grinch_env.grinch.scoring import NUM_ROWS
from training.learner.afterstate import SCALES, Value  # noqa: F401  (SCALES re-exported for afterstate_pi.py)
from training.learner.rollout import net_tokens
from training.learner.search import load_learner

TARGETS = ("round", "own", "margin")
ARGS: dict = {}  # the command line (main); a worker process forked from it reads the same


_CACHE: dict[str, torch.nn.Module] = {}


def sample_network(obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
    """A move sampled from the policy of the network ``ARGS["network"]`` (``random``: a uniformly random legal move)."""
    if ARGS["network"] == "random":
        return int(rng.choice(np.flatnonzero(mask)))
    if "net" not in _CACHE:
        _CACHE["net"] = load_learner(ARGS["network"])[0]
    net = _CACHE["net"]
    st, at = net_tokens(net, "grinch", obs[None])
    with torch.inference_mode():
        logits = net(st, at)[0][0].double().numpy()
    logits[~mask] = -np.inf
    p = np.exp(logits - logits.max())
    return int(rng.choice(len(p), p=p / p.sum()))


def play(seed: int, policy=sample_network) -> dict[str, np.ndarray]:
    """One self-play game from ``seed``, every move by ``policy(obs, mask, rng)``: every discard with a choice, its three
    outcomes, the seat's used rows after it scores in that round and the rounds left after that round."""
    torch.set_num_threads(1)
    spec = get_game("grinch")
    rng = np.random.default_rng(seed)
    game = spec.new_game(2, int(rng.integers(2**62)))
    encoder = spec.encoder()
    rec, obs_l, mask_l, act_l, scored = [], [], [], [], {}
    starts = [list(game.totals)]  # the totals at the start of every round, then at the end
    while not game.done:
        seat = game.current
        view = encoder.observe(game, seat)
        obs, mask = view["observation"], np.asarray(view["action_mask"]).astype(bool)
        action = policy(obs, mask, rng)
        if mask[:DRAW_PILE_ACTION].sum() >= 2:
            obs_l.append(obs.astype(np.float16))
            mask_l.append(mask.astype(np.int8))
            act_l.append(action)
            rec.append((seat, game.round))
        if action >= SCORE_BASE:
            scored[seat, game.round] = action - SCORE_BASE
        game.step(action)
        if game.done or game.round != len(starts) - 1:
            starts.append(list(game.totals))
    t = np.array(starts, np.float32)  # [rounds + 1, seats]
    final = t[-1]
    y = {"round": [], "own": [], "margin": []}
    for seat, r in rec:
        y["round"].append(t[r + 1, seat] - t[r, seat])
        y["own"].append(final[seat] - t[r, seat])
        y["margin"].append((final[seat] - final[1 - seat]) - (t[r, seat] - t[r, 1 - seat]))
    used = np.stack(obs_l)[:, enc.ROW_USED:enc.ROW_USED + NUM_ROWS].astype(np.float32)
    used[np.arange(len(rec)), [scored[seat, r] for seat, r in rec]] = 1.0
    return {"obs": np.stack(obs_l), "mask": np.stack(mask_l), "act": np.array(act_l), "round_index": np.array([r for _, r in rec]),
            "used_after": used, "rounds_after": np.array([game.num_rounds - r - 1 for _, r in rec]),
            **{k: np.array(v, np.float32) for k, v in y.items()}}


def load_data(path: Path, games: int, workers: int, worker=play, first_seed: int = 0) -> dict[str, np.ndarray]:
    """The self-play games ``first_seed ...`` played by ``worker(seed)``, cached at ``path``."""
    if path.exists():
        return dict(np.load(path))
    start = time.time()
    with Pool(workers) as pool:
        parts = pool.map(worker, range(first_seed, first_seed + games), chunksize=8)
    data = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    np.savez(path, **data)
    print(f"{games} self-play games: {len(data['act'])} discards with a choice ({time.time() - start:.0f} s wall)", flush=True)
    return data


def chosen_features(obs: np.ndarray, mask: np.ndarray, act: np.ndarray) -> np.ndarray:
    out = []
    for b in range(0, len(obs), 2048):
        x, _ = features(obs[b:b + 2048].astype(np.float32), mask[b:b + 2048])
        out.append(x[np.arange(len(x)), act[b:b + 2048]])
    return np.concatenate(out)


def fit(x: np.ndarray, y: np.ndarray, held: int, steps: int = 8000, width: int = 256) -> tuple[torch.nn.Module, float, float, float]:
    """An MLP from the afterstate to the standardised outcome; return it, its held-out explained variance, the mean and scale."""
    torch.manual_seed(0)
    mu, sd = float(y[:-held].mean()), float(y[:-held].std())
    xt, yt = torch.from_numpy(x), torch.from_numpy((y - mu) / sd)
    net = mlp(x.shape[1], width)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    rng = np.random.default_rng(0)
    n = len(y) - held
    for _ in range(steps):
        idx = torch.from_numpy(rng.integers(0, n, 512))
        loss = torch.nn.functional.mse_loss(net(xt[idx]).squeeze(-1), yt[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    with torch.no_grad():
        pred = net(xt[-held:]).squeeze(-1).numpy()
    ev = 1.0 - float(np.var(yt[-held:].numpy() - pred)) / float(np.var(yt[-held:].numpy()))
    return net.eval(), ev, mu, sd


class ValueAgent:
    """Discards (and with ``draws``, draws) to the highest worth under ``value``; with ``later`` (``afterstate_pi.LaterValue``),
    rows by ``W``; the agent ``network``'s choice for the rest.  ``value`` an agent spec instead: that agent's discards."""

    def __init__(self, value, network: str, draws: bool, label: str, later=None) -> None:
        from grinch_env.agents import make_agent

        self.draws, self.name, self.later = draws, label, later
        self.value = make_agent(value, num_players=2, game="grinch") if isinstance(value, str) else value
        self.net = make_agent(network, num_players=2, game="grinch")

    def reset(self, seed=None):
        self.net.reset(seed)
        if not isinstance(self.value, Value):
            self.value.reset(seed)

    def act(self, observation, action_mask):
        mask = np.asarray(action_mask).astype(bool)
        obs = np.asarray(observation, np.float32)
        if mask[:DRAW_PILE_ACTION].any() and not isinstance(self.value, Value):
            return self.value.act(observation, action_mask)
        if mask[:DRAW_PILE_ACTION].any():
            legal, v = self.value.discards(obs, mask)
        elif self.draws and mask[DRAW_PILE_ACTION:SCORE_BASE].any():
            legal, v = self.value.draws(obs, mask)
        elif self.later is not None and mask[SCORE_BASE:].any():
            legal, v = self.later.rows(obs, mask)
        else:
            return self.net.act(observation, action_mask)
        return int(legal[np.argmax(v)])


def match(agent, opponent: str, games: int) -> str:
    from grinch_env.evaluation.evaluate import evaluate

    res = evaluate([agent, opponent], num_players=2, num_games=games, seed=4242, game="grinch")
    a, b = (res.per_agent[x] for x in res.agents)
    lo, hi = a["win_rate_ci"]
    return f"{a['win_rate']:.3f} [{lo:.3f}, {hi:.3f}], mean total {a['mean_score']:.1f} against {b['mean_score']:.1f}"


def main() -> None:
    torch.set_num_threads(1)
    network, games, targets = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(",")
    match_games, workers = int(sys.argv[4]), int(sys.argv[5]) if len(sys.argv) > 5 else 1
    if set(targets) - set(TARGETS):
        raise SystemExit(f"TARGETS must come from {', '.join(TARGETS)}, got {sys.argv[3]}")
    ARGS["network"] = network
    data = load_data(Path(f"/tmp/afterstate_value_{Path(network).name}_{games}.npz"), games, workers)
    x = chosen_features(data["obs"], data["mask"], data["act"])
    held = len(x) // 10  # the last games' discards
    print(f"{len(x)} afterstates, {x.shape[1]} features; held out {held}", flush=True)
    fitted = {}
    for target in targets:
        start = time.process_time()
        mlp_, ev, mu, sd = fit(x, data[target], held)
        fitted[target] = Value(mlp_, mu, sd)
        print(f"target {target}: mean {mu:.2f}, sd {sd:.2f}; held-out explained variance {ev:.3f} ({time.process_time() - start:.0f} CPU-s)",
              flush=True)
    if match_games:
        print(f"swap, against expectimax, {match_games} games: the network's discards "
              f"{match(ValueAgent(network, 'expectimax', False, 'network discards'), 'expectimax', match_games)}", flush=True)
        for target, value in fitted.items():
            print(f"swap, against expectimax: value-{target} discards "
                  f"{match(ValueAgent(value, 'expectimax', False, target), 'expectimax', match_games)}", flush=True)
        print(f"against greedy, {match_games} games: the network alone {match(network, 'greedy', match_games)}", flush=True)
        for target, value in fitted.items():
            print(f"against greedy: value-{target} discards, the network's draws and rows "
                  f"{match(ValueAgent(value, network, False, target), 'greedy', match_games)}", flush=True)


if __name__ == "__main__":
    main()

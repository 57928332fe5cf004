"""Diagnosis probes of the learner on Gnoming (3 players, uniform random play): is the return predictable, and does the network fit it?

``python -m training.learner.probe linear``: the correlation of one hand-made number (the face-up point margin
of the decision's seat) with the decision's return, for the whole-game and the per-round credit: how much of
the return a state can explain at all.

``python -m training.learner.probe fit [--credit round] [--lr 1e-3] [--steps 800]``: train V and Q of a fresh
token network on 32 games' decisions and print the explained variance on 8 held-out games every 100 steps.
``python -m training.learner.probe grinch-fit [--tokens 1] [--credit pad] [--value-global]``: the same fit on Grinch
(2 players, uniform random play): V of a fresh network on 48 games' decisions (4,032), explained variance on 16
held-out games; ``--tokens 1`` rewrites the score-pad columns as tokens v1 had them (totals / 450, no lead, no
banked margin), to measure what v2 changed.
``python -m training.learner.probe grinch-critic CHECKPOINT [--games 100] [--held-out 64] [--steps 800]``: can a
critic score the Grinch's returns better when it sees the other hands, and better still with their row values?
Fresh networks fit the same self-play games of a PPO checkpoint from the observation, from the observation with the
hands revealed, and from that with every hand's row values on the seat tokens (``grinch_critic``).
``python -m training.learner.probe grinch-rows AGENT [--players 2] [--games 100]``: does a Grinch agent (a checkpoint
or a built-in) keep the hand that is best in the rows it can still write?  At each of its discards and discard-pile
draws against greedy it compares the chosen afterstate with the best over all seven rows and the best over the open
rows (row value plus bonus; the draw pile, whose value needs an expectation, is left out), and counts which one it
took where the two differ (docs/results/learner_grinch.md, eighth session).
``python -m training.learner.probe gnoming-feed AGENT [--players 5] [--games 200] [--opponent search]``: does a Gnoming agent
feed its left neighbour?  In seat-rotated games against ``n - 1`` copies of the opponent it counts, per seat, the
discards onto a pile and how often the next seat took that very card at its draw; the agent's rate is set beside the
rate of the opponent copies whose left neighbour is another copy, so that the taker plays the same policy in both.
``python -m training.learner.probe grinch-draws AGENT [--players 2] [--games 100]``: where a Grinch agent may draw
blind from the draw pile or take a seen discard-pile top, which does it take, and which would greedy take at the same
position (against greedy, seat-rotated); for a learner checkpoint also how sure its policy is where it draws blind and
greedy takes a top (docs/results/learner_grinch.md, tenth session).
These are measurements for docs/results/learner*.md, not features: nothing here enters the learner's input.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
import torch

from grinch_env.games import get_game
from training.learner.net import TokenNet
from training.learner.rollout import collect, encode, net_tokens
from training.ppo import explained_variance


def linear(games: int = 16) -> None:
    from grinch_env.gnoming import encoding as enc
    from grinch_env.gnoming.cards import POINTS

    spec = get_game("gnoming")
    net = TokenNet(d_model=16, heads=2, ff=16)
    pts = np.array(list(POINTS) + [0.0])
    for credit in ("game", "round"):
        b = collect(spec.vector(num_envs=games, num_players=3, seed=0, reward_mode="margin"), net, "gnoming", "dmc",
                    np.random.default_rng(0), epsilon=1.0, credit=credit)
        o = b.obs.astype(np.float32)
        known = (o[:, :enc.PRESENT].reshape(-1, 7, 9, 13)[:, :3] * pts).sum((2, 3))  # face-up points by relative seat
        x = (known[:, 1:].mean(1) - known[:, 0]) / 100
        late = o[:, enc.TURNS] > np.median(o[:, enc.TURNS])
        print(f"credit {credit}: {len(x)} decisions, corr(face-up margin, return) {np.corrcoef(x, b.outcomes)[0, 1]:.3f}, "
              f"later half of rounds {np.corrcoef(x[late], b.outcomes[late])[0, 1]:.3f}")


def fit(credit: str, lr: float, minibatch: int, steps: int) -> None:
    torch.manual_seed(0)
    spec = get_game("gnoming")
    net = TokenNet(d_model=32, heads=4, ff=64)
    rng = np.random.default_rng(0)
    train = collect(spec.vector(num_envs=32, num_players=3, seed=0, reward_mode="margin"), net, "gnoming", "dmc", rng, epsilon=1.0, credit=credit)
    test = collect(spec.vector(num_envs=8, num_players=3, seed=1, reward_mode="margin"), net, "gnoming", "dmc", rng, epsilon=1.0, credit=credit)
    print(f"credit {credit}: {len(train.actions)} training decisions, {len(test.actions)} held out; return variance {train.outcomes.var():.4f}")
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    st_t, at_t = encode("gnoming", test.obs)
    start = time.process_time()
    for step in range(1, steps + 1):
        idx = rng.integers(0, len(train.actions), minibatch)
        st, at = encode("gnoming", train.obs[idx])
        _, q, v = net(st, at)
        y = torch.from_numpy(train.outcomes[idx])
        qa = q.gather(1, torch.from_numpy(train.actions[idx])[:, None]).squeeze(1)
        loss = ((qa - y) ** 2).mean() + ((v - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0:
            with torch.no_grad():
                _, q, v = net(st_t, at_t)
            qa = q.gather(1, torch.from_numpy(test.actions)[:, None]).squeeze(1).numpy()
            print(f"step {step} cpu {time.process_time() - start:.0f}s held-out EV(V) {explained_variance(v.numpy(), test.outcomes):.3f} "
                  f"EV(Q) {explained_variance(qa, test.outcomes):.3f}", flush=True)


def _as_tokens_v1(st: torch.Tensor) -> torch.Tensor:
    """Return Grinch state tokens with the score-pad columns of tokens v1: totals / 450, no lead, no banked margin."""
    from grinch_env.grinch import tokens as rt

    st = st.clone()
    d = rt.NUM_IDS
    st[:, rt.S0:rt.S0 + 6, d + 16] *= 100 / 450
    st[:, rt.S0:rt.S0 + 6, d + 17] = 0
    st[:, rt.G0, d + rt.G_MARGIN] = 0
    return st


def grinch_fit(tokens: int, credit: str, value_global: bool, lr: float, minibatch: int, steps: int) -> None:
    torch.manual_seed(0)
    spec = get_game("grinch")
    net = TokenNet(d_model=32, heads=4, ff=64, value_global=value_global)
    rng = np.random.default_rng(0)
    train = collect(spec.vector(num_envs=48, num_players=2, seed=0, reward_mode="margin"), net, "grinch", "dmc", rng, epsilon=1.0, credit=credit)
    test = collect(spec.vector(num_envs=16, num_players=2, seed=1, reward_mode="margin"), net, "grinch", "dmc", rng, epsilon=1.0, credit=credit)
    print(f"grinch tokens v{tokens} credit {credit} value_global {value_global}: {len(train.actions)} training decisions, "
          f"{len(test.actions)} held out; target variance {train.returns.var():.4f}")
    conv = _as_tokens_v1 if tokens == 1 else (lambda x: x)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    st_t, at_t = encode("grinch", test.obs)
    st_t = conv(st_t)
    start = time.process_time()
    for step in range(1, steps + 1):
        idx = rng.integers(0, len(train.actions), minibatch)
        st, at = encode("grinch", train.obs[idx])
        v = net(conv(st), at)[2]
        loss = ((v - torch.from_numpy(train.returns[idx])) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0:
            with torch.no_grad():
                v = net(st_t, at_t)[2].numpy()
            print(f"step {step} cpu {time.process_time() - start:.0f}s held-out EV(V) {explained_variance(v, test.returns):.3f}", flush=True)


def grinch_critic(agent: str, games: int, held_out: int, lr: float, minibatch: int, steps: int, seed: int = 0) -> dict[str, list]:
    """Fit fresh critics on one set of a learner checkpoint's self-play games with three inputs; return the held-out curves.

    The checkpoint's policy plays ``games + held_out`` 2-player Grinch games against itself (sampling, pad credit,
    Monte-Carlo targets: ``gae_lambda = 1``).  For each input, a fresh network of the default config's size (d 32,
    one layer, value_global, a round value head) regresses its value on the margin still to come and its round value
    on the margin the round will still bank, ``steps`` Adam steps from the same seed: ``obs``, the observation (the
    critic PPO has); ``revealed``, with the other hands in their "known in hand" blocks (``ppo.oracle_critic``);
    ``rows``, revealed with every hand's row values on the seat tokens (``ppo.oracle_rows``).  Returns
    ``{input: [(step, EV value, EV round value), ...]}`` on the held-out games.
    """
    from training.learner.search import load_learner

    net, cfg = load_learner(agent)[:2]
    if cfg["game"] != "grinch" or cfg["algo"] != "ppo":
        raise ValueError(f"grinch-critic needs a Grinch PPO learner checkpoint, got game {cfg['game']!r}, algo {cfg['algo']!r}")
    spec = get_game("grinch")
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)

    def play(n: int, s: int):
        return collect(spec.vector(num_envs=n, num_players=2, seed=s, reward_mode="margin"), net, "grinch", "ppo", rng,
                       gae_lambda=1.0, credit="pad", oracle_critic=True)

    train, test = play(games, seed), play(held_out, seed + 1)
    print(f"{agent}: {len(train.actions)} training decisions ({games} games), {len(test.actions)} held out ({held_out}); "
          f"variance of the margin to come {train.returns.var():.4f}, of the round's {train.round_returns.var():.4f}", flush=True)
    curves: dict[str, list] = {}
    for name, obs_of, rows in (("obs", lambda b: b.obs, False), ("revealed", lambda b: b.critic_obs, False), ("rows", lambda b: b.critic_obs, True)):
        torch.manual_seed(seed)
        fit_net = TokenNet(d_model=32, layers=1, heads=4, ff=64, value_global=True, round_value=True)
        opt = torch.optim.Adam(fit_net.parameters(), lr=lr)
        st_t, at_t = encode("grinch", obs_of(test), seat_hands=rows)
        x_train = obs_of(train)
        fit_rng = np.random.default_rng(seed)
        curves[name] = []
        start = time.process_time()
        for step in range(1, steps + 1):
            idx = fit_rng.integers(0, len(train.actions), minibatch)
            _, _, v, rv = fit_net.heads(*encode("grinch", x_train[idx], seat_hands=rows))
            loss = ((v - torch.from_numpy(train.returns[idx])) ** 2).mean() + ((rv - torch.from_numpy(train.round_returns[idx])) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            if step % max(steps // 8, 1) == 0 or step == steps:
                with torch.no_grad():
                    _, _, v, rv = fit_net.heads(st_t, at_t)
                point = (step, explained_variance(v.numpy(), test.returns), explained_variance(rv.numpy(), test.round_returns))
                curves[name].append(point)
                print(f"  {name:>8} step {step} cpu {time.process_time() - start:.0f}s held-out EV value {point[1]:.3f}, round value {point[2]:.3f}",
                      flush=True)
    return curves


def _decisions_against_greedy(agent: str, num_players: int, games: int, seed: int) -> list[tuple[np.ndarray, np.ndarray, int]]:
    """Return ``(observation, mask, action)`` of every decision of ``agent`` in seat-rotated Grinch games against greedy."""
    from grinch_env.agents import make_agent
    from grinch_env.evaluation.evaluate import evaluate

    inner = make_agent(agent, num_players=num_players, game="grinch")
    seen: list[tuple[np.ndarray, np.ndarray, int]] = []

    class Recorder:
        name = inner.name

        def reset(self, seed: int | None = None) -> None:
            inner.reset(seed)

        def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
            action = int(inner.act(observation, action_mask))
            seen.append((np.array(observation), np.array(action_mask), action))
            return action

    evaluate([Recorder(), "greedy"], num_players=num_players, num_games=games, seed=seed, game="grinch")
    return seen


def grinch_rows(agent: str, num_players: int = 2, games: int = 100, seed: int = 777) -> dict[str, int]:
    """Return counts of ``agent``'s discards and discard-pile draws against greedy: which afterstate best it took.

    ``decisions``: choices among at least two discards or discard-pile draws (a
    draw-pile choice is left out); ``best_open`` / ``best_all``: the chosen
    afterstate is a best over the open rows / over all rows; ``differ``: the
    two sets of bests share no action; ``took_all`` / ``took_open``: of those,
    how often the agent took a best of each kind.
    """
    from grinch_env.grinch import encoding as enc
    from grinch_env.grinch.agents.base import decode
    from grinch_env.grinch.agents.handeval import HandEvaluator
    from grinch_env.grinch.cards import NUM_CARDS
    from grinch_env.grinch.game import DRAW_DISCARD_BASE, DRAW_PILE_ACTION, SCORE_BASE
    from grinch_env.grinch.scoring import NUM_ROWS, resolve_layout

    evaluator = HandEvaluator(resolve_layout("standard"))
    seen = _decisions_against_greedy(agent, num_players, games, seed)
    out = dict.fromkeys(["decisions", "best_open", "best_all", "differ", "took_all", "took_open"], 0)
    for obs, mask, action in seen:
        legal = np.flatnonzero(mask)
        legal = legal[(legal < SCORE_BASE) & (legal != DRAW_PILE_ACTION)]
        if len(legal) < 2 or action not in legal:
            continue
        # the afterstate hands as greedy builds them (a decision's legal set is all discards or all pile draws)
        hand = np.flatnonzero(obs[enc.HAND:enc.HAND + NUM_CARDS] > 0.5)
        if legal[0] < DRAW_PILE_ACTION:
            hands = np.array([hand[hand != a] for a in legal])
        else:
            tops = decode(obs).tops
            hands = np.array([np.append(hand, tops[a - DRAW_DISCARD_BASE]) for a in legal])
        used = obs[enc.ROW_USED:enc.ROW_USED + NUM_ROWS] > 0.5
        v_open = evaluator.value(hands, np.where(used, -np.inf, 0.0))  # greedy's value: best open row plus bonus
        v_all = evaluator.value(hands, np.zeros(NUM_ROWS))
        i = int(np.flatnonzero(legal == action)[0])
        best_open, best_all = set(np.flatnonzero(v_open >= v_open.max() - 1e-6)), set(np.flatnonzero(v_all >= v_all.max() - 1e-6))
        out["decisions"] += 1
        out["best_open"] += i in best_open
        out["best_all"] += i in best_all
        if not best_open & best_all:
            out["differ"] += 1
            out["took_all"] += i in best_all
            out["took_open"] += i in best_open
    return out


def feed_replay(num_players: int, game_seed: int, actions: list[int], me: int, out: dict[str, list[int]]):
    """Replay a Gnoming game from its deal seed and decisions, adding to ``out`` the counts of :func:`gnoming_feed`
    with the agent in seat ``me``; return the game (observed subclass of :class:`~grinch_env.gnoming.game.Game`)."""
    from grinch_env.gnoming.cards import HAZARD
    from grinch_env.gnoming.game import DISCARD_A, DISCARD_B, DRAW_PHASE, TAKE_A, Game

    last: list = [None]  # the previous turn's discard: (seat, pile, its depth after the discard, round)

    class Observed(Game):  # the game calls self._apply for every action, the forced ones too
        def _apply(self, action: int) -> None:
            seat = self.current
            if self.phase is DRAW_PHASE:
                d = last[0]
                if d is not None and d[3] == self.round and seat == (d[0] + 1) % num_players and len(self.piles[d[1]]) == d[2]:
                    who = "agent" if d[0] == me else "opponent" if seat != me else None
                    if who is not None:
                        out[who][1] += action == TAKE_A + d[1]
                last[0] = None
                super()._apply(action)
                return
            discard = action in (DISCARD_A, DISCARD_B) and self.held is not None and self.held != HAZARD
            tp = self.turn_player
            super()._apply(action)
            if discard:
                pile = action - DISCARD_A
                last[0] = (tp, pile, len(self.piles[pile]), self.round)
                if tp == me:
                    out["agent"][0] += 1
                elif (tp + 1) % num_players != me:
                    out["opponent"][0] += 1

    game = Observed(num_players, rng=game_seed)
    for action in actions:
        game.step(int(action))
    return game


def gnoming_feed(agent: str, num_players: int = 5, games: int = 200, opponent: str = "search", seed: int = 4242) -> dict[str, list[int]]:
    """Return, for ``agent`` and for the opponent copies whose left neighbour is another copy, ``[discards, taken]``.

    ``discards``: the seat's discards onto pile A or B (every one, the forced included; a Hazard leaves the round and
    is not counted); ``taken``: how many of them the next seat took from the top of that pile at its next draw.
    Every game of the match is replayed from its log (deal seed and decisions) with each applied action observed.
    """
    import json
    import tempfile
    from pathlib import Path

    from grinch_env.evaluation.evaluate import evaluate

    out = {"agent": [0, 0], "opponent": [0, 0]}
    with tempfile.TemporaryDirectory() as tmp:
        evaluate([agent] + [opponent] * (num_players - 1), num_players=num_players, num_games=games, seed=seed, game="gnoming", log_dir=tmp)
        for path in sorted(Path(tmp).glob("game_*.json")):
            log = json.loads(path.read_text())
            me = log["tournament"]["lineup"].index(0)  # the seat the agent played (the line-up lists agent indices by seat)
            game = feed_replay(num_players, log["game_seed"], [a for _, a in log["log"]], me, out)
            assert game.done and list(game.totals) == log["tournament"]["totals"], "the replay must reproduce the game"
    return out


def grinch_draws(agent: str, num_players: int = 2, games: int = 100, seed: int = 777) -> dict[str, Any]:
    """Return how ``agent``'s Grinch draws compare with greedy's at the same positions, in games against greedy.

    At each of the agent's draws where the draw pile and at least one discard-pile top are legal, greedy (a separate
    copy, which only looks) names its draw too.  ``counts[(agent's kind, greedy's kind)]`` counts the decisions by
    kind, ``"pile"`` (the draw pile, blind) or ``"top"`` (a discard pile's top, seen); for a learner checkpoint,
    ``p_own`` lists the policy's probability of its own choice where it draws blind and greedy takes a top.
    """
    from grinch_env.agents import make_agent
    from grinch_env.grinch.game import DRAW_DISCARD_BASE, DRAW_PILE_ACTION, SCORE_BASE

    judge = make_agent("greedy", num_players=num_players, game="grinch", seed=seed)
    try:
        from training.learner.search import load_learner

        net = load_learner(agent)[0]
    except (ValueError, OSError, KeyError):
        net = None  # a built-in agent: no policy to read
    out: dict[str, Any] = {"counts": {(a, b): 0 for a in ("pile", "top") for b in ("pile", "top")}, "p_own": []}

    def kind(action: int) -> str:
        return "pile" if action == DRAW_PILE_ACTION else "top"

    for observation, mask, action in _decisions_against_greedy(agent, num_players, games, seed):
        mask = mask.astype(bool)
        if not (mask[DRAW_PILE_ACTION] and mask[DRAW_DISCARD_BASE:SCORE_BASE].any()):
            continue
        other = int(judge.act(observation, mask))
        out["counts"][(kind(action), kind(other))] += 1
        if net is not None and kind(action) == "pile" and kind(other) == "top":
            st, at = net_tokens(net, "grinch", np.asarray(observation, np.float32)[None])
            with torch.inference_mode():
                logits = net(st, at)[0][0].masked_fill(~torch.from_numpy(mask), -1e9)
            out["p_own"].append(float(torch.softmax(logits, 0)[action]))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m training.learner.probe", description=__doc__.split("\n\n")[0])
    p.add_argument("probe", choices=["linear", "fit", "grinch-fit", "grinch-critic", "grinch-rows", "grinch-draws", "gnoming-feed"])
    p.add_argument("agent", nargs="?", help="grinch-rows / gnoming-feed: the agent to probe (a checkpoint or a built-in name)")
    p.add_argument("--players", type=int, default=None, help="table size (grinch-rows: default 2; gnoming-feed: 5)")
    p.add_argument("--opponent", default="search", help="gnoming-feed: the agent in every other seat")
    p.add_argument("--games", type=int, default=100, help="grinch-rows: games against greedy (seat-rotated, paired deals); "
                   "grinch-critic: self-play training games")
    p.add_argument("--held-out", type=int, default=64, help="grinch-critic: held-out self-play games")
    p.add_argument("--credit", default=None, choices=["game", "round", "pad"], help="default: round (Gnoming), game (Grinch)")
    p.add_argument("--tokens", type=int, default=2, choices=[1, 2], help="grinch-fit: the score-pad columns of tokens v1 or v2")
    p.add_argument("--value-global", action="store_true", help="grinch-fit: the value head reads the global token too")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--minibatch", type=int, default=256)
    p.add_argument("--steps", type=int, default=800)
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    if args.probe == "linear":
        linear()
    elif args.probe == "grinch-rows":
        if not args.agent:
            p.error("grinch-rows needs the agent to probe, e.g. checkpoints/learner_grinch or greedy")
        n = args.players or 2
        c = grinch_rows(args.agent, n, args.games)
        print(f"{args.agent}: {c['decisions']} discard / discard-pile draw decisions in {args.games} games at {n} players")
        print(f"  a best afterstate over the open rows: {c['best_open']}; over all rows: {c['best_all']}")
        print(f"  where the two bests differ ({c['differ']}): took the all-rows best {c['took_all']}, the open-rows best {c['took_open']}")
    elif args.probe == "grinch-draws":
        if not args.agent:
            p.error("grinch-draws needs the agent to probe, e.g. checkpoints/learner_grinch or greedy")
        n = args.players or 2
        c = grinch_draws(args.agent, n, args.games)
        k = c["counts"]
        print(f"{args.agent}: {sum(k.values())} draws with the pile and a discard-pile top legal, {args.games} games against greedy at {n} players")
        for mine in ("pile", "top"):
            print(f"  {mine:>4}: greedy the pile {k[(mine, 'pile')]}, greedy a top {k[(mine, 'top')]}")
        if c["p_own"]:
            q = np.asarray(c["p_own"])
            print(f"  where it draws blind and greedy takes a top: its policy's probability of the pile, mean {q.mean():.3f}, "
                  f"median {np.median(q):.3f}, at least 0.9 in {int((q >= 0.9).sum())} of {len(q)}")
    elif args.probe == "gnoming-feed":
        if not args.agent:
            p.error("gnoming-feed needs the agent to probe, e.g. checkpoints/learner_gnoming_league_373min or greedy")
        n = args.players or 5
        c = gnoming_feed(args.agent, n, args.games, args.opponent)
        print(f"{args.agent} against {n - 1} x {args.opponent}, {args.games} games: discards taken by the next seat at its draw")
        for who, (d, t) in c.items():
            label = args.agent if who == "agent" else f"{args.opponent} (next seat another {args.opponent})"
            print(f"  {label}: {t} of {d} ({t / max(d, 1):.3f})")
    elif args.probe == "grinch-critic":
        if not args.agent:
            p.error("grinch-critic needs a Grinch PPO learner checkpoint, e.g. checkpoints/learner_grinch")
        grinch_critic(args.agent, args.games, args.held_out, args.lr, args.minibatch, args.steps)
    elif args.probe == "fit":
        fit(args.credit or "round", args.lr, args.minibatch, args.steps)
    else:
        grinch_fit(args.tokens, args.credit or "game", args.value_global, args.lr, args.minibatch, args.steps)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

import json
import math
from pathlib import Path

import pytest

from grinch_env.evaluation.evaluate import EvalResult, evaluate, league_specs, main, summarise, write_report
from grinch_env.evaluation.ratings import mean_interval, rate_games, wilson_interval
from grinch_env.evaluation.tournament import lineups, schedule
from grinch_env.grinch.game import Game


def _rounds(table):
    """Return a game record's rounds from (grinch?, row, points) per seat, per round (the Grinch harness's Recorder entries)."""
    return [[{"role": "Grinch" if g else "Who", "row": row, "points": pts} for g, row, pts in rnd] for rnd in table]

def test_wilson_interval_of_7_out_of_10_by_hand():
    # p = 0.7, n = 10, z = 1.959964, z^2 = 3.841459: centre = (0.7 + z^2/20) / (1 + z^2/10) = 0.892073 / 1.384146 = 0.644494,
    # half-width = z / (1 + z^2/10) * sqrt(0.021 + z^2/400) = 1.416013 * 0.174939 = 0.247716.
    low, high = wilson_interval(7, 10)
    assert low == pytest.approx(0.396778, abs=1e-5)
    assert high == pytest.approx(0.892210, abs=1e-5)
    assert wilson_interval(0, 4)[0] == 0.0 and wilson_interval(4, 4)[1] == 1.0


def test_mean_interval_by_hand():
    mean, low, high = mean_interval([1, 2, 3, 4])
    # sample sd = sqrt(5/3), half-width = 1.959964 * sqrt(5/3) / 2 = 1.265143
    assert (mean, low, high) == pytest.approx((2.5, 1.234857, 3.765143), abs=1e-5)


def _plackett_luce_two_teams(winner, loser, mu=25.0, sigma=25 / 3):
    """Hand-written Plackett-Luce update for one winner and one loser (openskill defaults: beta = 25/6, tau = 25/300)."""
    beta, tau = 25 / 6, 25 / 300
    (mw, sw), (ml, sl) = winner, loser
    sw2, sl2 = sw * sw + tau * tau, sl * sl + tau * tau
    c = math.sqrt(sw2 + sl2 + 2 * beta * beta)
    ew, el = math.exp(mw / c), math.exp(ml / c)
    pw = ew / (ew + el)  # winner's chance to be first among both
    pl = el / (ew + el)
    new_w = (mw + sw2 / c * (1 - pw), math.sqrt(sw2) * math.sqrt(max(1 - sw2 / c**2 * pw * (1 - pw) * math.sqrt(sw2) / c, 1e-4)))
    new_l = (ml - sl2 / c * pl, math.sqrt(sl2) * math.sqrt(max(1 - sl2 / c**2 * pl * (1 - pl) * math.sqrt(sl2) / c, 1e-4)))
    return new_w, new_l


def test_openskill_ratings_match_hand_computed_plackett_luce():
    # Three games between A and B: A wins, A wins, B wins (an ABAB table counts each agent once, by its seats' mean total).
    games = [((0, 1), (90, 80)), ((1, 0, 1, 0), (50, 100, 60, 90)), ((0, 1), (70, 75))]
    ratings = rate_games(["A", "B"], games)
    a, b = (25.0, 25 / 3), (25.0, 25 / 3)
    a, b = _plackett_luce_two_teams(a, b)
    a, b = _plackett_luce_two_teams(a, b)  # A's mean 95 beats B's mean 55
    b, a = _plackett_luce_two_teams(b, a)
    assert ratings["A"]["mu"] == pytest.approx(a[0], abs=1e-9) and ratings["A"]["sigma"] == pytest.approx(a[1], abs=1e-9)
    assert ratings["B"]["mu"] == pytest.approx(b[0], abs=1e-9) and ratings["B"]["sigma"] == pytest.approx(b[1], abs=1e-9)
    # The first update by hand: c = sqrt(2 (sigma^2 + tau^2 + beta^2)) = 13.176, mu_A = 25 + 69.451/13.176/2 = 27.6354.
    first = rate_games(["A", "B"], games[:1])
    assert first["A"]["mu"] == pytest.approx(27.635389, abs=1e-5) and first["B"]["mu"] == pytest.approx(22.364611, abs=1e-5)
    assert first["A"]["ordinal"] == pytest.approx(first["A"]["mu"] - 3 * first["A"]["sigma"])


def test_schedule_rotates_seats_and_pairs_deals_exactly():
    assert lineups(2, 4) == [(0, 1, 0, 1), (1, 0, 1, 0)]
    assert lineups(2, 2) == [(0, 1), (1, 0)]
    assert lineups(3, 3) == [(0, 1, 2), (1, 2, 0), (2, 0, 1)]
    assert lineups(1, 3) == [(0, 0, 0)]
    assert schedule(2, 4, 5, seed=1) == [
        (1_000_000, (0, 1, 0, 1)),
        (1_000_000, (1, 0, 1, 0)),
        (1_000_001, (0, 1, 0, 1)),
        (1_000_001, (1, 0, 1, 0)),
        (1_000_002, (0, 1, 0, 1)),
    ]
    assert [d for d, _ in schedule(3, 3, 7, seed=0)] == [0, 0, 0, 1, 1, 1, 2]
    # 3 agents at 4 seats: blocks ABCA, BCAB, CABC, each rotated; every agent sits in every seat equally often.
    cycle = lineups(3, 4)
    assert len(cycle) == 12 and cycle[:4] == [(0, 1, 2, 0), (1, 2, 0, 0), (2, 0, 0, 1), (0, 0, 1, 2)]
    for seat in range(4):
        assert sorted(sum(lu[seat] == a for lu in cycle) for a in range(3)) == [4, 4, 4]
    # 5 agents at 4 seats (a league): windows of 4 consecutive agents, rotated; balanced too.
    cycle = lineups(5, 4)
    assert len(cycle) == 20 and all(len(set(lu)) == 4 for lu in cycle)
    for seat in range(4):
        assert [sum(lu[seat] == a for lu in cycle) for a in range(5)] == [4] * 5


def test_paired_games_replay_the_same_deal():
    result = evaluate(["greedy", "random"], num_players=2, num_games=4, seed=3)
    g0, g1 = result.games[0], result.games[1]
    assert g0["deal"] == g1["deal"] == 3_000_000 and g0["lineup"] == [0, 1] and g1["lineup"] == [1, 0]
    assert Game(2, rng=g0["deal"]).hands == Game(2, rng=g1["deal"]).hands
    assert result.games[2]["deal"] == 3_000_001


def test_evaluate_is_reproducible_and_independent_of_processes():
    args = (["greedy", "random", "expectimax:samples=2"], 3, 6)
    one = evaluate(*args, seed=5).to_dict()
    assert evaluate(*args, seed=5).to_dict() == one
    assert evaluate(*args, seed=5, processes=2).to_dict() == one
    assert evaluate(*args, seed=6).to_dict() != one


def test_summary_figures_on_a_scripted_pair_of_games():
    rounds_a = _rounds([[(1, 4, 20), (0, 5, 10)], [(0, 0, 12), (1, 6, 25)]])  # (grinch?, row, points) per seat, per round
    rounds_b = _rounds([[(1, 4, 18), (0, 4, 15)], [(0, 5, 10), (1, 0, 9)]])
    records = [
        {"index": 0, "deal": 0, "lineup": [0, 1], "totals": [32, 35], "winners": [1], "rounds": rounds_a},
        {"index": 1, "deal": 0, "lineup": [1, 0], "totals": [28, 24], "winners": [0], "rounds": rounds_b},
    ]
    result = summarise(["A", "B"], 2, 2, 0, "standard", records)
    a, b = result.per_agent["A"], result.per_agent["B"]
    assert (a["wins"], a["win_rate"], a["scores"]) == (0.0, 0.0, [32, 24])
    assert (b["wins"], b["win_rate"], b["mean_score"]) == (2.0, 1.0, 31.5)
    assert a["grinch"]["rounds"] == 2 and a["grinch"]["mean_round_points"] == (20 + 9) / 2
    assert a["who"]["mean_round_points"] == (12 + 15) / 2
    assert b["rows"][4] == {"row": "Rainbow", "usage_rate": 0.5, "points_per_game": 9.0, "mean_when_used": 18.0}
    assert a["rows"][0]["points_per_game"] == (12 + 9) / 2 and a["rows"][0]["usage_rate"] == 1.0
    assert result.balanced and result.cycle_size == 2


def test_tied_winners_share_the_win():
    rounds = _rounds([[(1, 4, 10), (0, 4, 10)]])
    rec = {"index": 0, "deal": 0, "lineup": [0, 1], "totals": [10, 10], "winners": [0, 1], "rounds": rounds}
    result = summarise(["A", "B"], 2, 1, 0, "standard", [rec])
    assert result.per_agent["A"]["wins"] == 0.5 == result.per_agent["B"]["wins"]


def test_bad_input_gets_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="unknown agent 'nope'"):
        evaluate(["greedy", "nope"], 4, 10)
    with pytest.raises(ValueError, match="table size .* 2..6, got 7"):
        evaluate(["greedy", "random"], 7, 10)
    with pytest.raises(ValueError, match="num_games must be an int >= 1, got 0"):
        evaluate(["greedy", "random"], 4, 0)
    with pytest.raises(ValueError, match="processes must be an int >= 1"):
        evaluate(["greedy"], 4, 1, processes=0)
    with pytest.raises(ValueError, match="no checkpoint at .*missing.pt: it does not exist"):
        evaluate(["greedy", str(tmp_path / "missing.pt")], 4, 1)
    (tmp_path / "broken.pt").write_text("junk")
    with pytest.raises(ValueError, match="cannot load checkpoint"):
        evaluate(["greedy", str(tmp_path / "broken.pt")], 4, 1)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no checkpoint"):
        league_specs(str(tmp_path / "empty"))
    with pytest.raises(ValueError, match="existing directory"):
        league_specs(str(tmp_path / "nowhere"))
    with pytest.raises(SystemExit):
        main(["--agents", "greedy,random", "--players", "9", "--games", "2"])


def test_report_files_and_cli(tmp_path, capsys):
    result = evaluate(["greedy", "random"], 4, 4, seed=0)
    assert isinstance(result, EvalResult)
    write_report(result, tmp_path / "r")
    data = json.loads((tmp_path / "r" / "results.json").read_text())
    assert data["num_games"] == 4 and set(data["per_agent"]) == {"greedy", "random"}
    assert len(data["games"]) == 4 and data["games"][1]["lineup"] == [1, 0, 1, 0]
    for name in ("win_rates.png", "scores.png", "rows.png", "table.txt"):
        assert (tmp_path / "r" / name).stat().st_size > 0
    assert main(["--agents", "greedy,random", "--players", "2", "--games", "2", "--no-progress", "--out", str(tmp_path / "c")]) == 0
    out = capsys.readouterr().out
    assert "greedy" in out and "win rate" in out and (tmp_path / "c" / "results.json").exists()
    # A spec with several options stays one agent: two seats, two agents.
    assert main(["--agents", "expectimax:samples=2,horizon_cards=6,random", "--players", "2", "--games", "2", "--no-progress",
                 "--out", str(tmp_path / "d")]) == 0
    data = json.loads((tmp_path / "d" / "results.json").read_text())
    assert list(data["per_agent"]) == ["expectimax:samples=2,horizon_cards=6", "random"]


def _tiny_token_run(parent: Path, run: str) -> Path:
    """An untrained token network's run directory (training.learner.run) named ``run`` under ``parent``."""
    import torch

    from training.learner.config import LearnerConfig
    from training.learner.run import Trainer

    torch.manual_seed(0)
    cfg = LearnerConfig(game="grinch", num_players=[2, 3], run_name=run, checkpoint_dir=str(parent), num_envs=2, seed=len(run),
                        net={"d_model": 8, "heads": 2, "ff": 8})
    Trainer(cfg).save()
    return parent / run


def test_league_rates_a_directory_of_checkpoints_with_the_baselines(tmp_path):
    for run in ("a", "b"):
        _tiny_token_run(tmp_path / "league", run)
    (tmp_path / "league" / "notes.txt").write_text("not a checkpoint")
    specs = league_specs(str(tmp_path / "league"))
    assert specs == [str(tmp_path / "league" / "a"), str(tmp_path / "league" / "b")]
    result = evaluate(specs + ["random", "greedy"], num_players=3, num_games=12, seed=0)
    assert list(result.per_agent) == ["a", "b", "random", "greedy"]
    assert result.cycle_size == 12 and result.balanced
    assert all(a["seat_games"] == 9 for a in result.per_agent.values())  # 12 games x 3 seats / 4 agents
    assert main(["--league", str(tmp_path / "league"), "--agents", "random", "--players", "2", "--games", "6", "--no-progress"]) == 0


def test_report_handles_a_perfect_record(tmp_path):
    result = evaluate(["greedy", "random"], 2, 2, seed=0)
    assert result.per_agent["greedy"]["win_rate"] == 1.0 and result.per_agent["greedy"]["win_rate_ci"][1] == 1.0
    write_report(result, tmp_path)
    assert (tmp_path / "win_rates.png").exists()


def test_agent_objects_holding_torch_networks_play_in_worker_processes():
    """A network agent object (as the trainer's evaluations pass) reaches spawn workers and plays the same games as in-process."""
    import tempfile

    from grinch_env.agents import make_agent

    with tempfile.TemporaryDirectory() as tmp:
        agent = make_agent(str(_tiny_token_run(Path(tmp), "tiny")), game="grinch", num_players=2)
    one = evaluate([agent, "greedy"], 2, 4, seed=3).to_dict()
    assert evaluate([agent, "greedy"], 2, 4, seed=3, processes=2).to_dict() == one
    assert one["agents"] == ["tiny/latest", "greedy"]


def test_worker_processes_run_torch_on_one_thread_each():
    import importlib

    import torch

    evaluate_module = importlib.import_module("grinch_env.evaluation.evaluate")

    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        evaluate_module._init_worker(["greedy"], 2, "grinch", {}, 0, 1, worker=False)
        assert torch.get_num_threads() == 2  # the calling process keeps its setting
        evaluate_module._init_worker(["greedy"], 2, "grinch", {}, 0, 1, worker=True)
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


def test_plots_name_the_match_explain_the_box_plot_and_repeated_names(tmp_path, monkeypatch):
    from matplotlib.figure import Figure

    saved = {}
    real_savefig = Figure.savefig

    def capture(fig, path, *args, **kwargs):
        ax = fig.axes[0]
        legend = ax.get_legend()
        saved[Path(path).name] = (ax.get_title(), [t.get_text() for t in legend.get_texts()] if legend else [], [t.get_text() for t in fig.texts])
        return real_savefig(fig, path, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", capture)
    result = evaluate(["greedy", "random", "random", "random"], 4, 4, seed=0)
    write_report(result, tmp_path)
    note = ("random#2 = copy 2 of random, random#3 = copy 3 of random "
            "(an agent given more than once plays as separate copies in their own seats, each listed apart)")
    match = "greedy vs 3 x random: 4 players, 4 games"
    assert saved["win_rates.png"] == (f"win rate, {match}", ["1 / players"], [note])
    assert saved["scores.png"] == (f"final totals, {match}", [
        "box: middle half of the games", "line: median", "triangle: mean",
        "whiskers: furthest totals within\n1.5 box heights of the box", "circles: totals beyond"], [note])
    assert saved["rows.png"] == (f"points per score-pad row, {match}", ["greedy", "random", "random#2", "random#3"], [note])
    assert result.table().splitlines()[1:3] == ["(highest total wins; 'as Grinch'/'as Who': mean points per round in that role)", note]
    two = evaluate(["expectimax", "greedy"], 4, 2, seed=0)
    write_report(two, tmp_path / "two")
    assert saved["win_rates.png"] == ("win rate, expectimax vs greedy: 4 players, 2 games", ["1 / players"], [])  # no repeats: no note
    assert "copy" not in two.table()


def test_pool_adds_blocks_of_one_lineup_and_refuses_what_does_not_pool(tmp_path, capsys):
    from grinch_env.evaluation.pool import _seed_list, pool, read_blocks
    from grinch_env.evaluation.pool import main as pool_main

    blocks = [evaluate(["greedy", "random", "random"], num_players=3, num_games=3, seed=s, game="gnoming").to_dict() for s in (0, 1)]
    pooled = pool(blocks)
    for name in ("greedy", "random", "random#2"):
        a, b = blocks[0]["per_agent"][name], blocks[1]["per_agent"][name]
        got = pooled[name]
        assert got["games"] == 6 and got["wins"] == a["wins"] + b["wins"]
        assert got["win_rate_ci"] == list(wilson_interval(a["wins"] + b["wins"], 6))
        assert got["mean_score"] == pytest.approx((sum(a["scores"]) + sum(b["scores"])) / 6)
    # by hand: 148 and 150 wins of two 300-game blocks pool to 298 of 600
    a = {"game": "gnoming", "num_players": 3, "agents": ["x"], "seed": 1, "balanced": True, "num_games": 300, "cycle_size": 3,
         "per_agent": {"x": {"seat_games": 300, "wins": 148.0, "scores": [1.0] * 300}}}
    b = dict(a, seed=2, per_agent={"x": {"seat_games": 300, "wins": 150.0, "scores": [-1.0] * 300}})
    x = pool([a, b])["x"]
    assert (x["games"], x["wins"], x["win_rate"], x["mean_score"]) == (600, 298.0, 298 / 600, 0.0)
    with pytest.raises(ValueError, match="share a seed"):
        pool([a, dict(b, seed=1)])
    with pytest.raises(ValueError, match="differ in agents"):
        pool([a, dict(b, agents=["y"])])
    with pytest.raises(ValueError, match="not balanced"):
        pool([a, dict(b, balanced=False, num_games=301)])
    for i, block in enumerate(blocks):
        (tmp_path / f"b{i}.json").write_text(json.dumps(block))
    assert pool_main([str(tmp_path / "b0.json"), str(tmp_path / "b1.json")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("gnoming, 3 players: 2 blocks (seeds 0, 1), 6 games") and f"greedy: 6 games, {pooled['greedy']['wins']:g} wins" in out
    with pytest.raises(SystemExit):
        pool_main([str(tmp_path / "b0.json"), str(tmp_path / "b0.json")])  # the same seed twice
    # a .jsonl file holds blocks one per line (blank lines skipped), and pools with .json files
    third = evaluate(["greedy", "random", "random"], num_players=3, num_games=3, seed=2, game="gnoming").to_dict()
    (tmp_path / "many.jsonl").write_text(json.dumps(blocks[1]) + "\n\n" + json.dumps(third) + "\n")
    assert [b["seed"] for b in read_blocks(tmp_path / "many.jsonl")] == [1, 2]
    assert pool_main([str(tmp_path / "b0.json"), str(tmp_path / "many.jsonl")]) == 0
    wins = sum(b["per_agent"]["greedy"]["wins"] for b in (*blocks, third))
    out = capsys.readouterr().out
    assert out.startswith("gnoming, 3 players: 3 blocks (seeds 0, 1, 2), 9 games") and f"greedy: 9 games, {wins:g} wins" in out
    assert _seed_list(list(range(4300, 4309))) == "9 seeds from 4300 to 4308"  # many seeds print as a range

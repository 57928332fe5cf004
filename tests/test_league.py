"""The league table (grinch_env.evaluation.league): tiny real leagues whose every figure is recomputed from the game records."""

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import grinch_env.agents as agents_module
from grinch_env.evaluation import league as league_module
from grinch_env.evaluation.league import (
    BASELINES,
    default_agents,
    default_games,
    league,
    main,
    rating_order,
    round_games,
)
from grinch_env.evaluation.ratings import Z95, rate_games, wilson_interval
from grinch_env.evaluation.tournament import DEAL_STRIDE


class FirstLegal:
    """Always the lowest legal action: no seed, no state, so every seat plays alike."""

    name = "first"

    def reset(self, seed=None):
        pass

    def act(self, observation, action_mask):
        return int(np.flatnonzero(action_mask)[0])


@pytest.fixture(scope="module")
def grinch3():
    """random and greedy at a 3-player Grinch table, 6 games per match (2 deals), as JSON."""
    return league("grinch", 3, ["random", "greedy"], games=6, seed=0).to_json()


@pytest.fixture(scope="module")
def gnoming_cli(tmp_path_factory):
    """The command on a 3-player Gnoming league of random and greedy, 3 games per match: (exit code, stdout, out dir)."""
    out = tmp_path_factory.mktemp("league")
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = main(["--game", "gnoming", "--players", "3", "--agents", "random,greedy", "--games", "3", "--quiet", "--out", str(out)])
    return code, buffer.getvalue(), out


def _lone_seat(match, game):
    """The seat of the lone agent (the harness's agent 0) in one game record."""
    seats = [s for s, a in enumerate(game["lineup"]) if a == 0]
    assert len(seats) == 1, (match["index"], game)
    return seats[0]


def _recomputed_wins(match, position=0):
    """Wins of the harness agent at ``position`` of the match's line-up, from the per-game winners (ties split)."""
    wins = 0.0
    for game in match["evaluation"]["games"]:
        seat = game["lineup"].index(position)
        if seat in game["winners"]:
            wins += 1.0 / len(game["winners"])
    return wins


def test_structure_every_ordered_pair_once(grinch3):
    data = grinch3
    assert (data["game"], data["num_players"], data["seed"]) == ("grinch", 3, 0)
    assert (data["games_requested"], data["games_per_match"], data["deals_per_match"], data["total_games"]) == (6, 6, 2, 12)
    assert data["parity"] == pytest.approx(1 / 3)
    assert [a["name"] for a in data["agents"]] == ["random", "greedy"]
    # One match per direction: the lone agent first in the line-up, then n - 1 = 2 copies of the field agent.
    assert [(m["alone"], m["field"], m["lineup"], m["num_games"], m["cycle_size"]) for m in data["matches"]] == [
        ("random", "greedy", ["random", "greedy", "greedy"], 6, 3),
        ("greedy", "random", ["greedy", "random", "random"], 6, 3),
    ]
    assert [(c["agent"], c["opponent"], c["match"], c["games"], c["deals"]) for c in data["cells"]] == [
        ("random", "greedy", 0, 6, 2),
        ("greedy", "random", 1, 6, 2),
    ]
    by_pair = {(c["agent"], c["opponent"]): c["win_share"] for c in data["cells"]}
    assert data["win_share_matrix"] == {
        "agents": ["random", "greedy"],
        "values": [[None, by_pair["random", "greedy"]], [by_pair["greedy", "random"], None]],
    }
    assert [r["rank"] for r in data["ratings"]] == [1, 2] and {r["agent"] for r in data["ratings"]} == {"random", "greedy"}
    assert all(r["games"] == 12 for r in data["ratings"])  # both agents play in every game of both matches


def test_win_shares_and_score_differences_recomputed_from_the_games(grinch3):
    for cell in grinch3["cells"]:
        match = grinch3["matches"][cell["match"]]
        assert match["alone"] == cell["agent"]
        wins = _recomputed_wins(match)
        assert cell["wins"] == pytest.approx(wins, abs=1e-12)
        assert cell["win_share"] == pytest.approx(wins / 6, abs=1e-12)
        assert cell["win_share_ci"] == pytest.approx(list(wilson_interval(wins, 6)), abs=1e-12)
        low, high = cell["win_share_ci"]
        assert cell["verdict"] == ("above" if low > 1 / 3 else "below" if high < 1 / 3 else "parity")
        # Score difference: per game the lone seat minus the mean of the other two, averaged per deal, then over the 2 deals.
        per_deal = {}
        for game in match["evaluation"]["games"]:
            seat, totals = _lone_seat(match, game), game["totals"]
            per_deal.setdefault(game["deal"], []).append(totals[seat] - (sum(totals) - totals[seat]) / 2)
        assert len(per_deal) == 2 and all(len(v) == 3 for v in per_deal.values())
        assert cell["score_diff"] == pytest.approx(np.mean([np.mean(v) for v in per_deal.values()]), abs=1e-9)
        lone_totals = [g["totals"][_lone_seat(match, g)] for g in match["evaluation"]["games"]]
        assert cell["mean_score"] == pytest.approx(sum(lone_totals) / 6, abs=1e-9)


def test_every_match_plays_the_same_deals_with_the_lone_agent_in_the_same_seats(grinch3):
    seq = None
    for match in grinch3["matches"]:
        games = match["evaluation"]["games"]
        deals = [g["deal"] for g in games]
        seats = [_lone_seat(match, g) for g in games]
        assert deals == [0 * DEAL_STRIDE + i // 3 for i in range(6)]  # seed 0: deals 0, 0, 0, 1, 1, 1
        assert sorted(seats[:3]) == sorted(seats[3:]) == [0, 1, 2]  # each deal once with the lone agent in each seat
        assert seq is None or (deals, seats) == seq
        seq = (deals, seats)


def test_identical_deterministic_agents_sit_exactly_at_parity():
    # Every seat plays the same deterministic policy, so the 3 games of a deal are one game, the lone agent once in each
    # seat: it wins that game's share exactly once per deal (2 wins in 6 games, ties split), and its score difference
    # summed over the seats of a deal is sum_s (t_s - (T - t_s) / 2) = T - T = 0.
    for game in ("grinch", "gnoming"):
        result = league(game, 3, [FirstLegal(), FirstLegal()], games=6)
        assert result.agents == ["first", "first#2"]
        for cell in result.cells:
            assert cell["wins"] == pytest.approx(2.0) and cell["win_share"] == pytest.approx(1 / 3)
            assert cell["score_diff"] == pytest.approx(0.0, abs=1e-9) and cell["verdict"] == "parity"
        first, second = ([g["totals"] for g in m.result.games] for m in result.matches)
        assert first == second and first[0] == first[1] == first[2] and first[3] == first[4] == first[5]


def test_two_players_one_match_read_from_both_sides():
    result = league("grinch", 2, ["random", "greedy"], games=4)
    data = result.to_json()
    assert [(m["alone"], m["field"], m["lineup"]) for m in data["matches"]] == [("random", "greedy", ["random", "greedy"])]
    assert sorted((c["agent"], c["opponent"]) for c in data["cells"]) == [("greedy", "random"), ("random", "greedy")]
    a, b = result.cell("random", "greedy"), result.cell("greedy", "random")
    assert a["match"] == b["match"] == 0 and a["games"] == b["games"] == 4
    assert a["win_share"] + b["win_share"] == pytest.approx(1.0)  # every win of the match goes to one of the two seats
    assert a["win_share"] == pytest.approx(_recomputed_wins(data["matches"][0], 0) / 4)
    assert b["win_share"] == pytest.approx(_recomputed_wins(data["matches"][0], 1) / 4)
    assert a["score_diff"] == pytest.approx(-b["score_diff"])
    assert "1 match of 4 games (4 games)" in result.table()


def test_games_are_rounded_up_to_a_multiple_of_the_table_size():
    assert [round_games(g, 3) for g in (1, 3, 4, 6, 7)] == [3, 3, 6, 6, 9]
    assert (default_games(2), default_games(4), default_games(7)) == (120, 120, 126)
    result = league("grinch", 3, ["random", "greedy"], games=7)
    assert (result.games_requested, result.games_per_match) == (7, 9)
    assert [m.result.num_games for m in result.matches] == [9, 9] and all(c["games"] == 9 and c["deals"] == 3 for c in result.cells)
    note = "note: 7 games per match rounded up to 9, a multiple of the table size 3"
    assert result.notes[0].startswith(note) and result.table().startswith(note)
    assert result.to_json()["games_requested"] == 7
    assert not league("grinch", 2, ["random", "greedy"], games=2).notes  # already whole deals: no note


def test_ratings_are_the_harness_ratings_of_every_game_in_rating_order():
    result = league("gnoming", 3, ["random", "greedy", FirstLegal()], games=3)
    assert len(result.matches) == 6  # 3 pairs, both directions
    assert rating_order(result.matches)[:7] == [(0, 0), (1, 0), (2, 0), (3, 0), (4, 0), (5, 0), (0, 1)]
    games = []
    for mi, g in rating_order(result.matches):
        m = result.matches[mi]
        rec = m.result.games[g]
        to_league = [m.alone] + [m.field] * 2
        games.append(([to_league[a] for a in rec["lineup"]], [-t for t in rec["totals"]]))  # lowest Gnoming total wins
    expected = rate_games(result.agents, games)
    for name in result.agents:
        r = result.ratings[name]
        assert (r["mu"], r["sigma"], r["ordinal"]) == (expected[name]["mu"], expected[name]["sigma"], expected[name]["ordinal"])
        assert r["ci"] == pytest.approx([r["mu"] - Z95 * r["sigma"], r["mu"] + Z95 * r["sigma"]])
        assert r["games"] == 12  # 4 matches of 3 games involve each agent
    ordinals = [r["ordinal"] for r in result.to_json()["ratings"]]
    assert ordinals == sorted(ordinals, reverse=True)


def test_same_seed_same_json_another_seed_other_deals():
    a = league("grinch", 3, ["random", "greedy"], games=3, seed=5).to_json()
    b = league("grinch", 3, ["random", "greedy"], games=3, seed=5).to_json()
    c = league("grinch", 3, ["random", "greedy"], games=3, seed=6).to_json()
    assert json.dumps(a) == json.dumps(b)
    assert [g["deal"] for g in c["matches"][0]["evaluation"]["games"]] == [6 * DEAL_STRIDE] * 3
    assert [g["totals"] for g in a["matches"][0]["evaluation"]["games"]] != [g["totals"] for g in c["matches"][0]["evaluation"]["games"]]


def test_command_prints_the_table_and_writes_json_png_and_text(gnoming_cli, tmp_path):
    code, out, directory = gnoming_cli
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "Gnoming A Round league: 2 agents, 3 players, 2 matches of 3 games (6 games), seed 0"
    assert "(lowest total wins)" in lines[1]
    assert "parity 1/3 = 0.333" in out and "95% Wilson interval" in out
    assert out.rstrip().endswith(f"wrote {directory / 'league.json'}, {directory / 'league.txt'}, {directory / 'league.png'}")
    data = json.loads((directory / "league.json").read_text(), parse_constant=lambda c: pytest.fail(f"{c} in league.json"))
    assert (data["game"], data["games_per_match"], len(data["cells"])) == ("gnoming", 3, 2)
    for cell in data["cells"]:  # the printed row holds the cell's share and interval
        row = next(line for line in lines if line.startswith(cell["agent"]) and "[" in line)
        lo, hi = cell["win_share_ci"]
        assert f"{cell['win_share']:.3f} [{lo:.3f}, {hi:.3f}]" in row
        assert cell["win_share"] == pytest.approx(_recomputed_wins(data["matches"][cell["match"]]) / 3)
    assert (directory / "league.txt").read_text() in out
    png = (directory / "league.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    import matplotlib.image

    height, width = matplotlib.image.imread(directory / "league.png").shape[:2]
    assert width > 600 and height > 400
    # Same seed, another directory: the same league.json, byte for byte.
    assert (
        main(["--game", "gnoming", "--players", "3", "--agents", "random,greedy", "--games", "3", "--quiet", "--out", str(tmp_path)]) == 0
    )
    assert (tmp_path / "league.json").read_bytes() == (directory / "league.json").read_bytes()


def test_figure_has_two_labelled_panels_and_annotated_cells(monkeypatch, tmp_path):
    from matplotlib.figure import Figure

    seen = {}
    real_savefig = Figure.savefig

    def spy(fig, path, *args, **kwargs):
        ratings, heat = fig.axes[:2]
        seen.update(
            suptitle=fig._suptitle.get_text(),
            titles=(ratings.get_title(), heat.get_title()),
            labels=(ratings.get_xlabel(), heat.get_xlabel(), heat.get_ylabel()),
            rating_ticks=[t.get_text() for t in ratings.get_yticklabels()],
            cell_texts=[t.get_text() for t in heat.texts],
        )
        return real_savefig(fig, path, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", spy)
    result = league("grinch", 3, ["random", "greedy"], games=6)
    result.plot(tmp_path / "x.png")
    assert (tmp_path / "x.png").stat().st_size > 10_000
    assert seen["suptitle"].startswith("Grinch Grow Your Heart league, 3 players: 6 games per match on the same 2 deals")
    assert seen["titles"] == ("ratings over all games, best first", "win share of the lone agent minus parity 1/3 = 0.33")
    assert seen["labels"] == ("openskill rating (Plackett-Luce)", "field: 2 copies of the column agent", "lone agent (one seat, rotated)")
    assert seen["rating_ticks"] == [f"{r + 1}. {a}" for r, a in enumerate(result.order)]
    for a in result.agents:
        for b in result.agents:
            if a != b:
                cell = result.cell(a, b)
                assert f"{cell['win_share'] - 1 / 3:+.2f}" in seen["cell_texts"] and f"share {cell['win_share']:.2f}" in seen["cell_texts"]


@pytest.mark.parametrize(
    ("argv", "wanted"),
    [
        (["--players", "3", "--agents", "random,nope"], ["unknown agent 'nope'", "'greedy'", "'random'"]),
        (["--players", "7", "--agents", "random,greedy"], ["--players", "grinch must be 2..6", "got 7"]),
        (["--game", "gnoming", "--players", "2", "--agents", "random,greedy"], ["gnoming must be 3..7", "got 2"]),
        (["--players", "3", "--agents", "random"], ["at least 2 agents", "got 1: ['random']"]),
        (["--players", "3", "--agents", ""], ["at least 2 agents", "got 0"]),
        (["--players", "3", "--agents", "random,greedy", "--games", "0"], ["--games", "int >= 1", "got 0"]),
        (["--players", "3", "--agents", "random,greedy", "--processes", "0"], ["--processes", ">= 1", "got 0"]),
        (["--game", "chess"], ["--game", "invalid choice", "gnoming", "grinch"]),
    ],
)
def test_bad_input_exits_2_naming_what_is_wrong_and_allowed(argv, wanted, capsys):
    with pytest.raises(SystemExit) as exc:
        main([*argv, "--quiet"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: python -m grinch_env.evaluation.league")
    for text in wanted:
        assert text in err


def test_api_raises_value_errors():
    with pytest.raises(ValueError, match=r"grinch must be 2\.\.6, got 1"):
        league("grinch", 1, ["random", "greedy"], games=2)
    with pytest.raises(ValueError, match="got -3"):
        league("grinch", 3, ["random", "greedy"], games=-3)
    with pytest.raises(ValueError, match="at least 2 agents"):
        league("gnoming", 3, ["search"], games=3)


def test_module_entry_point_exits_2():
    run = subprocess.run(
        [sys.executable, "-m", "grinch_env.evaluation.league", "--players", "9", "--agents", "random,greedy"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[1],
    )
    assert run.returncode == 2 and "grinch must be 2..6, got 9" in run.stderr and run.stdout == ""


def test_default_agents_with_and_without_a_champion(monkeypatch):
    real = agents_module.make_agent
    calls = []

    def no_champion(spec, *args, **kwargs):
        calls.append((spec, kwargs))
        raise RuntimeError("no torch here")

    monkeypatch.setattr(agents_module, "make_agent", no_champion)
    notes = []
    assert default_agents("grinch", 3, notes) == ["random", "greedy", "expectimax"]
    assert calls == [("champion", {"game": "grinch", "num_players": 3})]
    assert notes == ["note: 'champion' left out of the default agents (RuntimeError: no torch here)"]
    assert default_agents("gnoming", 5) == ["random", "greedy", "search"] == list(BASELINES["gnoming"])

    def with_champion(spec, *args, **kwargs):
        return real("random" if spec == "champion" else spec, *args, **kwargs)

    monkeypatch.setattr(agents_module, "make_agent", with_champion)
    notes = []
    assert default_agents("grinch", 4, notes) == ["random", "greedy", "expectimax", "champion"] and notes == []
    assert default_agents("gnoming", 3) == ["random", "greedy", "search", "champion"]


def test_default_league_leaves_a_champion_that_does_not_load_out_with_a_note(monkeypatch, capsys):
    def no_champion(spec, *args, **kwargs):
        if spec == "champion":
            raise ValueError("unknown agent 'champion'")
        return real(spec, *args, **kwargs)

    real = agents_module.make_agent
    monkeypatch.setattr(agents_module, "make_agent", no_champion)
    assert main(["--players", "3", "--games", "3", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("note: 'champion' left out of the default agents (ValueError: unknown agent 'champion')\n")
    assert "Grinch Grow Your Heart league: 3 agents, 3 players, 6 matches of 3 games (18 games), seed 0" in out
    for name in ("random", "greedy", "expectimax"):
        assert f"  {name} " in out


def test_default_agents_as_registered_now():
    # Whether or not "champion" is registered yet, the baselines come first and champion joins only if it loads.
    names = default_agents("grinch", 3)
    assert names[:3] == ["random", "greedy", "expectimax"] and names[3:] in ([], ["champion"])
    try:
        league_module._agents.make_agent("champion", game="grinch", num_players=3)
    except Exception:
        assert names[3:] == []
    else:
        assert names[3:] == ["champion"]

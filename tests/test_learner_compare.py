"""``python -m training.learner.compare``: several runs' curves on shared axes, one table size of runs over several."""

import csv

import pytest

from training.learner.compare import figure, main, read_curve

FIELDS = ["iteration", "samples", "games", "train_seconds", "wall_seconds", "opponent", "num_players", "win_share", "half_width",
          "explained_variance", "entropy", "value_loss", "epsilon"]


def write_curve(run_dir, rows):
    run_dir.mkdir()
    with open(run_dir / "curve.csv", "w", newline="") as f:
        w = csv.DictWriter(f, FIELDS)
        w.writeheader()
        for it, seconds, opponent, players, win in rows:
            w.writerow({"iteration": it, "samples": 0, "games": 0, "train_seconds": seconds, "wall_seconds": seconds, "opponent": opponent,
                        "num_players": players, "win_share": win, "half_width": 0.05, "explained_variance": 0.5, "entropy": "nan",
                        "value_loss": "nan", "epsilon": "nan"})


@pytest.fixture
def runs(tmp_path):
    write_curve(tmp_path / "sizes", [(0, 0, "greedy", 2, 0.4), (0, 0, "greedy", 4, 0.2), (1, 60, "greedy", 2, 0.6), (1, 60, "greedy", 4, 0.3)])
    write_curve(tmp_path / "two", [(0, 0, "greedy", 2, 0.45), (1, 120, "greedy", 2, 0.65), (1, 120, "expectimax", 2, 0.5)])
    return tmp_path


def test_players_keeps_that_table_size_only(runs):
    rows = read_curve(runs / "sizes", players=4)
    assert [(r["iteration"], r["win_share"]) for r in rows] == [("0", "0.2"), ("1", "0.3")]
    assert len(read_curve(runs / "sizes")) == 4


def test_plot_of_one_size_over_two_runs_is_written(runs, capsys):
    out = runs / "plots" / "both.png"
    assert main([str(runs / "sizes"), str(runs / "two"), "--players", "2", "--parity", "0.5", "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert capsys.readouterr().out == f"wrote {out}\n"


def test_a_size_the_run_lacks_is_an_error_that_names_the_sizes_it_has(runs, capsys):
    with pytest.raises(SystemExit) as e:
        main([str(runs / "sizes"), "--players", "3", "--out", str(runs / "x.png")])
    assert e.value.code == 2
    assert "has no curve point at 3 players; it has [2, 4]" in capsys.readouterr().err
    assert not (runs / "x.png").exists()


def test_a_directory_without_a_curve_is_an_error(runs, capsys):
    with pytest.raises(SystemExit):
        main([str(runs / "missing"), "--out", str(runs / "x.png")])
    assert "missing/curve.csv' does not exist: give run directories that hold a curve.csv" in capsys.readouterr().err


def test_each_panel_holds_the_runs_with_points_against_its_opponent_and_a_run_keeps_its_colour(runs):
    curves = {"sizes": read_curve(runs / "sizes", 2), "two": read_curve(runs / "two", 2)}
    curves["vs_expectimax"] = [r for r in curves.pop("two") if r["opponent"] == "expectimax"]
    fig = figure(curves, parity=0.5, title="t")
    greedy, expectimax, variance = fig.axes
    assert greedy.get_title() == "t vs greedy" and expectimax.get_title() == "t vs expectimax"
    assert [line.get_label() for line in greedy.get_lines()] == ["sizes", "parity"]
    assert [line.get_label() for line in expectimax.get_lines()] == ["vs_expectimax", "parity"]
    assert list(expectimax.get_lines()[0].get_ydata()) == [0.5]
    # the explained variance of a run whose only opponent is not the first panel's is drawn too
    assert [line.get_label() for line in variance.get_lines()] == ["sizes", "vs_expectimax"]
    assert variance.get_lines()[1].get_color() == expectimax.get_lines()[0].get_color() == "C1"
    assert greedy.get_lines()[0].get_color() == variance.get_lines()[0].get_color() == "C0"

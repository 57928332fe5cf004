"""Smoke tests: whole random games on the rules engine, and ``python -m grinch_env``."""

import subprocess
import sys

import numpy as np
from grinch_env.game import Game, decisions_per_game

from grinch_env.__main__ import main


def test_random_game_has_exact_length_and_conserves_cards():
    for n in range(2, 7):
        game = Game(n, rng=n)
        rng = np.random.default_rng(0)
        steps = 0
        while not game.done:
            legal = game.legal_actions()
            game.step(legal[rng.integers(len(legal))])
            steps += 1
            assert sum(map(len, game.hands)) + sum(map(len, game.piles)) + len(game.draw_pile) == 48
        assert steps == decisions_per_game(n)


def test_main_prints_a_seeded_game(capsys):
    assert main(["--players", "4", "--seed", "7"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Grinch Grow Your Heart: 4 players, 4 rounds, seed 7, random agents")
    for r in range(1, 5):
        assert f"=== end of round {r}/4: scoring" in out
    assert out.count("Round ") == 4  # every round's table
    scored = [line for line in out.splitlines() if line.startswith("  player_") and " score " in line]
    assert len(scored) == 16 and all(line.endswith(" points") for line in scored)  # 4 players x 4 rounds
    final = out.split("=== final scores ===")[1].strip().splitlines()
    assert [line.split(":")[0] for line in final[:4]] == [f"player_{i}" for i in range(4)]
    totals = [int(line.rsplit("total ", 1)[1]) for line in final[:4]]
    winners = [f"player_{i}" for i, t in enumerate(totals) if t == max(totals)]
    assert final[4].split(": ")[1] == ", ".join(winners)
    assert final[5].startswith("rewards: player_0 ")
    assert main(["--players", "4", "--seed", "7"]) == 0
    assert capsys.readouterr().out == out  # the same seed plays the same game


def test_main_as_a_module_and_bad_arguments():
    run = subprocess.run([sys.executable, "-m", "grinch_env", "--players", "2", "--seed", "3", "--num-rounds", "1"], capture_output=True, text=True, check=True)
    assert "1 rounds, seed 3" in run.stdout and "=== end of round 1/1" in run.stdout and "rewards: player_0" in run.stdout
    bad = subprocess.run([sys.executable, "-m", "grinch_env", "--first-grinch", "5"], capture_output=True, text=True)
    assert bad.returncode != 0 and "first_grinch must be a seat in 0..3 for 4 players" in bad.stderr
    bad = subprocess.run([sys.executable, "-m", "grinch_env", "--players", "7"], capture_output=True, text=True)
    assert bad.returncode == 2 and "invalid choice: 7" in bad.stderr

"""Smoke tests: whole random games on the rules engine, and ``python -m grinch_env``."""

import subprocess
import sys

import numpy as np

from grinch_env.__main__ import main
from grinch_env.grinch.game import Game, decisions_per_game


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


def replay_printed_hands(out: str, n: int) -> list[tuple[int, int, list[str]]]:
    """Rebuild every hand from the printed deal and moves; return (round, seat, hand) at each scoring line, checked against it."""
    checked = []
    rnd = hands = None
    for line in out.splitlines():
        if line.startswith("=== round "):
            rnd = int(line.split()[2].split("/")[0])
        elif line.startswith("dealt: "):
            hands = [part.split(") ")[1].split() for part in line[len("dealt: "):].split(" | ")]
            assert len(hands) == n and all(len(h) == 2 for h in hands)
        elif line.startswith("  seat "):
            words = line.split()
            seat, verb = int(words[1]), words[3]
            if verb == "draws" and words[4] != "from":  # a Who's two automatic draws
                hands[seat] += words[4:6]
            elif verb == "draws":  # the Grinch from the draw pile: "...draw pile: N4"
                hands[seat].append(words[-1])
            elif verb == "takes":
                hands[seat].append(words[4])
            elif verb == "discards":
                hands[seat].remove(words[4])
            else:
                assert verb == "scores"
                shown = line.split(" with ")[1].split()
                assert sorted(hands[seat]) == sorted(shown), (rnd, seat)
                checked.append((rnd, seat, shown))
    return checked


def test_main_prints_every_move_and_labelled_score_pads(capsys):
    assert main(["--players", "4", "--seed", "7"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    # Hand-checked against the rules: the deal, each Who's automatic draws, the Grinch's two draws, then its discard.
    assert lines[:15] == [
        "Grinch Grow Your Heart: 4 players, 4 rounds, seed 7, random agents (every hand shown)",
        "",
        "=== round 1/4: seat 0 is the Grinch; draw pile 40 cards ===",
        "dealt: seat 0 (Grinch) P6 P4' | seat 1 (Who) O5' W5 | seat 2 (Who) O1 O6 | seat 3 (Who) P1' O5",
        "-- turn 1 --",
        "  seat 1 (Who) draws W2' N2' from the draw pile",
        "  seat 1 (Who) discards O5'",
        "  seat 2 (Who) draws N1' O3' from the draw pile",
        "  seat 2 (Who) discards O3'",
        "  seat 3 (Who) draws N3 W1' from the draw pile",
        "  seat 3 (Who) discards O5",
        "  seat 0 (Grinch) takes O5 from seat 3's pile",
        "  seat 0 (Grinch) takes O5' from seat 1's pile",
        "  seat 0 (Grinch) discards P6",
        "-- turn 2 --",
    ]
    moves = [line for line in lines if line.startswith("  seat ") and " draws " not in line or "draw pile: " in line]
    assert len(moves) == decisions_per_game(4)  # every decision printed once
    assert sum(" (Who) draws " in line for line in lines) == 4 * 3 * 3  # 4 rounds x 3 turns x 3 Whos
    assert len(replay_printed_hands(out, 4)) == 16  # the printed moves rebuild every scored hand
    pads = [i for i, line in enumerate(lines) if line.startswith("player ")]
    assert len(pads) == 4  # after rounds 1-3, and the final scores
    assert lines[pads[0]].split() == ["player", "Wreaths", "Noise", "Ornaments", "Presents", "Rainbow", "Match", "Run", "total"]
    assert lines[pads[0] + 1:pads[0] + 5] == [
        "player_0        .      .         10         .        .      .    .     10",
        "player_1       10      .          .         .        .      .    .     10",
        "player_2        .      .          .         4        .      .    .      4",
        "player_3        .      .          .         .        .      0    .      0",
    ]
    final = out.split("=== final scores ===")[1].strip().splitlines()
    totals = [int(line.split()[-1]) for line in final[1:5]]
    scored = {}
    for line in lines:
        if line.startswith("  seat ") and " scores " in line:
            seat = int(line.split()[1])
            scored[seat] = scored.get(seat, 0) + int(line.split(" for ")[1].split()[0])
    assert totals == [scored[s] for s in range(4)] == [41, 32, 16, 25]
    assert final[5:] == ["winner: player_0", "rewards: player_0 +1.000, player_1 -0.333, player_2 -0.333, player_3 -0.333"]
    assert main(["--players", "4", "--seed", "7"]) == 0
    assert capsys.readouterr().out == out  # the same seed plays the same game


def test_main_moves_rebuild_every_hand_at_every_table_size(capsys):
    for n in range(2, 7):
        assert main(["--players", str(n), "--seed", str(n)]) == 0
        assert len(replay_printed_hands(capsys.readouterr().out, n)) == n * Game(n).num_rounds


def test_main_as_a_module_and_bad_arguments():
    run = subprocess.run([sys.executable, "-m", "grinch_env", "--players", "2", "--seed", "3", "--num-rounds", "1"], capture_output=True, text=True, check=True)
    assert "1 rounds, seed 3" in run.stdout and "=== round 1/1" in run.stdout and "rewards: player_0" in run.stdout
    bad = subprocess.run([sys.executable, "-m", "grinch_env", "--first-grinch", "5"], capture_output=True, text=True)
    assert bad.returncode != 0 and "first_grinch must be a seat in 0..3 for 4 players" in bad.stderr
    bad = subprocess.run([sys.executable, "-m", "grinch_env", "--players", "7"], capture_output=True, text=True)
    assert bad.returncode == 2 and "argument --players: 7 is not a table size of Grinch Grow Your Heart: choose from 2..6" in bad.stderr
    bad = subprocess.run([sys.executable, "-m", "grinch_env", "--game", "gnoming", "--players", "2"], capture_output=True, text=True)
    assert bad.returncode == 2 and "argument --players: 2 is not a table size of Gnoming A Round: choose from 3..7" in bad.stderr

import io

import numpy as np
import pytest

from grinch_env.agents import make_agent
from grinch_env.gnoming.encoding import action_mask, encode
from grinch_env.gnoming.game import BOUNCE, DISCARD_A, DISCARD_B, DRAW, DRAW_PHASE, HAZARD_PHASE, PASS, PLAY, TAKE_A, TAKE_B, Game
from grinch_env.gnoming.play import main, parse_move, render_for
from grinch_env.play_base import main as grinch_main


def run(argv, text, entry=main):
    out = io.StringIO()
    code = entry(argv, io.StringIO(text), out)
    return code, out.getvalue()


def test_a_scripted_full_game_at_3_players_matches_the_engine():
    # The human (seat 1) always types "1", the first legal move; replay the same game directly and compare.
    code, out = run(["--players", "3", "--opponents", "greedy,random", "--seed", "4", "--seat", "1"], "1\n" * 2000)
    assert code == 0
    game = Game(3, rng=4)
    seeds = np.random.SeedSequence(4).generate_state(3)
    agents = {2: make_agent("greedy", seed=int(seeds[2]), game="gnoming"), 0: make_agent("random", seed=int(seeds[0]), game="gnoming")}
    asked = 0
    while not game.done:
        seat = game.current
        if seat == 1:
            asked += 1
            game.step(game.legal_actions()[0])
        else:
            game.step(agents[seat].act(encode(game, seat), action_mask(game, seat)))
    t = game.totals
    assert out.count("Your move") == asked
    assert f"Final totals: seat 0 (random) {t[0]}, seat 1 (you) {t[1]}, seat 2 (greedy) {t[2]}" in out
    for r, scores in enumerate(game.round_scores):
        assert f"-- round {r + 1} over; scores: seat 0 {scores[0]}, seat 1 {scores[1]}, seat 2 {scores[2]}" in out
    winners = game.winners()
    assert out.rstrip().endswith("You win!" if winners == [1] else "You share the win!" if 1 in winners
                                 else "Winner: " + ", ".join(f"seat {w} ({['random', 'you', 'greedy'][w]})" for w in winners))
    # The first screen: everything face down, the two pile tops, the reveal prompt.
    start = out.split("Your move")[0]
    assert "Gnoming A Round: 3 players, you are seat 1; lowest total after 3 rounds wins." in start
    assert "Round 1 of 3, reveal; * = to act" in start
    assert "seat 0 (random): turn up slot 0\nseat 0 (random): turn up slot 3\n" in start
    # Seat 0 turned up an 8 (kind 5) and a 7 (kind 4); seats 1 and 2 are all face down.
    assert [Game(3, rng=4).layouts[0][p] for p in (0, 3)] == [5, 4]
    assert ("seat 0 random           seat 1 you *            seat 2 greedy\n"
            "  8  ??  ??              ??  ??  ??              ??  ??  ??\n"
            "  7  ??  ??              ??  ??  ??              ??  ??  ??\n"
            " ??  ??  ??              ??  ??  ??              ??  ??  ??\n") in start
    assert "draw pile: 81 cards" in start
    assert "(turn up one of your cards):\n   1) turn up slot 0" in out


def test_the_table_shows_grids_piles_held_card_and_scores():
    game = Game(3, rng=2)
    while not (game.phase is PLAY and game.current == 0):
        game.step(game.legal_actions()[0])
    text = render_for(game, ["you", "greedy", "search"])
    up = [k for k, u in zip(game.layouts[0], game.face_up[0]) if u]
    assert len(up) >= 2 and "??" in text
    name = {k: v for k, v in enumerate(("3", "4", "5", "6", "7", "8", "-1", "-2", "-3", "-4", "H", "M"))}
    assert f"held card: {name[game.held]}" in text
    assert f"pile A ({len(game.piles[0])} cards, top last): " in text
    assert f"draw pile: {len(game.draw_pile)} cards" in text
    assert "totals: seat 0 0, seat 1 0, seat 2 0" in text
    row = " ".join(f"{name[game.layouts[1][p]] if game.face_up[1][p] else '??':>3}" for p in range(3))
    assert row in text


def test_bad_input_prompts_again_with_a_message_and_eof_exits_cleanly():
    code, out = run(["--players", "3", "--opponents", "greedy", "--seed", "0"], "banana\nslot 9\ntake C\n99\n0\ndraw\n")
    assert code == 0
    for bad in ("banana", "slot 9", "take C", "99", "0", "draw"):  # drawing is not legal in the reveal
        assert f"{bad!r} is not a legal move now. Legal moves:" in out
    assert out.count("Your move") == 1
    assert out.rstrip().endswith("Game left. Bye!")


def test_help_and_quit():
    code, out = run(["--players", "4", "--opponents", "random", "--seed", "2"], "help\nquit\n")
    assert code == 0 and "Legal moves:" in out and out.rstrip().endswith("Game left. Bye!")


def _state(check, n=3, seed=0):
    game = Game(n, rng=seed)
    rng = np.random.default_rng(seed)
    while not check(game):
        game.step(int(rng.choice(game.legal_actions())))
    return game


def test_parse_move_reads_numbers_and_names():
    game = _state(lambda g: g.phase is DRAW_PHASE and len(g.legal_actions()) == 3)
    legal = game.legal_actions()
    assert parse_move("draw", game, legal) == DRAW
    assert parse_move("take A", game, legal) == TAKE_A and parse_move("t b", game, legal) == TAKE_B
    assert parse_move("2", game, legal) == legal[1]
    assert parse_move("4", game, legal) is None and parse_move("slot 3", game, legal) is None
    game = _state(lambda g: g.phase is PLAY and g.held_source == "draw" and len(g.legal_actions()) == 11)
    legal = game.legal_actions()
    assert parse_move("slot 4", game, legal) == 4 and parse_move("p 0", game, legal) == 0
    assert parse_move("discard B", game, legal) == DISCARD_B and parse_move("d a", game, legal) == DISCARD_A
    assert parse_move("pass", game, legal) is None
    game = _state(lambda g: g.phase is HAZARD_PHASE)
    legal = game.legal_actions()
    assert parse_move("pass", game, legal) == PASS
    down = [p for p in range(9) if not game.face_up[game.current][p]]
    assert parse_move(f"flip {down[0]}", game, legal) == down[0]
    game = _state(lambda g: g.phase is BOUNCE)
    legal = game.legal_actions()
    assert any(parse_move(f"stop {x}", game, legal) in (DISCARD_A, DISCARD_B) for x in "ab")


def test_play_py_dispatches_to_gnoming():
    code, out = run(["--game", "gnoming", "--players", "3", "--opponents", "search:samples=2", "--seed", "1"], "quit\n", entry=grinch_main)
    assert code == 0 and "Gnoming A Round: 3 players" in out and "Game left. Bye!" in out
    code, out = run(["--players", "2", "--opponents", "random", "--seed", "0"], "", entry=grinch_main)
    assert code == 0 and "Grinch Grow Your Heart: 2 players" in out


@pytest.mark.parametrize("argv, message", [
    (["--players", "2"], "--players must be in 3..7, got 2"),
    (["--players", "3", "--seat", "3"], "--seat must be in 0..2"),
    (["--players", "3", "--opponents", "greedy,random,search"], "3 opponents given but a 3-player table has 2 other seats"),
    (["--opponents", "expectimax"], "unknown agent 'expectimax' for Gnoming A Round"),
])
def test_bad_arguments_are_refused_with_a_message(argv, message, capsys):
    with pytest.raises(SystemExit):
        main(argv, io.StringIO(""), io.StringIO())
    assert message in capsys.readouterr().err


def test_watch_mode_prints_every_layout_and_the_final_totals(capsys):
    from grinch_env.__main__ import main as watch_main

    assert watch_main(["--game", "gnoming", "--players", "3", "--seed", "4"]) == 0
    out = capsys.readouterr().out
    game = Game(3, rng=4)
    agents = [make_agent("random", seed=int(s), game="gnoming") for s in np.random.SeedSequence(4).generate_state(3)]
    while not game.done:
        p = game.current
        game.step(agents[p].act(encode(game, p), action_mask(game, p)))
    assert out.startswith("Gnoming A Round: 3 players (random, random, random), seed 4; lowest total after 3 rounds wins.")
    assert out.count("Round 1 of 3, reveal") == 1 and out.count("Round 2 of 3") == 1 and out.count("Round 3 of 3") == 1
    assert f"Final totals: seat 0 (random) {game.totals[0]}, seat 1 (random) {game.totals[1]}, seat 2 (random) {game.totals[2]}" in out
    with pytest.raises(SystemExit) as exit_:
        watch_main(["--game", "gnoming", "--players", "2"])
    assert exit_.value.code == 2
    assert "argument --players: 2 is not a table size of Gnoming A Round: choose from 3..7" in capsys.readouterr().err

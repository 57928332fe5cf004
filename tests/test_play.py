import io

import numpy as np
import pytest

from grinch_env.agents import make_agent
from grinch_env.grinch.cards import parse_card
from grinch_env.grinch.encoding import action_mask, encode
from grinch_env.grinch.game import Game
from grinch_env.grinch.play import main, parse_move


def run(argv, text):
    out = io.StringIO()
    code = main(argv, io.StringIO(text), out)
    return code, out.getvalue()


def test_a_scripted_full_game_matches_the_engine():
    # The human always types "1" (the first legal move); replay the same game directly and compare the totals.
    code, out = run(["--players", "2", "--opponents", "greedy", "--seed", "4", "--seat", "1"], "1\n" * 200)
    assert code == 0
    game = Game(2, rng=4)
    opponent = make_agent("greedy", seed=int(np.random.SeedSequence(4).generate_state(2)[0]))
    while not game.done:
        seat = game.current
        game.step(game.legal_actions()[0] if seat == 1 else opponent.act(encode(game, seat), action_mask(game, seat)))
    assert f"Final totals: seat 0 (greedy) {game.totals[0]}, seat 1 (you) {game.totals[1]}" in out
    assert out.count("Your move:") == 6 * (3 + 3 * 3 + 2) // 2  # per round: 3 discards as Who or 6 draws + 3 discards as Grinch, 1 score


def test_the_prompt_shows_hand_piles_pads_moves_and_row_values():
    code, out = run(["--players", "3", "--opponents", "random,greedy", "--seed", "1"], "")
    assert code == 0
    for text in ("YOUR HAND:", "pile [", "pad [", "row values of the cards in hand", "Rainbow", "draw pile", "[draw 1]", "Game left"):
        assert text in out


def test_bad_input_lists_the_legal_moves_and_eof_exits_cleanly():
    code, out = run(["--players", "2", "--opponents", "random", "--seed", "0"], "banana\nd Z9\n99\nscore Match\n")
    assert code == 0
    assert "'banana' is not a legal move now. Legal moves:" in out
    assert "'d Z9' is not a legal move now" in out and "'99' is not a legal move now" in out
    assert "'score Match' is not a legal move now" in out  # seat 0 starts as the Grinch: drawing, not scoring
    assert out.rstrip().endswith("Game left. Bye!")


def test_a_whos_automatic_draws_are_announced():
    # seed 3, seat 2 of 4 is a Who in round 1; after discarding W4 it draws N2' and W1' at its next turn.
    code, out = run(["--players", "4", "--opponents", "expectimax,greedy,random", "--seed", "3", "--seat", "2"], "d W4\n")
    assert "YOUR HAND: W4 W5' N2 N3   (Who)" in out
    assert "seat 2 (you) discards W4" in out and "you drew N2' W1'" in out
    assert "YOUR HAND: W1' W5' N2 N2' N3   (Who)" in out


def test_quit_leaves_the_game():
    code, out = run(["--players", "4", "--opponents", "greedy", "--seed", "2"], "help\nquit\n")
    assert code == 0 and "Legal moves:" in out and "Game left. Bye!" in out


def _state(phase_check):
    game = Game(2, rng=0)
    while not phase_check(game):
        game.step(game.legal_actions()[0])
    return game


def test_parse_move_reads_numbers_and_names():
    game = _state(lambda g: g.phase == "discard" and g.current == 1)
    legal = game.legal_actions()
    hand = sorted(game.hands[1])
    from grinch_env.grinch.cards import card_name

    name = card_name(hand[0])
    assert parse_move(f"d {name}", game, legal) == hand[0]
    assert parse_move(f"discard {name.lower()}", game, legal) == hand[0]
    assert parse_move(name, game, legal) == hand[0]
    assert parse_move("2", game, legal) == legal[1]
    assert parse_move("0", game, legal) is None and parse_move(str(len(legal) + 1), game, legal) is None
    assert parse_move("draw pile", game, legal) is None  # a Who does not draw by choice
    game = _state(lambda g: g.phase == "draw" and g.turn == 2)
    legal = game.legal_actions()
    assert parse_move("draw pile", game, legal) == 48
    assert parse_move("draw 1", game, legal) == 50
    assert parse_move("draw 5", game, legal) is None
    game = _state(lambda g: g.phase == "score")
    legal = game.legal_actions()
    assert parse_move("score Match", game, legal) == 60
    assert parse_move("s ru", game, legal) == 61
    assert parse_move("score r", game, legal) is None  # ambiguous: Rainbow or Run


def test_a_card_name_without_the_copy_mark_finds_the_other_copy():
    game = _state(lambda g: g.phase == "discard" and g.current == 1)
    game.hands[1] = [parse_card("W3'"), parse_card("N1")]
    legal = game.legal_actions()
    assert parse_move("d W3", game, legal) == parse_card("W3'")
    assert parse_move("d N1'", game, legal) is None


@pytest.mark.parametrize("argv, message", [
    (["--players", "2", "--seat", "2"], "--seat must be in 0..1"),
    (["--players", "8"], "num_players must be an int in 2..6"),
    (["--players", "2", "--opponents", "greedy,random"], "2 opponents given but a 2-player table has 1 other seats"),
    (["--opponents", "nobody"], "unknown agent 'nobody'"),
])
def test_bad_arguments_are_refused_with_a_message(argv, message, capsys):
    with pytest.raises(SystemExit):
        main(argv, io.StringIO(""), io.StringIO())
    assert message in capsys.readouterr().err

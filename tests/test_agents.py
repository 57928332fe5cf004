import numpy as np
import pytest

from grinch_env.agents import make_agent, parse_spec, split_specs
from grinch_env.grinch.agents import GreedyAgent, RandomAgent, decode
from grinch_env.grinch.agents.expectimax import ExpectimaxAgent
from grinch_env.grinch.agents.handeval import HandEvaluator
from grinch_env.grinch.cards import parse_card
from grinch_env.grinch.encoding import action_mask, encode
from grinch_env.grinch.game import DRAW_PILE_ACTION, PHASE_DISCARD, PHASE_DONE, PHASE_SCORE, SCORE_BASE, Game
from grinch_env.grinch.scoring import MATCH_ROW, NUM_ROWS, RAINBOW_ROW, RUN_ROW, STANDARD_LAYOUT, bonus_points, resolve_layout, row_scores

SPECS = ["random", "greedy", "expectimax:samples=4"]


def cards(text):
    return [parse_card(c) for c in text.split()]


def play(game, agents, record=None):
    """Play ``game`` to the end with one agent per seat (Game.step raises on an illegal action)."""
    while not game.done:
        seat = game.current
        action = agents[seat].act(encode(game, seat), action_mask(game, seat))
        assert isinstance(action, int)
        if record is not None:
            record.append(action)
        game.step(action)
    return game


@pytest.mark.parametrize("layout", ["standard", "none"])
def test_hand_evaluator_agrees_with_the_scoring_module(layout):
    table = resolve_layout(layout)
    ev = HandEvaluator(table)
    rng = np.random.default_rng(0)
    for size in (4, 5, 6):
        hands = np.array([rng.choice(48, size, replace=False) for _ in range(400)])
        rows, bonus = ev.score(hands)
        for h, r, b in zip(hands, rows, bonus):
            assert tuple(r) == row_scores(h.tolist())
            assert b == bonus_points(h.tolist(), table)


def test_hand_evaluator_hand_checked_hand():
    # W1' needs 3 Noise: N2 N3 N4 -> +10; N2' needs 1 Presents: none -> 0.
    rows, bonus = HandEvaluator(STANDARD_LAYOUT).score(np.array(cards("W1' N2 N3 N4 O5")))
    assert rows.tolist() == [1, 9, 5, 0, 1 + 4 + 5, 0, 25]
    assert bonus == 10


@pytest.mark.parametrize("num_players", [2, 3, 4, 5, 6])
def test_every_agent_plays_only_legal_actions(num_players):
    for g in range(3 if num_players < 5 else 1):
        agents = [make_agent(SPECS[(s + g) % 3], seed=100 * g + s) for s in range(num_players)]
        game = play(Game(num_players, rng=1000 * num_players + g), agents)
        assert game.phase == PHASE_DONE
        assert [sum(v is not None for v in sheet) for sheet in game.score_sheet] == [game.num_rounds] * num_players


@pytest.mark.parametrize("spec", SPECS)
def test_agents_are_deterministic_given_their_seed(spec):
    runs = []
    for _ in range(2):
        agents = [make_agent(spec, seed=s) for s in range(2)]
        actions = []
        play(Game(2, rng=5), agents, actions)
        runs.append(actions)
    assert runs[0] == runs[1]
    agents = [make_agent(spec, seed=s + 7) for s in range(2)]
    for a, s in zip(agents, (0, 1)):
        a.reset(s)  # reset(seed) restores the same decisions
    actions = []
    play(Game(2, rng=5), agents, actions)
    assert actions == runs[0]


@pytest.mark.parametrize("spec", SPECS)
def test_no_peeking_decisions_do_not_change_with_hidden_information(spec):
    """Resampling everything hidden from the actor leaves its observation, hence its action, unchanged."""
    rng = np.random.default_rng(3)
    checked = 0
    for num_players in (2, 4):
        game = Game(num_players, rng=11)
        driver = make_agent("random", seed=0)
        while not game.done:
            seat = game.current
            other = game.resample_from_infostate(seat, rng)
            assert other.hands != game.hands or other.draw_pile != game.draw_pile or len(game.legal_actions()) == 0
            if len(game.legal_actions()) > 1:
                agent = make_agent(spec, seed=42)
                a1 = agent.act(encode(game, seat), action_mask(game, seat))
                agent.reset(42)
                a2 = agent.act(encode(other, seat), action_mask(other, seat))
                assert a1 == a2
                checked += 1
            game.step(driver.act(encode(game, seat), action_mask(game, seat)))
    assert checked > 100


def test_decode_reads_back_what_the_seat_knows():
    game = Game(4, rng=8)
    driver = make_agent("greedy", seed=1)
    for _ in range(70):
        seat = game.current
        for observer in range(4):
            view = decode(encode(game, observer))
            n = game.num_players
            assert view.num_players == 4
            assert view.hand == sorted(game.hands[observer])
            for j in range(n):
                p = (observer + j) % n
                assert view.piles[j] == sorted(game.piles[p])
                assert view.tops[j] == (game.piles[p][-1] if game.piles[p] else None)
                assert view.seconds[j] == (game.piles[p][-2] if len(game.piles[p]) > 1 else None)
                assert view.known[j] == sorted(game.known[p])
                assert view.hand_sizes[j] == len(game.hands[p])
                assert view.pads[j] == game.score_sheet[p]
                assert view.totals[j] == game.totals[p]
            assert view.grinch == (game.grinch - observer) % n
            assert (view.round, view.turn, view.phase) == (game.round, game.turn, game.phase)
            assert view.rounds_left == game.num_rounds - 1 - game.round
            assert view.draw_pile_size == len(game.draw_pile)
            assert sorted(view.unseen()) == sorted(game.unseen_cards(observer))
        game.step(driver.act(encode(game, seat), action_mask(game, seat)))


def _set_hand(game, seat, hand):
    """Put ``hand`` into ``seat``'s hand, swapping the cards with the draw pile or other hands."""
    for c in hand:
        for holder in game.hands + [game.draw_pile]:
            if c in holder:
                holder.remove(c)
    game.draw_pile.extend(game.hands[seat])
    game.hands[seat] = list(hand)


def _discard_state(hand, turn=3, run_used=False):
    """A 2-player game in which seat 1 (a Who) must discard from ``hand`` in the given turn (optionally with Run already scored)."""
    game = Game(2, rng=0)
    while not (game.phase == PHASE_DISCARD and game.current == 1 and game.turn == turn):
        game.step(game.legal_actions()[0])
    _set_hand(game, 1, hand)
    if run_used:
        game.score_sheet[1][RUN_ROW] = 0
    return game


def test_greedy_discard_keeps_the_best_row():
    # Run is used.  Dropping N1 keeps Wreaths 2+3+4+5+6 = 20; dropping W2 leaves Wreaths 18 at best, any other Wreath less.
    game = _discard_state(cards("W2 W3 W4 W5 W6 N1"), run_used=True)
    agent = GreedyAgent(seed=0)
    assert agent.act(encode(game, 1), action_mask(game, 1)) == parse_card("N1")


def test_greedy_scores_the_highest_unused_row():
    game = _discard_state(cards("W1 N1 O1 O6 P6 P2"))
    game.step(parse_card("P2"))
    while game.phase != PHASE_SCORE or game.current != 1:
        game.step(game.legal_actions()[0])
    # Hand W1 N1 O1 O6 P6: Rainbow 1+1+6+6 = 14 beats Match 10 and Ornaments 7.
    assert GreedyAgent(seed=0).act(encode(game, 1), action_mask(game, 1)) == SCORE_BASE + RAINBOW_ROW


def test_expectimax_keeps_rainbow_for_later_but_not_in_the_last_round():
    game = _discard_state(cards("W1 N1 O1 O6 P6 P2"))
    game.step(parse_card("P2"))
    while game.phase != PHASE_SCORE or game.current != 1:
        game.step(game.legal_actions()[0])
    agent = ExpectimaxAgent(seed=0, samples=4)
    # Round 1 of 6: Rainbow is worth far more later than the 14 it scores now; Match's 10 is a good use of Match.
    assert agent.act(encode(game, 1), action_mask(game, 1)) == SCORE_BASE + MATCH_ROW
    game.round = game.num_rounds - 1  # the last round: nothing left to save rows for, so take the 14
    assert agent.act(encode(game, 1), action_mask(game, 1)) == SCORE_BASE + RAINBOW_ROW


def test_expectimax_final_discard_is_exact():
    # Last turn, 6 cards, Run used: dropping N1 leaves Wreaths 20 (vs 18, Noise 1 or Rainbow 7 for the other discards).
    game = _discard_state(cards("W2 W3 W4 W5 W6 N1"), run_used=True)
    assert ExpectimaxAgent(seed=0, samples=2).act(encode(game, 1), action_mask(game, 1)) == parse_card("N1")


def test_greedy_grinch_draws_the_visible_card_it_needs():
    game = Game(2, rng=0)
    while not (game.current == 0 and game.turn == 2 and game.phase == "draw"):
        game.step(game.legal_actions()[0])
    _set_hand(game, 0, cards("P3 P4 P5"))
    for seat, top in ((0, parse_card("W1")), (1, parse_card("P6"))):
        for holder in game.hands + [game.draw_pile] + game.piles:
            if top in holder:
                holder.remove(top)
        game.piles[seat].append(top)
    # P6 from seat 1's pile (action 50) makes Presents 3+4+5+6 = 18 for sure; W1 (own pile) or an unknown card is worth less.
    assert GreedyAgent(seed=0).act(encode(game, 0), action_mask(game, 0)) == 50
    # Expectimax may first draw blind (P6 stays on the pile for the second draw); after a useless N1 it takes P6.
    game.step(48)
    _set_hand(game, 0, cards("P3 P4 P5 N1"))
    assert ExpectimaxAgent(seed=0, samples=8).act(encode(game, 0), action_mask(game, 0)) == 50
    assert GreedyAgent(seed=0).act(encode(game, 0), action_mask(game, 0)) == 50


def test_make_agent_builds_named_agents_with_options():
    assert isinstance(make_agent("random"), RandomAgent)
    assert isinstance(make_agent("greedy", seed=3), GreedyAgent)
    agent = make_agent("expectimax:samples=5", seed=1)
    assert isinstance(agent, ExpectimaxAgent) and agent.samples == 5 and agent.name == "expectimax:samples=5"
    assert parse_spec("expectimax:samples=8, horizon_cards=6") == ("expectimax", {"samples": 8, "horizon_cards": 6})
    same = GreedyAgent()
    assert make_agent(same) is same


def test_split_specs_keeps_each_specs_options_together():
    assert split_specs("greedy, expectimax:samples=32,depth=2,random,,checkpoints/run1") == [
        "greedy", "expectimax:samples=32,depth=2", "random", "checkpoints/run1"]
    assert split_specs("search:samples=4,horizon=round,search:samples=2") == ["search:samples=4,horizon=round", "search:samples=2"]
    # A key=value piece with no spec before it stays a spec of its own (and make_agent names it as unknown).
    assert split_specs("samples=3,greedy") == ["samples=3", "greedy"]
    # A checkpoint path holding "=" is its own spec, not an option of the spec before it.
    assert split_specs("search:samples=4,checkpoints/lr=1e-4") == ["search:samples=4", "checkpoints/lr=1e-4"]
    assert split_specs("") == []


def test_make_agent_rejects_bad_input(tmp_path):
    with pytest.raises(ValueError, match="unknown agent 'grumpy'.*greedy"):
        make_agent("grumpy")
    with pytest.raises(ValueError, match="no checkpoint at .*no_such_dir: it does not exist"):
        make_agent(str(tmp_path / "no_such_dir"))
    with pytest.raises(ValueError, match="bad options .*'depth'"):
        make_agent("greedy:depth=2")
    with pytest.raises(ValueError, match="key=value"):
        make_agent("expectimax:32")
    with pytest.raises(ValueError, match="samples must be an int >= 1"):
        make_agent("expectimax:samples=0")
    bad = tmp_path / "junk.pt"
    bad.write_text("not a checkpoint")
    with pytest.raises(ValueError, match="cannot load checkpoint"):
        make_agent(str(bad))


def test_act_rejects_a_mask_without_legal_actions():
    game = Game(2, rng=0)
    agent = GreedyAgent()
    with pytest.raises(ValueError, match="no legal action"):
        agent.act(encode(game, 0), np.zeros(62, dtype=np.int8))
    with pytest.raises(ValueError, match="shape"):
        agent.act(encode(game, 0), np.ones(5, dtype=np.int8))


def test_act_batch_matches_act():
    game = Game(3, rng=2)
    obs = np.stack([encode(game, s) for s in range(3)] * 2)
    masks = np.stack([action_mask(game, game.current)] * 6)
    for spec in SPECS:
        agent = make_agent(spec, seed=9)
        batch = agent.act_batch(obs, masks)
        agent.reset(9)
        assert batch.dtype == np.int64 and batch.tolist() == [agent.act(o, m) for o, m in zip(obs, masks)]
    assert DRAW_PILE_ACTION == 48 and NUM_ROWS == 7


def test_last_round_utility_is_the_chance_to_win():
    # 2 players, last round, the opponent has already scored: I win exactly when my total passes theirs.
    game = Game(2, rng=0, num_rounds=1)
    while not (game.phase == PHASE_SCORE and game.current == 1):
        game.step(game.legal_actions()[0])
    game.step(SCORE_BASE)  # seat 1 (a Who) scores first; seat 0, the Grinch, scores last
    game.totals = [30, 45]
    view = decode(encode(game, 0))
    assert view.rounds_left == 0 and view.totals == [30, 45]
    u = ExpectimaxAgent(seed=0, samples=2)._win_chance(view)
    # me 30 + p against a fixed 45: lose below p = 15, tie (half a win) at 15, win above.
    assert u[14] == pytest.approx(14e-6) and u[15] == pytest.approx(0.5 + 15e-6) and u[16] == pytest.approx(1 + 16e-6)

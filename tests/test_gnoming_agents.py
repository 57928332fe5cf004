import numpy as np
import pytest

from grinch_env.agents import make_agent
from grinch_env.gnoming.agents import AGENT_CLASSES, GreedyAgent, GreedyPolicy, RandomAgent, SearchAgent, decode
from grinch_env.gnoming.agents.base import FACE_DOWN, expected_score
from grinch_env.gnoming.agents.search import view_of_game
from grinch_env.gnoming.encoding import action_mask, encode
from grinch_env.gnoming.game import BOUNCE, DISCARD_A, DISCARD_B, DRAW, DRAW_PHASE, HAZARD_PHASE, PASS, PLAY, TAKE_A, TAKE_B, Game
from grinch_env.gnoming.scoring import score_layout

H, M = 10, 11  # Hazard, Mulligan
K = {v: k for k, v in enumerate((3, 4, 5, 6, 7, 8, -1, -2, -3, -4))}  # card value -> kind


def kinds(*values):
    """Return kinds for values written as in the rules (3..8, -1..-4, "H", "M")."""
    return [H if v == "H" else M if v == "M" else K[v] for v in values]


def play(game, agents, record=None):
    """Play ``game`` to the end with one agent per seat (Game.step raises on an illegal action)."""
    while not game.done:
        seat = game.current
        action = agents[seat].act(encode(game, seat), action_mask(game, seat))
        assert isinstance(action, int) and game.is_legal(action)
        if record is not None:
            record.append(action)
        game.step(action)
    return game


def position(mine, down, *, phase=DRAW_PHASE, held=None, source=None, piles=((K[6],), (K[-3],)), hidden=K[4], others=None):
    """Return a 3-player game at seat 0's decision with layout ``mine`` (kinds), face-down ``down`` slots.

    Every face-down card and the whole draw pile (20 cards) are ``hidden``, so
    the never-seen cards all have its points; seats 1 and 2 are all face down
    unless ``others`` gives their (face-up) layouts.
    """
    game = Game(3, rng=0)
    while not (game.phase is DRAW_PHASE and game.current == 0):
        game.step(game.legal_actions()[0])
    game.layouts[0] = [hidden if p in down else k for p, k in enumerate(mine)]
    game.face_up[0] = [p not in down for p in range(9)]
    for s in (1, 2):
        game.layouts[s] = list(others[s - 1]) if others else [hidden] * 9
        game.face_up[s] = [others is not None] * 9
    game.piles = [list(p) for p in piles]
    game.draw_pile = [hidden] * 20
    game.phase, game.held, game.held_source = phase, held, source
    game.touch()  # the state was edited directly: drop cached legal actions
    return game


def decide(agent, game):
    game.touch()  # tests edit positions between decisions
    return agent.act(encode(game, 0), action_mask(game, 0))


# Row 0 is 5 5 ?? ; the face-down slots 2, 4, 6 hold 4s, so a face-down card is worth exactly 4.
LINE = kinds(5, 5, 4, 8, 4, -2, 4, 7, 3)
LINE_DOWN = (2, 4, 6)


@pytest.mark.parametrize("layout, score", [
    ((5, 5, 5, 7, -2, "M", 7, "H", 3), 20),
    ((4, 4, "M", 6, -1, 7, 3, 5, 7), 2),
    ((6,) * 9, -36),
    (("M", "M", 8, 3, 4, 5, -4, -4, -4), -8),
    (("M", "M", "M", 3, 4, 5, 3, 4, 5), -12),
    ((8, 8, 8, 8, 3, 3, 8, 3, 3), -4),
    ((3, 3, 3, "M", -1, "H", 3, 3, 3), 0),
    ((8, 7, 6, 5, 4, 3, 8, 7, 6), 54),
])
def test_expected_score_of_a_face_up_layout_is_the_rules_score(layout, score):
    assert expected_score(kinds(*layout), 99.0) == score == score_layout(kinds(*layout))


def test_expected_score_values_face_down_cards_at_the_unknown_and_never_matches_them():
    # 5 5 ?? / 8 ?? -2 / ?? 7 3 with unknowns at 4: nothing matched, 5+5+8-2+7+3 + 3*4 = 38.
    layout = [FACE_DOWN if p in LINE_DOWN else k for p, k in enumerate(LINE)]
    assert expected_score(layout, 4.0) == 38
    rng = np.random.default_rng(0)
    for _ in range(300):
        full = rng.integers(0, 12, 9).tolist()
        assert expected_score(full, 0.0) == score_layout(full)


def test_decode_and_view_of_game_agree_with_the_true_public_state():
    fields = ["num_players", "layouts", "pile_tops", "pile_counts", "never_seen", "reshuffled_counts", "draw_size",
              "reshuffled", "hazards_removed", "held", "held_source", "phase", "went_out", "totals", "round"]
    rng = np.random.default_rng(1)
    for n in (3, 7):
        game = Game(n, rng=n)
        checked = 0
        while not game.done:
            seat = game.current
            v1, v2 = decode(encode(game, seat)), view_of_game(game, seat)
            for f in fields:
                assert getattr(v1, f) == getattr(v2, f), f
            assert v1.layouts[0] == [k if up else FACE_DOWN for k, up in zip(game.layouts[seat], game.face_up[seat])]
            assert v1.round_scores == [[r[(seat + j) % n] for j in range(n)] for r in game.round_scores]
            checked += 1
            game.step(int(rng.choice(game.legal_actions())))
        assert checked > 200


@pytest.mark.parametrize("num_players", [3, 5, 7])
def test_every_agent_plays_only_legal_actions(num_players):
    specs = ["random", "greedy", "search:samples=2"]
    agents = [make_agent(specs[s % 3], seed=s, game="gnoming") for s in range(num_players)]
    game = play(Game(num_players, rng=100 + num_players), agents)
    assert game.done and len(game.round_scores) == 3


def test_random_states_get_legal_actions_from_every_agent():
    # Random play reaches every phase (reveal, draw, play, bounce, discard, Hazard responses, reshuffles).
    agents = [RandomAgent(seed=0), GreedyAgent(seed=0), SearchAgent(seed=0, samples=2), SearchAgent(seed=0, samples=1, horizon="round")]
    rng = np.random.default_rng(7)
    phases = set()
    for n in (3, 4, 6):
        game = Game(n, rng=int(rng.integers(1000)))
        steps = 0
        while not game.done:
            seat = game.current
            obs, mask = encode(game, seat), action_mask(game, seat)
            if steps % 7 == 0 and mask.sum() > 1:
                phases.add(str(game.phase))
                for agent in agents[:3] if steps % 140 else agents:
                    assert game.is_legal(agent.act(obs, mask))
            game.step(int(rng.choice(game.legal_actions())))
            steps += 1
    assert phases >= {"reveal", "draw", "play", "hazard"}


def test_greedy_places_a_card_into_the_line_it_matches():
    # Held 5 (drawn): slot 2 makes row 0 = 5 5 5 -> -5, then 8+4-2+4+7+3 = 24: 19.  Current layout 38; replacing
    # the 8 gives 35, a face-down slot 39, the 3 40.
    game = position(LINE, LINE_DOWN, phase=PLAY, held=K[5], source="draw")
    assert decide(GreedyAgent(), game) == 2
    view = decode(encode(game, 0))
    policy = GreedyPolicy()
    assert policy.value(view, view.layouts[0], 4.0) == 38
    assert policy.best_placement(view, K[5], 4.0) == 19


def test_greedy_discards_a_bad_draw_onto_the_pile_with_the_lower_top():
    # 3 3 3 / -1 -2 ?? / 4 5 ?? scores -3 + (-1-2+4+5+4+4) = 11; a drawn 8 raises it wherever it goes
    # (a face-down slot +4, over the 5 +3), so it is discarded, covering pile B's -3 rather than pile A's 6.
    game = position(kinds(3, 3, 3, -1, -2, 4, 4, 5, 4), (5, 8), phase=PLAY, held=K[8], source="draw")
    assert decide(GreedyAgent(), game) == DISCARD_B
    game.piles = [[K[-3]], [K[6]]]
    assert decide(GreedyAgent(), game) == DISCARD_A


def test_greedy_takes_a_pile_top_that_beats_the_blind_draw():
    # Pile A's 5 completes row 0 (19); a blind draw is a 4 (every never-seen card is a 4), best over the 8: 34;
    # pile B's 8 must be placed and can at best replace the 8 (38).
    game = position(LINE, LINE_DOWN, piles=([K[5]], [K[8]]))
    assert decide(GreedyAgent(), game) == TAKE_A
    # Without the 5 the draw (34) beats taking the 8 (38).
    game.piles = [[K[3], K[8]], [K[8]]]
    assert decide(GreedyAgent(), game) == DRAW


def test_greedy_counts_the_going_out_bonus():
    # 3 3 3 / 3 3 3 / 4 4 ?? (unknowns at 4): rows 0 and 1 give -6, then 4 + 4 + 4 = 6.  A held 8 (taken, so it must be
    # placed) over a 4 gives -6 + 8 + 4 + 4 = 10; into slot 8 it also gives 10 but goes out: -5 if that is at most
    # every other layout, else +5.
    game = position(kinds(3, 3, 3, 3, 3, 3, 4, 4, 4), (8,), phase=PLAY, held=K[8], source="A",
                    others=[kinds(8, 7, 6, 5, 4, 3, 8, 7, 6)] * 2)  # face up, 54 each
    view = decode(encode(game, 0))
    policy = GreedyPolicy()
    assert policy.value(view, view.layouts[0], 4.0) == 6
    assert policy.value(view, view.layouts[0][:8] + [K[8]], 4.0) == 10 - 5
    assert decide(GreedyAgent(), game) == 8
    game = position(kinds(3, 3, 3, 3, 3, 3, 4, 4, 4), (8,), phase=PLAY, held=K[8], source="A",
                    others=[kinds(3, 3, 3, 3, 3, 3, 3, 3, 3)] * 2)  # face up, -18 each
    assert GreedyPolicy().value(decode(encode(game, 0)), view.layouts[0][:8] + [K[8]], 4.0) == 10 + 5
    assert decide(GreedyAgent(), game) == 6  # over the first 4 (10); slot 7 ties, the lowest id wins


def test_greedy_bounces_a_card_where_it_completes_a_line():
    # Seat 0 placed a 4 into slot 4 and turned up a 5 there, which may bounce (a face-up 5 shows).  Into slot 2 it
    # makes row 0 = 5 5 5 (and replaces a face-down card); stopping keeps the layout.
    game = position(kinds(5, 5, 4, 8, 4, -2, 4, 7, 3), (2, 6), phase=BOUNCE, held=K[5], source="bounce")
    game.filled = [False, False, False, False, True, False, False, False, False]
    assert decide(GreedyAgent(), game) == 2


def test_greedy_flips_on_a_hazard_response_in_the_best_supported_slot():
    game = position(LINE, LINE_DOWN, phase=HAZARD_PHASE)
    game.current, game.turn_player, game.responders = 0, 2, [0]
    game.touch()
    mask = action_mask(game, 0)
    assert mask[PASS] == 1
    # Slot 2 sees 5 5 (row) and -2 3 (column: 3 positive), slot 4 sees 8 -2 and 5 7, slot 6 sees 7 3 and 5 8:
    # positives 5,5,3 = 3, 8,5,7 = 3, 7,3,5,8 = 4 -> slot 6.
    assert decide(GreedyAgent(), game) == 6


def test_greedy_is_deterministic_given_the_observation():
    game = Game(4, rng=3)
    a, b = GreedyAgent(seed=1), GreedyAgent(seed=2)
    while not game.done:
        seat = game.current
        obs, mask = encode(game, seat), action_mask(game, seat)
        act = a.act(obs, mask)
        assert act == b.act(obs, mask)
        game.step(act)


def test_search_picks_the_obvious_move():
    game = position(LINE, LINE_DOWN, phase=PLAY, held=K[5], source="draw")
    assert decide(SearchAgent(seed=0, samples=3), game) == 2
    game = position(LINE, LINE_DOWN, piles=([K[5]], [K[8]]))
    assert decide(SearchAgent(seed=0, samples=3), game) == TAKE_A


def test_search_is_reproducible_for_a_seed():
    runs = []
    for _ in range(2):
        agents = [SearchAgent(seed=s, samples=2) for s in range(3)]
        actions: list[int] = []
        play(Game(3, rng=5), agents, actions)
        runs.append(actions)
    assert runs[0] == runs[1]
    agents = [SearchAgent(seed=s + 9, samples=2) for s in range(3)]
    for s, agent in enumerate(agents):
        agent.reset(s)
    actions = []
    play(Game(3, rng=5), agents, actions)
    assert actions == runs[0]


def test_agents_reject_bad_masks_options_and_specs():
    agent = RandomAgent(seed=0)
    with pytest.raises(ValueError, match="action_mask must have shape"):
        agent.act(np.zeros(1046, np.float32), np.ones(14, np.int8))
    with pytest.raises(ValueError, match="no legal action"):
        agent.act(np.zeros(1046, np.float32), np.zeros(15, np.int8))
    with pytest.raises(ValueError, match="observation must have shape"):
        decode(np.zeros(10))
    with pytest.raises(ValueError, match="samples must be an int >= 1"):
        SearchAgent(samples=0)
    with pytest.raises(ValueError, match="horizon must be one of"):
        SearchAgent(horizon="game")
    with pytest.raises(ValueError, match="unknown agent 'expectimax' for Gnoming A Round: use one of \\['greedy', 'random', 'search'\\]"):
        make_agent("expectimax", game="gnoming")
    with pytest.raises(ValueError, match="bad options .* for gnoming agent 'greedy'"):
        make_agent("greedy:depth=2", game="gnoming")
    agent = make_agent("search:samples=3,horizon=round", seed=1, game="gnoming")
    assert (agent.samples, agent.horizon, agent.name) == (3, "round", "search:samples=3,horizon=round")
    assert set(AGENT_CLASSES) == {"random", "greedy", "search"}
    batch = GreedyAgent().act_batch(np.stack([encode(Game(3, rng=0), 0)] * 2), np.stack([action_mask(Game(3, rng=0), 0)] * 2))
    assert batch.dtype == np.int64 and batch.tolist() == [0, 0]  # nothing face up: every slot has support 0, slot 0 first
    _ = (DISCARD_A, TAKE_B)

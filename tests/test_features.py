"""The action features' draw lookahead (``draw_lookahead``): exact values by hand, and a brute-force reference."""

from itertools import combinations

import numpy as np
import pytest

from grinch_env.grinch.encoding import action_mask, encode
from grinch_env.grinch.features import FEATURE_SCALE, action_features
from grinch_env.grinch.game import DRAW_DISCARD_BASE, DRAW_PILE_ACTION, PHASE_DRAW, SCORE_BASE, Game
from grinch_env.grinch.scoring import NUM_ROWS, bonus_points, row_scores

W2, W3, W4, W5, W6 = 2, 4, 6, 8, 10  # Wreaths, copy 0: id = (rank - 1) * 2
N1, N6 = 12, 22  # Noise rank 1 and rank 6, copy 0


def grinch_state(hand: list[int], piles: list[list[int]], draws_made: int) -> Game:
    """Return a 2-player game, no bonuses, at seat 0's (the Grinch's) draw in turn 3."""
    game = Game(2, rng=0, bonus_layout="none")
    who_hand = [40, 41, 42, 43]  # Presents 3, 3, 4, 4: hidden from the Grinch
    used = set(hand) | set(who_hand) | {c for p in piles for c in p}
    game.hands = [list(hand), who_hand]
    game.piles = [list(p) for p in piles]
    game.known = [[], []]
    game.piles_replaced()
    game.draw_pile = [c for c in range(48) if c not in used]
    game.grinch, game.order, game.pos, game.current = 0, [1, 0], 1, 0
    game.turn, game.phase, game.draws_made = 3, PHASE_DRAW, draws_made
    return game


def lookahead(game: Game) -> np.ndarray:
    obs, mask = encode(game, game.current), action_mask(game, game.current)
    return action_features(obs[None], mask[None], "none", draw_lookahead=True)[0] * FEATURE_SCALE


def test_first_draw_from_a_pile_is_valued_with_the_best_second_draw():
    # Hand W6 W5 W4 N1; the Who's pile holds W2 under W3, the Grinch's own pile N6.
    feats = lookahead(grinch_state([W6, W5, W4, N1], [[N6], [W2, W3]], draws_made=0))
    # Take W3, then W2 (uncovered under it): W6..W2 + N1, best five per row.  Wreaths 6+5+4+3+2 = 20,
    # Noise 1, Rainbow 6 + 1 = 7, no Match, Run 2-6 = 25.  Taking N6 second would give at best 18
    # (Wreaths), the draw pile's mean at best 760/41 = 18.5 (Wreaths), so W2 it is.
    assert feats[DRAW_DISCARD_BASE + 1].tolist() == pytest.approx([20, 1, 0, 0, 7, 0, 25, 0])
    # Take N6, then W3 from the Who's pile: Wreaths 6+5+4+3 = 18, Noise 1+6 = 7, Rainbow 6+6 = 12,
    # Run 3-6 = 15 (four long).  The draw pile second is worth at most 637/41 = 15.5 (Wreaths).
    assert feats[DRAW_DISCARD_BASE + 0].tolist() == pytest.approx([18, 7, 0, 0, 12, 0, 15, 0])
    # Without lookahead a pile draw only sees its own card: W6 W5 W4 N1 + W3.
    obs = encode(grinch_state([W6, W5, W4, N1], [[N6], [W2, W3]], 0), 0)
    plain = action_features(obs[None], action_mask(grinch_state([W6, W5, W4, N1], [[N6], [W2, W3]], 0), 0)[None], "none")[0]
    assert (plain[DRAW_DISCARD_BASE + 1] * FEATURE_SCALE).tolist() == pytest.approx([18, 1, 0, 0, 7, 0, 15, 0])


def test_second_draw_values_a_six_card_hand_by_its_best_five():
    # After taking W3: hand W6 W5 W4 N1 W3; W2 is now the Who's top card.
    feats = lookahead(grinch_state([W6, W5, W4, N1, W3], [[N6], [W2]], draws_made=1))
    assert feats[DRAW_DISCARD_BASE + 1].tolist() == pytest.approx([20, 1, 0, 0, 7, 0, 25, 0])
    assert feats[DRAW_DISCARD_BASE + 0].tolist() == pytest.approx([18, 7, 0, 0, 12, 0, 15, 0])


# ----------------------------------------------------------------- brute force
def value(cards: list[int], layout) -> np.ndarray:
    """Row values and bonus of a hand; a 6-card hand: per row the best five cards' row + bonus, bonus column 0."""
    if len(cards) <= 5:
        return np.array(list(row_scores(cards)) + [bonus_points(cards, layout)], dtype=np.float64)
    best = np.full(NUM_ROWS, -np.inf)
    for five in combinations(cards, 5):
        best = np.maximum(best, np.array(row_scores(list(five))) + bonus_points(list(five), layout))
    return np.append(best, 0.0)


def reference(game: Game) -> dict[int, np.ndarray]:
    """Each legal draw's lookahead features, from the true game and what the actor can locate."""
    seat, n, layout = game.current, game.num_players, game.layout
    hand = game.hands[seat]
    unseen = game.unseen_cards(seat)
    unused = [v is None for v in game.score_sheet[seat]]
    piles = [game.piles[(seat + j) % n] for j in range(n)]

    def greedy(v: np.ndarray) -> float:
        return max(v[k] for k in range(NUM_ROWS) if unused[k]) + v[NUM_ROWS]

    def best_second(first: int, taken: int | None) -> np.ndarray:
        options = [np.mean([value(hand + [first, u], layout) for u in unseen if u != first], axis=0)]  # the draw pile
        for j, pile in enumerate(piles):
            card = (pile[-2] if len(pile) > 1 else None) if j == taken else (pile[-1] if pile else None)
            if card is not None:
                options.append(value(hand + [first, card], layout))
        scores = [greedy(v) for v in options]
        return options[int(np.argmax(scores))]

    out = {}
    if game.draws_made == 1:
        out[DRAW_PILE_ACTION] = np.mean([value(hand + [u], layout) for u in unseen], axis=0)
        for j, pile in enumerate(piles):
            if pile:
                out[DRAW_DISCARD_BASE + j] = value(hand + [pile[-1]], layout)
        return out
    out[DRAW_PILE_ACTION] = np.mean([best_second(u, None) for u in unseen], axis=0)
    for j, pile in enumerate(piles):
        if pile:
            out[DRAW_DISCARD_BASE + j] = best_second(pile[-1], j)
    return out


@pytest.mark.parametrize("num_players,seed", [(2, 3), (3, 1), (4, 2), (6, 4)])
def test_lookahead_features_match_a_brute_force_reference(num_players, seed):
    rng = np.random.default_rng(seed)
    game = Game(num_players, rng=seed)
    checked = {0: 0, 1: 0}
    while not game.done and game.round < 1:
        seat = game.current
        obs, mask = encode(game, seat), action_mask(game, seat)
        legal = np.flatnonzero(mask)
        if DRAW_PILE_ACTION <= legal[0] < SCORE_BASE:
            feats = action_features(obs[None], mask[None], draw_lookahead=True)[0] * FEATURE_SCALE
            expected = reference(game)
            assert sorted(expected) == [int(a) for a in legal]
            for a, v in expected.items():
                assert feats[a].tolist() == pytest.approx(v.tolist(), abs=1e-3), (a, game.turn, game.draws_made)
            checked[game.draws_made] += 1
        # Draw from the piles now and then, so that second cards and emptied piles come up.
        pile_draws = [a for a in legal if DRAW_DISCARD_BASE <= a < SCORE_BASE]
        action = pile_draws[0] if pile_draws and rng.random() < 0.5 else legal[rng.integers(len(legal))]
        game.step(int(action))
    assert checked == {0: 3, 1: 3}  # the Grinch's first and second draw in each of round 1's three turns


def test_lookahead_leaves_every_other_action_unchanged():
    game = Game(4, rng=7)
    rng = np.random.default_rng(7)
    while not game.done and game.round < 1:
        obs, mask = encode(game, game.current), action_mask(game, game.current)
        plain = action_features(obs[None], mask[None])[0]
        looked = action_features(obs[None], mask[None], draw_lookahead=True)[0]
        others = np.r_[0:DRAW_PILE_ACTION, SCORE_BASE:62]
        assert np.array_equal(plain[others], looked[others])
        legal = np.flatnonzero(mask)
        game.step(int(legal[rng.integers(len(legal))]))


def test_a_lookahead_network_keeps_its_features_through_a_checkpoint():
    from training.checkpoint import make_checkpoint, model_from_checkpoint
    from training.model import PolicyValueNet

    with pytest.raises(ValueError, match="draw_lookahead changes the action features, so it needs action_features=True"):
        PolicyValueNet([8], action_features=False, draw_lookahead=True)
    net = PolicyValueNet([8], action_features=True, draw_lookahead=True)
    loaded = model_from_checkpoint(make_checkpoint(net, {}, None, update=0, env_steps=0, learner_steps=0))
    assert loaded.draw_lookahead is True
    game = grinch_state([W6, W5, W4, N1], [[N6], [W2, W3]], draws_made=0)
    obs, mask = encode(game, 0)[None], action_mask(game, 0)[None]
    assert np.array_equal(loaded.features(obs, mask), action_features(obs, mask, draw_lookahead=True))
    plain = model_from_checkpoint(make_checkpoint(PolicyValueNet([8], action_features=True), {}, None, update=0, env_steps=0, learner_steps=0))
    assert plain.draw_lookahead is False and np.array_equal(plain.features(obs, mask), action_features(obs, mask))


def test_weights_trained_on_other_features_are_refused(tmp_path):
    from training.checkpoint import atomic_torch_save, load_weights, make_checkpoint
    from training.model import PolicyValueNet

    path = tmp_path / "lookahead.pt"
    atomic_torch_save(make_checkpoint(PolicyValueNet([8], action_features=True, draw_lookahead=True), {}, None), path)
    with pytest.raises(ValueError, match=r"draw_lookahead True; the config's network has .*draw_lookahead False"):
        load_weights(PolicyValueNet([8], action_features=True), path)
    net = PolicyValueNet([8], action_features=True, draw_lookahead=True)
    load_weights(net, path)
    assert net.draw_lookahead is True

"""Gnoming's afterstate learner (training.learner.gnoming_afterstate, and training.learner.afterstate_run with game: gnoming):
what the rules say of a layout, the worths of placements, bounces and draws by hand, the recorded targets, exact resume
and the agent."""

import numpy as np
import pytest
import torch

from grinch_env.agents import make_agent
from grinch_env.gnoming.encoding import action_mask, encode
from grinch_env.gnoming.game import DISCARD_A, DISCARD_B, DRAW, TAKE_A, Game, Phase
from training.learner.afterstate import Value
from training.learner.afterstate_run import AfterstateRun, load_config, train
from training.learner.gnoming_afterstate import (
    NUM_FEATURES,
    NUM_LAYOUT_COLUMNS,
    Explorer,
    GnomingAfterstateAgent,
    Worths,
    layout_columns,
    play_game,
)

D = -1  # a face-down slot
SCORE = NUM_LAYOUT_COLUMNS - 2  # layout_columns(): the face-up score (/50), then the face-down count (/9)
# kinds: 0..5 are the positive 3..8, 6..9 the negative -1..-4, 10 the Hazard, 11 the Mulligan


def _minus_score() -> Value:
    """``V`` = minus the face-up score of the afterstate (50 x its column, every other weight 0)."""
    lin = torch.nn.Linear(NUM_FEATURES, 1)
    with torch.no_grad():
        lin.weight.zero_()
        lin.bias.zero_()
        lin.weight[0, SCORE] = -50.0
    return Value(lin, 0.0, 1.0)


def test_layout_columns_say_what_the_rules_say_of_each_line():
    # RULES_GNOMING.md 4.3's first worked example, 5 5 5 / 7 -2 M / 7 H 3, scores 20: row 0 matched on 5
    full = layout_columns(np.array([[2, 2, 2, 4, 7, 11, 4, 10, 0]]))[0]
    assert full[SCORE] * 50 == pytest.approx(20) and full[SCORE + 1] == 0
    lines = full[117:141].reshape(6, 4)  # per line: face-down /3, can still match, matched, value /8
    assert lines[:, 2].tolist() == [1, 0, 0, 0, 0, 0] and lines[0, 3] * 8 == 5
    assert lines[:, 1].tolist() == [1, 0, 0, 0, 0, 0]  # -2, the Hazard or two values in every other line
    # 5 5 . / 6 . M / . . -1: nothing matched, face-up score 5 + 5 + 6 + 0 - 1 = 15 with four cards face down
    cols = layout_columns(np.array([[2, 2, D, 3, D, 11, D, D, 6]]))[0]
    assert cols[SCORE] * 50 == pytest.approx(15) and cols[SCORE + 1] * 9 == pytest.approx(4)
    lines = cols[117:141].reshape(6, 4)
    assert (lines[:, 0] * 3).round().tolist() == [1, 1, 2, 1, 2, 1]
    assert lines[:, 1].tolist() == [1, 1, 0, 0, 1, 0]  # row 0 (5 5 .), row 1 (6 . M), column 1 (5 . .) can still match
    assert lines[:, 2].tolist() == [0] * 6
    assert (lines[:, 3] * 8).round().tolist() == [5, 6, 0, 5, 5, 0]  # the lowest face-up positive value, 0 without one
    one_hot = cols[:117].reshape(9, 13)
    assert one_hot.argmax(1).tolist() == [2, 2, 12, 3, 12, 11, 12, 12, 6] and one_hot.sum() == 9


def _position(phase: Phase, held: int | None = None, top_a: int = 9) -> tuple[np.ndarray, np.ndarray]:
    """Seat 0 to act with the layout 3 3 . / 8 . . / . . . (3 players); pile A's top ``top_a``."""
    game = Game(3, rng=5)
    layout, up = [0, 0, 4, 5, 1, 2, 6, 7, 8], [True, True, False, True, False, False, False, False, False]
    game.layouts[0], game.face_up[0] = layout, up
    game.phase, game.current, game.turn_player = phase, 0, 0
    game.piles = [[3, top_a], [1]]
    game.held, game.held_source = held, (None if held is None else "draw")
    game.filled = [False] * 9
    game.version += 1
    return encode(game, 0), np.flatnonzero(action_mask(game, 0))


def test_a_placement_values_the_displaced_cards_chance_node_and_its_bounce():
    obs, legal = _position(Phase.PLAY, held=0)  # a 3 drawn
    worth, view = Worths(_minus_score())(obs, legal)
    p = view.never_seen[0] / sum(view.never_seen)  # the face-down card is a 3: it may bounce (a 3 shows)
    got = dict(zip(legal.tolist(), worth))
    assert set(got) == set(range(9)) | {DISCARD_A, DISCARD_B}
    assert got[DISCARD_A] == got[DISCARD_B] == pytest.approx(-14)  # 3 + 3 + 8 face up
    assert got[0] == pytest.approx(-14) and got[3] == pytest.approx(-9)  # a 3 for a 3; a 3 for the 8 (discarded)
    # into slot 2: row 0 matched on 3 (-3 + 8 = 5); a displaced 3 bounces onto the 8 (score 0); an 8 or anything else stays
    assert got[2] == pytest.approx(-5 + 5 * p)
    # into slot 4: 3 + 3 + 8 + 3 = 17; a displaced 3 bounces into slot 2, matching row 0 (-3 + 8 + 3 = 8)
    assert got[4] == pytest.approx(-17 + 9 * p)
    # into slot 6: 17 too; a displaced 3 bounces onto the 8, matching column 0 (3 3 3: -3 + 3 = 0)
    assert got[6] == pytest.approx(-17 + 17 * p)
    agent = GnomingAfterstateAgent(_minus_score())
    assert agent.act(obs, action_mask_of(legal)) == 2


def action_mask_of(legal: np.ndarray) -> np.ndarray:
    mask = np.zeros(15, np.int8)
    mask[legal] = 1
    return mask


def test_a_draw_is_worth_its_cards_best_placement_or_keeping_the_layout():
    obs, legal = _position(Phase.DRAW, top_a=9)  # pile A's top a -4, pile B's a 4
    worth, view = Worths(_minus_score())(obs, legal)
    got = dict(zip(legal.tolist(), worth))
    # per drawn kind, the best of keeping (-14) and each placement (bounces left out of the draw's estimate):
    # a 3 or a Mulligan completes row 0 (-5); 4..7 and -1..-4 replace the 8 (-10..-13 and -5..-2); an 8 or the
    # Hazard is not kept (-14)
    best = np.array([-5, -10, -11, -12, -13, -14, -5, -4, -3, -2, -14, -5], float)
    pool = np.array(view.never_seen, float)
    assert got[DRAW] == pytest.approx(pool @ best / pool.sum())
    assert got[TAKE_A] == pytest.approx(-2)  # the -4 for the 8
    assert got[TAKE_A + 1] == pytest.approx(-10)  # the 4 for the 8


def test_generation_records_are_the_placements_afterstates_and_minus_the_round_margin():
    rec = play_game(Explorer(None, 1.0), 3, seed=4)
    n = len(rec["x"])
    assert n > 0 and rec["x"].shape == (n, NUM_FEATURES) and rec["x"].dtype == np.float16
    assert set(rec["round_index"]) == {0, 1, 2} and set(rec["seat"]) == {0, 1, 2}
    game = Game(3, rng=int(np.random.default_rng(4).integers(2**62)))  # the same deal, replayed by the same choices
    rng = np.random.default_rng(4)
    rng.integers(2**62)
    while not game.done:
        legal = np.flatnonzero(action_mask(game, game.current))
        game.step(int(rng.choice(legal)) if len(legal) > 1 else int(legal[0]))
    scores = np.array(game.round_scores)
    assert rec["score"].tolist() == [scores[r, s] for s, r in zip(rec["seat"], rec["round_index"])]
    # the target: minus the seat's score against the mean of the two others' in that round
    margin = [scores[r, s] - (scores[r].sum() - scores[r, s]) / 2 for s, r in zip(rec["seat"], rec["round_index"])]
    assert rec["round"] == pytest.approx(-np.array(margin))
    # generation 0 picks uniformly among the legal actions: each record's entropy is log(the legal count), 2 or more
    assert np.all(rec["entropy"] >= np.log(2) - 1e-6)
    layouts = rec["x"][:, :117].astype(np.float32).reshape(n, 9, 13)
    assert np.all(layouts.sum(2) == 1)


def _tiny(tmp_path, *extra: str):
    return load_config(None, [f"checkpoint_dir={tmp_path}", "game=gnoming", "num_players=3", "run_name=gnoming_tiny", "games_per_generation=3",
                              "value.steps=20", "value.width=8", "eval_games=2", "eval_opponents=[random]", "final_games=0", *extra])


def test_a_gnoming_run_resumes_to_the_same_values_and_is_a_harness_agent(tmp_path):
    straight = train(AfterstateRun(_tiny(tmp_path / "a", "generations=2")), quiet=True)
    first = train(AfterstateRun(_tiny(tmp_path / "b", "generations=2")), generations=1, quiet=True)
    resumed = train(AfterstateRun.load(first.cfg.run_dir), quiet=True)
    states = [[t.numpy() for t in f["value"]["model"].values()] for run in (straight, resumed) for f in run.fitted]
    assert len(states) == 4 and all(np.array_equal(a, b) for a, b in zip(states[0] + states[1], states[2] + states[3], strict=True))
    assert [r["vs_random"] for r in straight.log] == [r["vs_random"] for r in resumed.log]
    assert set(straight.fitted[0]) == {"value"}  # no W (Gnoming's rounds are independent deals) and no G
    agent = make_agent(str(straight.cfg.run_dir), num_players=3, game="gnoming")
    assert isinstance(agent, GnomingAfterstateAgent) and agent.name == "gnoming_tiny/g1"
    assert make_agent(f"{straight.cfg.run_dir}:generation=0,play=value", game="gnoming").name == "gnoming_tiny/g0"
    with pytest.raises(ValueError, match="play must be value"):
        make_agent(f"{straight.cfg.run_dir}:play=lookahead", game="gnoming")
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['deny'\]"):
        make_agent(f"{straight.cfg.run_dir}:deny=1", game="gnoming")
    with pytest.raises(ValueError, match="plays Gnoming A Round .game .gnoming.., not Grinch Grow Your Heart"):
        make_agent(str(straight.cfg.run_dir), game="grinch")


def test_a_gnoming_run_refuses_the_grinchs_options():
    assert load_config(None, ["game=gnoming", "num_players=5"]).final_opponents == ["greedy", "search"]
    with pytest.raises(ValueError, match="num_players for Gnoming A Round must be an int in 3..7, got 2"):
        load_config(None, ["game=gnoming"])
    assert load_config(None, []).final_opponents == ["greedy", "expectimax"] and load_config(None, []).final_play == "lookahead"
    for key, value in (("deny", "true"), ("play_draws", "value"), ("final_play", "lookahead")):
        with pytest.raises(ValueError, match=f"{key}: .* is the Grinch's; a Gnoming afterstate run takes {key}"):
            load_config(None, ["game=gnoming", "num_players=5", f"{key}={value}"])
    with pytest.raises(ValueError, match="opponent 'expectimax' is not an agent of Gnoming"):
        load_config(None, ["game=gnoming", "num_players=5", "final_opponents=[expectimax]"])


def test_the_gnoming_configs_train_afterstate_values_against_search():
    from training.config import load_config as load_train_config

    quick = load_train_config("configs/gnoming.yaml").runner()
    assert (quick.game, quick.num_players, quick.final_play, quick.final_opponents) == ("gnoming", 4, "value", ["random", "greedy", "search"])
    champion = load_train_config("configs/champion_gnoming.yaml").runner()
    assert champion.num_players == [3, 4, 5, 6, 7] and champion.table_sizes == [3, 4, 5, 6, 7]
    assert champion.eval_opponents == ["greedy", "search"] and champion.final_opponents == ["greedy", "search"]
    assert (champion.generations, champion.games_per_generation, champion.value.width) == (4, 5000, 256)


def test_the_curve_plays_each_eval_opponent_on_the_same_deals(tmp_path):
    from training.config import from_runner, validate
    from training.learner.run import CURVE_FIELDS

    run = train(AfterstateRun(_tiny(tmp_path, "generations=1", "eval_opponents=[random, greedy]")), quiet=True)
    assert [sorted(k for k in r if k.startswith("vs_")) for r in run.log] == [["vs_greedy", "vs_random"]] * 2  # generation 0's policy, g0
    rows = run.curve()
    assert [(r["iteration"], r["opponent"]) for r in rows] == [(0, "random"), (0, "greedy"), (1, "random"), (1, "greedy")]
    assert [r["win_share"] for r in rows] == [run.log[0]["vs_random"][0], run.log[0]["vs_greedy"][0], run.log[1]["vs_random"][0],
                                              run.log[1]["vs_greedy"][0]]
    lines = (run.cfg.run_dir / "curve.csv").read_text().splitlines()
    assert lines[0] == ",".join(CURVE_FIELDS) and len(lines) == 5
    # the trainer's schema carries the list both ways; a checkpoint of a one-opponent curve still loads
    cfg = validate({"algo": "afterstate", "game": "gnoming", "num_players": 3, "eval": {"opponents": ["random", "greedy"]}})
    assert cfg.runner().eval_opponents == ["random", "greedy"]
    assert from_runner(cfg.runner().model_dump(), "afterstate")["eval"]["opponents"] == ["random", "greedy"]
    assert from_runner({"game": "gnoming", "num_players": 3, "eval_opponent": "search"}, "afterstate")["eval"]["opponents"] == ["search"]
    assert load_config(None, ["game=gnoming", "num_players=3", "eval_opponent=search"]).eval_opponents == ["search"]
    with pytest.raises(ValueError, match="eval_opponent and eval_opponents: give the curve's opponents once"):
        load_config(None, ["game=gnoming", "num_players=3", "eval_opponent=search", "eval_opponents=[greedy]"])
    with pytest.raises(ValueError, match="eval_opponents"):
        load_config(None, ["game=gnoming", "num_players=3", "eval_opponents=[]"])


def test_a_gnoming_run_over_two_table_sizes_plays_both_with_one_value(tmp_path):
    run = train(AfterstateRun(_tiny(tmp_path, "num_players=[3,5]", "generations=1", "games_per_generation=4")), quiet=True)
    data = run.records(0)
    per_game = np.split(data["x"], np.cumsum(data["games"])[:-1])
    size_columns = slice(NUM_FEATURES - 29, NUM_FEATURES - 24)  # context(): the table size's one-hot (3..7), then the piles' tops (2 x 12)
    assert [int(np.argmax(g[0, size_columns])) + 3 for g in per_game] == [3, 5, 3, 5]
    assert {"vs_random@3p", "vs_random@5p"} <= run.log[-1].keys()
    assert make_agent(str(run.cfg.run_dir), num_players=5, game="gnoming").num_players == [3, 5]
    with pytest.raises(ValueError, match=r"trained for num_players=\[3, 5\], not 4"):
        make_agent(str(run.cfg.run_dir), num_players=4, game="gnoming")

"""The Grinch's afterstate learner (training.learner.afterstate, training.learner.afterstate_run): the written-out
afterstate, the rules at the round's end, the draws' chance nodes, the recorded targets, exact resume and the agent."""

import json
import shutil

import numpy as np
import pytest
import torch

from grinch_env.agents import make_agent
from grinch_env.games import get_game
from grinch_env.grinch import encoding as enc
from grinch_env.grinch.cards import card_id, parse_card
from grinch_env.grinch.game import DRAW_PILE_ACTION, NUM_ACTIONS, SCORE_BASE
from grinch_env.grinch.scoring import NOISE_ROW, PRESENTS_ROW, RAINBOW_ROW, WREATHS_ROW
from training.learner.afterstate import (
    NUM_DENY_FEATURES,
    NUM_TABLE_FEATURES,
    AfterstateAgent,
    Denial,
    LaterValue,
    RulesLeafValue,
    Value,
    deny_features,
    features,
    later_inputs,
    legal_features,
    table_size,
)
from training.learner.afterstate_run import AfterstateRun, Explorer, final_report, game_seeds, load_config, play_game, train
from training.train import main

TINY = ["games_per_generation=6", "value.steps=30", "value.width=16", "later.steps=30", "later.width=8", "eval_games=2", "final_games=0"]


def _linear(weights: dict[int, float], inputs: int, bias: float = 0.0) -> Value:
    """A value ``bias + sum(w * x[i])`` in points (mu 0, sd 1)."""
    lin = torch.nn.Linear(inputs, 1)
    with torch.no_grad():
        lin.weight.zero_()
        lin.bias.fill_(bias)
        for i, w in weights.items():
            lin.weight[0, i] = w
    return Value(lin, 0.0, 1.0)


ZERO_W = LaterValue(_linear({}, 13))
BONUS_COLUMNS = range(24, 36)  # features(): the kept hand's 24 suit x rank counts, then its 12 bonus cards


def _hand_obs(cards: list[str], used: tuple[int, ...] = (), rounds_after: int = 0) -> np.ndarray:
    obs = np.zeros(enc.OBS_SIZE, np.float32)
    obs[[parse_card(c) for c in cards]] = 1
    obs[[enc.ROW_USED + r for r in used]] = 1
    obs[enc.ROUNDS_LEFT + rounds_after] = 1
    return obs


def test_features_write_out_the_kept_hand_and_the_unseen_cards():
    obs = _hand_obs(["W1", "W1'"])
    mask = np.zeros(NUM_ACTIONS, bool)
    mask[[card_id(0, 1, 0), card_id(0, 1, 1)]] = True
    x, legal = features(obs[None], mask[None])
    assert x.shape == (1, 48, 85) and legal[0].sum() == 2
    kept = x[0, card_id(0, 1, 0)]  # discard W1: W1' is kept
    assert kept[0] == 0.5 and kept[:24].sum() == 0.5  # one card in the (Wreaths, 1) cell, counted /2
    assert kept[24] == 1 and kept[24:36].sum() == 1  # W1' is the first bonus card of the standard layout
    assert np.allclose(kept[36:43], [1 / 30, 0, 0, 0, 1 / 30, 0, 0])  # Wreaths 1 and Rainbow 1; its bonus (3 Noise) does not hold
    assert kept[43] == 0
    unseen = kept[44:68]  # the 46 other cards: every cell 2 cards (1.0) but (Wreaths, 1) with none
    assert unseen[0] == 0 and np.all(unseen[1:] == 1)


def test_legal_features_are_the_legal_rows_of_features_alone():
    # hand W1 W1' N2: only W1 and N2 may go (a mask, as a rule could make it); a second decision with no legal discard
    obs = np.stack([_hand_obs(["W1", "W1'", "N2"], used=(RAINBOW_ROW,)), _hand_obs(["P6"])])
    mask = np.zeros((2, NUM_ACTIONS), bool)
    w1, n2 = card_id(0, 1, 0), card_id(1, 2, 0)
    mask[0, [w1, n2]] = True
    x, decision, card = legal_features(obs, mask)
    assert decision.tolist() == [0, 0] and card.tolist() == [w1, n2]
    full, legal = features(obs, mask)
    assert np.array_equal(x, full[legal])
    keeps_w1_w1 = x[1]  # N2 goes: W1 W1' stay, two cards in the (Wreaths, 1) cell
    assert keeps_w1_w1[0] == 1.0 and keeps_w1_w1[:24].sum() == 1.0
    assert np.allclose(keeps_w1_w1[36:43] * 30, [2, 0, 0, 0, 0, 0, 0])  # Wreaths 1 + 1; Rainbow used (0); no match of 3
    assert np.allclose(x[0, 36:43] * 30, [1, 2, 0, 0, 0, 0, 0])  # W1 goes: W1' and N2


def test_final_hand_is_worth_its_best_row_plus_w_after_it_plus_its_bonus():
    cards = ["W5", "W6", "W6'", "N4", "P1'"]  # Wreaths 17, Noise 4, Presents 1, Rainbow 11; P1' scores 10 with three Wreaths
    kept = np.zeros((1, 48), np.float32)
    kept[0, [parse_card(c) for c in cards]] = 1
    leaf = RulesLeafValue(_linear({}, 85), ZERO_W, lookahead=False)
    assert leaf.final(_hand_obs(cards, rounds_after=2), kept)[0] == 17 + 10
    assert leaf.final(_hand_obs(cards, used=(WREATHS_ROW,), rounds_after=2), kept)[0] == 11 + 10  # Wreaths used: Rainbow
    rainbow_gone = LaterValue(_linear({RAINBOW_ROW: 100.0}, 13))  # W: 100 later points once Rainbow is used
    leaf = RulesLeafValue(_linear({}, 85), rainbow_gone, lookahead=False)
    assert leaf.final(_hand_obs(cards, rounds_after=2), kept)[0] == 11 + 100 + 10  # Rainbow now (11) and W after it beat Wreaths (17)
    assert leaf.final(_hand_obs(cards, rounds_after=0), kept)[0] == 17 + 10  # no round left: W is 0


def test_rows_score_points_now_plus_w_after():
    obs = _hand_obs(["W5", "W6", "W6'", "N4", "P1'"], used=(PRESENTS_ROW,), rounds_after=1)
    mask = np.zeros(NUM_ACTIONS, bool)
    mask[[SCORE_BASE + r for r in range(7) if r != PRESENTS_ROW]] = True
    acts, worth = ZERO_W.rows(obs, mask)
    assert acts.tolist() == [SCORE_BASE + r for r in (0, 1, 2, 4, 5, 6)]
    assert worth.tolist() == [17, 4, 0, 11, 0, 0]
    agent = AfterstateAgent(_linear({}, 85), ZERO_W, "value")
    assert agent.act(obs, mask) == SCORE_BASE + WREATHS_ROW
    agent = AfterstateAgent(_linear({}, 85), LaterValue(_linear({NOISE_ROW: 50.0}, 13)), "value")
    assert agent.act(obs, mask) == SCORE_BASE + NOISE_ROW  # 4 now and 50 later beat Wreaths' 17


def _position(index: int, kind=lambda mask, obs: mask[DRAW_PILE_ACTION:SCORE_BASE].any()):
    """The ``index``-th decision of ``kind`` (default: a draw) in the seeded random game used below (2 players, deal seed 7)."""
    spec = get_game("grinch")
    game, encoder, rng, k = spec.new_game(2, 7), spec.encoder(), np.random.default_rng(0), 0
    while True:
        view = encoder.observe(game, game.current)
        mask, obs = np.asarray(view["action_mask"]).astype(bool), np.asarray(view["observation"], np.float32)
        if kind(mask, obs):
            if k == index:
                return obs, mask
            k += 1
        game.step(int(rng.choice(np.flatnonzero(mask))))


def test_the_grinch_looks_ahead_as_a_who_with_roles_all():
    # the Grinch's second discard: 5 cards in hand, 4 kept
    obs, mask = _position(0, lambda mask, obs: mask[:DRAW_PILE_ACTION].any() and obs[enc.GRINCH_SEAT] > 0.5 and obs[:48].sum() == 5)
    zero_v = _linear({}, 85)
    legal, worth = RulesLeafValue(zero_v, ZERO_W, lookahead=True).discards(obs, mask)
    assert len(legal) == 5 and np.all(worth == 0)  # roles who: the Grinch's discard is V's (0 here)
    legal, worth = RulesLeafValue(zero_v, ZERO_W, lookahead=True, roles="all").discards(obs, mask)
    as_who = obs.copy()
    as_who[enc.GRINCH_SEAT] = 0.0  # the same position read as a Who's
    _, who_worth = RulesLeafValue(zero_v, ZERO_W, lookahead=True).discards(as_who, mask)
    assert np.all(worth > 0) and np.allclose(worth, who_worth)  # every pair of unseen cards next, the final hand by the rules


def test_draws_enumerate_their_chance_nodes():
    count_bonus = _linear({c: 1.0 for c in BONUS_COLUMNS}, 85)  # V: the bonus cards kept
    # second draw: hand W3' W6' P2 P3' (W3', P3' bonus cards), 42 unseen cards of which 10 bonus; tops O6 and N5'.
    # Every 5-card hand keeps its bonus cards (a plain card goes), so a draw is worth 2 + the chance of a bonus card.
    obs, mask = _position(3)
    acts, worth = count_bonus.draws(obs, mask)
    assert acts.tolist() == [48, 49, 50]
    assert np.allclose(worth, [2 + 10 / 42, 2, 2])
    # first of two draws: hand W3' W6' P3', 43 unseen (10 bonus); two pile draws bring 2 x 10/43 bonus cards on average;
    # a top (O6, N5') then the pile: 10/43
    obs, mask = _position(2)
    acts, worth = count_bonus.draws(obs, mask)
    assert acts.tolist() == [48, 49, 50]
    assert np.allclose(worth, [2 + 20 / 43, 2 + 10 / 43, 2 + 10 / 43])
    agent = AfterstateAgent(count_bonus, ZERO_W, "value")
    assert agent.act(obs, mask) == DRAW_PILE_ACTION
    # generation play's estimate: the draw pile valued on a sample of the unseen cards (all 42 of them: the exact worth)
    obs, mask = _position(3)
    assert np.allclose(count_bonus.draws(obs, mask, pile_sample=42, rng=np.random.default_rng(0))[1], [2 + 10 / 42, 2, 2])
    one = count_bonus.draws(obs, mask, pile_sample=1, rng=np.random.default_rng(0))[1]
    assert one[0] in (2.0, 3.0) and one[1:].tolist() == [2, 2]  # one unseen card: a bonus card or not


def _who_discard(index: int):
    return _position(index, lambda mask, obs: mask[:DRAW_PILE_ACTION].any() and obs[enc.GRINCH_SEAT] < 0.5)


def test_deny_features_write_out_what_a_discard_puts_in_the_grinchs_reach():
    # round 1, turn 3: hand W1 N1' N5 N5' O3' P1'; the Grinch (one seat left) is known to hold O4 O4' O6 (taken from my
    # pile, now empty), its pile's top is P3', its Run row is used; four rounds after this one
    obs, mask = _who_discard(5)
    x = deny_features(obs[None])[0]
    assert x.shape == (48, NUM_DENY_FEATURES) == (48, 166)
    n5, p1 = parse_card("N5'"), parse_card("P1'")
    assert np.flatnonzero(x[n5, :24]).tolist() == [6 + 4] and x[n5, 24:36].sum() == 0  # (Noise, 5); no bonus card
    assert np.flatnonzero(x[p1, :24]).tolist() == [18 + 0] and np.flatnonzero(x[p1, 24:36]).tolist() == [9]  # (Presents, 1), bonus card 9
    ctx = x[n5, 36:]
    assert np.array_equal(x[p1, 36:], ctx)  # the decision's context, the same for every discard
    assert ctx[:6].tolist() == [0, 1, 0, 0, 0, 0]  # the Grinch one seat to the left
    known = np.zeros(24)
    known[[12 + 3, 12 + 5]] = [1.0, 0.5]  # O4 O4' (two of two, /2) and O6
    assert np.array_equal(ctx[6:30], known) and ctx[30:42].sum() == 0
    assert ctx[42:66].sum() == 0 and np.flatnonzero(ctx[66:90]).tolist() == [18 + 2]  # my pile empty; the Grinch's top P3'
    from grinch_env.grinch.agents.base import decode

    assert ctx[90:114].sum() * 2 == len(decode(obs).unseen())
    assert ctx[114:121].tolist() == [0, 0, 0, 0, 0, 0, 1]  # the Grinch's used rows: Run
    assert ctx[121:124].tolist() == [0, 0, 1] and ctx[124:130].tolist() == [0, 0, 0, 0, 1, 0]  # turn 3; 4 rounds after this one


def test_the_grinchs_points_are_charged_to_a_whos_discards_only():
    obs, mask = _who_discard(5)
    g = Denial(_linear({10: 3.0}, NUM_DENY_FEATURES), weight=1.0)  # G: 3 points to the Grinch for a (Noise, 5)
    legal = np.flatnonzero(mask[:DRAW_PILE_ACTION])
    assert dict(zip(legal.tolist(), g(obs, legal).tolist())) == {parse_card(c): 3.0 * (c[:2] == "N5") for c in
                                                                  ["W1", "N1'", "N5", "N5'", "O3'", "P1'"]}
    assert np.all(Denial(g.value, 0.5)(obs, legal) <= 1.5)
    keep_n5 = _linear({10: -4.0}, 85)  # V: minus 4 a kept (Noise, 5) count: discarding N5 or N5' is worth 2 more
    assert AfterstateAgent(keep_n5, ZERO_W, "value").act(obs, mask) == parse_card("N5")
    assert AfterstateAgent(keep_n5, ZERO_W, "value", deny=g).act(obs, mask) == parse_card("W1")  # 2 - 3 < 0: the lowest other
    grinch, gmask = _position(0, lambda mask, obs: mask[:DRAW_PILE_ACTION].any() and obs[enc.GRINCH_SEAT] > 0.5)
    assert np.all(g(grinch, np.flatnonzero(gmask[:DRAW_PILE_ACTION])) == 0)  # the Grinch's own discards are not charged


def test_generation_records_carry_each_rounds_points_forward():
    rec = play_game(Explorer(None, None, 1.0, "random"), 2, seed=11)
    assert len(rec["x"]) == len(rec["round"]) == len(rec["used_after"]) > 0
    rounds = 6  # two players play six rounds
    for seat in (0, 1):
        mine = rec["seat"] == seat
        assert set(rec["round_index"][mine]) == set(range(rounds))  # the seat discards with a choice in every round
        per = {r: (rec["round"][mine & (rec["round_index"] == r)], rec["own"][mine & (rec["round_index"] == r)]) for r in range(rounds)}
        for r, (pts, own) in per.items():
            assert len(set(pts)) == 1 and len(set(own)) == 1  # one round, one outcome
            later = per[r + 1][1][0] if r + 1 < rounds else 0.0
            assert own[0] == pts[0] + later
    assert np.all(rec["rounds_after"] == rounds - 1 - rec["round_index"])
    assert np.all(rec["used_after"].sum(1) == rec["round_index"] + 1)  # one row written each round
    legal = rec["x"][:, :24].sum(1) * 2 + 1  # the kept hand's size plus the discarded card: every card in hand may go
    assert np.allclose(rec["entropy"], np.log(legal))  # generation 0 discards uniformly at random
    who = rec["x"][:, -1] == 0  # features()' last column: the Grinch or not
    assert len(rec["deny_x"]) == len(rec["deny_y"]) == who.sum() > 0
    grinch_points = [rec["round"][(rec["seat"] == 1 - s) & (rec["round_index"] == r)][0] for s, r in zip(rec["seat"][who], rec["round_index"][who])]
    assert rec["deny_y"].tolist() == grinch_points  # each Who's discard: the other seat's (the Grinch's) points in that round
    assert np.all(rec["deny_x"][:, :24].sum(1) == 1)  # one discarded card each


def _tiny(tmp_path, *extra: str):
    return load_config(None, [f"checkpoint_dir={tmp_path}", *TINY, *extra])


def _states(run: AfterstateRun) -> list[np.ndarray]:
    return [t.numpy() for f in run.fitted for part in ("value", "later") for t in f[part]["model"].values()]


def test_interrupted_run_resumes_to_the_same_values(tmp_path):
    straight = train(AfterstateRun(_tiny(tmp_path / "a", "generations=2")), quiet=True)
    first = train(AfterstateRun(_tiny(tmp_path / "b", "generations=2")), generations=1, quiet=True)
    assert first.generation == 1
    shutil.copytree(first.cfg.run_dir, tmp_path / "copy")
    resumed = train(AfterstateRun.load(first.cfg.run_dir), quiet=True)
    assert resumed.generation == straight.generation == 2
    assert all(np.array_equal(a, b) for a, b in zip(_states(straight), _states(resumed), strict=True))
    assert [r["vs_greedy"] for r in straight.log] == [r["vs_greedy"] for r in resumed.log]
    # a copied run goes on in its copy, to the same values, and leaves the directory it was copied from alone
    before = (resumed.cfg.run_dir / "latest.pt").read_bytes()
    copy = AfterstateRun.load(tmp_path / "copy")
    assert (copy.cfg.run_dir, copy.cfg.run_name) == (tmp_path / "copy", "copy")
    train(copy, quiet=True)
    assert all(np.array_equal(a, b) for a, b in zip(_states(straight), _states(copy), strict=True))
    assert main(["--report", str(tmp_path / "copy"), "--final-games", "2", "--set", "eval.final_opponents=[random]"]) == 0
    assert sorted(json.loads((tmp_path / "copy" / "report" / "summary.json").read_text())) == ["random"]
    assert (resumed.cfg.run_dir / "latest.pt").read_bytes() == before and not (resumed.cfg.run_dir / "report").exists()
    branch = AfterstateRun.load(tmp_path / "copy", ["run_name=branch"])  # --set run_name branches beside it
    assert branch.cfg.run_dir == tmp_path / "branch"
    # the records are a cache: played again from the checkpoint's values, they are the same
    saved = dict(np.load(straight.data_path(1)))
    straight.data_path(1).unlink()
    again = straight.records(1)
    assert saved.keys() == again.keys() and all(np.array_equal(saved[k], again[k]) for k in saved)
    other = AfterstateRun(_tiny(tmp_path / "a", "games_per_generation=8"))  # a new run over a left data/: its own games
    assert len(other.records(0)["games"]) == 8 and other.records(0)["seeds"].tolist() == game_seeds(0, 0, 8)
    lines = (straight.cfg.run_dir / "curve.csv").read_text().splitlines()
    assert [line.split(",")[:3] for line in lines[1:]] == [["0", "0", "0"], ["1", "216", "6"], ["2", "432", "12"]]  # the random start, two fits


def test_workers_do_not_change_the_records(tmp_path):
    one = train(AfterstateRun(_tiny(tmp_path / "one", "generations=1", "eval_games=0")), quiet=True)
    two = AfterstateRun(_tiny(tmp_path / "two", "generations=1", "eval_games=0", "workers=2"))
    two.fitted = one.fitted
    a, b = one.records(1), two.records(1)
    assert all(np.array_equal(a[k], b[k]) for k in a)


def test_generation_play_with_the_values_draws_is_seeded(tmp_path):
    runs = [train(AfterstateRun(_tiny(tmp_path / name, "generations=2", "eval_games=0", "play_draws=value", "draw_samples=4")), quiet=True)
            for name in ("a", "b")]
    a, b = runs[0].records(1), runs[1].records(1)
    assert all(np.array_equal(a[k], b[k]) for k in a) and len(a["games"]) == 6
    random_draws = AfterstateRun(_tiny(tmp_path / "c", "generations=2", "eval_games=0"))
    random_draws.fitted = runs[0].fitted[:1]
    assert not np.array_equal(random_draws.records(1)["round"], a["round"])  # the same deals, other draws


def test_the_run_is_a_harness_agent(tmp_path):
    from grinch_env.evaluation.evaluate import evaluate

    run = train(AfterstateRun(_tiny(tmp_path, "generations=1")), quiet=True)
    agent = make_agent(str(run.cfg.run_dir), num_players=2, game="grinch")
    assert isinstance(agent, AfterstateAgent) and agent.play == "lookahead" and agent.name == "learner_grinch_afterstate_value/g0"
    res = evaluate([f"{run.cfg.run_dir}:play=lookahead2,generation=0", "random"], num_players=2, num_games=2, seed=3, game="grinch")
    assert res.num_games == 2
    with pytest.raises(ValueError, match="play must be one of value, leaf, lookahead, lookahead2, got 'deep'"):
        make_agent(f"{run.cfg.run_dir}:play=deep", game="grinch")
    with pytest.raises(ValueError, match=r"generation must be an int in 0\.\.0, got 3"):
        make_agent(f"{run.cfg.run_dir}:generation=3", game="grinch")
    with pytest.raises(ValueError, match="roles must be one of who, all, got 'both'"):
        make_agent(f"{run.cfg.run_dir}:roles=both", game="grinch")
    assert make_agent(f"{run.cfg.run_dir}:roles=all", game="grinch").name == "learner_grinch_afterstate_value/g0:roles=all"
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['samples'\]"):
        make_agent(f"{run.cfg.run_dir}:samples=3", game="grinch")
    with pytest.raises(ValueError, match="not Gnoming"):
        make_agent(str(run.cfg.run_dir), game="gnoming")


def test_bad_configs_and_resumes_say_what_is_allowed(tmp_path):
    with pytest.raises(ValueError, match="valuee"):
        load_config(None, ["valuee.width=3"])
    with pytest.raises(ValueError, match="game"):
        load_config(None, ["game=skat"])
    with pytest.raises(ValueError, match="num_players for Gnoming A Round must be an int in 3..7, got 2"):  # the Grinch's default table
        load_config(None, ["game=gnoming"])
    with pytest.raises(ValueError, match="opponent 'nobody' is not an agent"):
        load_config(None, ["eval_opponents=[nobody]"])
    run = train(AfterstateRun(_tiny(tmp_path, "generations=1", "eval_games=0")), quiet=True)
    with pytest.raises(ValueError, match="cannot change seed on resume"):
        AfterstateRun.load(run.cfg.run_dir, ["seed=3"])
    assert main(["--config", "configs/grinch.yaml", "--set", f"checkpoint.dir={tmp_path}",
                 "--set", "checkpoint.run_name=learner_grinch_afterstate_value"]) == 2  # latest.pt exists: resume it instead
    assert main(["--resume", str(tmp_path / "missing")]) == 2
    with pytest.raises(ValueError, match="config file nowhere.yaml does not exist"):
        load_config("nowhere.yaml")


def test_a_run_that_fits_g_charges_it_in_play_and_in_the_agent(tmp_path):
    run = train(AfterstateRun(_tiny(tmp_path / "deny", "generations=2", "eval_games=0", "deny=true", "deny_fit.steps=20", "deny_fit.width=8")),
                quiet=True)
    assert all("deny" in f and f["deny"]["weight"] == 1.0 for f in run.fitted)  # 2 players: own points against the other's
    assert [r["deny_explained_variance"] < 1 for r in run.log] == [True, True]
    assert [r["deny_records"] for r in run.log] == [len(run.records(g)["deny_y"]) for g in (0, 1)]  # the newest generation's alone
    agent = make_agent(str(run.cfg.run_dir), num_players=2, game="grinch")
    assert agent.deny is not None and agent.deny.weight == 1.0 and repr(agent).endswith("deny=1)")
    assert make_agent(f"{run.cfg.run_dir}:deny=0.5", game="grinch").deny.weight == 0.5
    with pytest.raises(ValueError, match="deny must be a number in 0..10"):
        make_agent(f"{run.cfg.run_dir}:deny=lots", game="grinch")
    with pytest.raises(ValueError, match="cannot change deny_weight on resume"):
        AfterstateRun.load(run.cfg.run_dir, ["deny_weight=2"])
    # generation 1 was played with G charged: other Who discards than the same values without it
    plain = AfterstateRun(_tiny(tmp_path / "plain", "generations=2", "eval_games=0"))
    plain.fitted = [{k: v for k, v in run.fitted[0].items() if k != "deny"}]
    assert not np.array_equal(plain.records(1)["deny_x"], run.records(1)["deny_x"])
    train(plain, quiet=True)
    with pytest.raises(ValueError, match="deny=1 needs a run that fits the Grinch's points"):
        make_agent(f"{plain.cfg.run_dir}:deny=1", game="grinch")


def test_afterstates_of_a_run_over_several_tables_carry_the_table_size():
    obs, mask = _who_discard(5)  # a 2-player position
    x, _ = features(obs[None], mask[None])
    xt, _ = features(obs[None], mask[None], table=True)
    assert xt.shape == (1, 48, NUM_TABLE_FEATURES) == (1, 48, 91) and np.array_equal(xt[..., :85], x)
    assert xt[0, 0, 85:].tolist() == [1, 1, 0, 0, 0, 0] and table_size(obs) == 2  # two seats at the table
    g = Denial(_linear({10: 3.0}, NUM_DENY_FEATURES), weight=None)  # the charge's weight: 1/(n-1) at the observed table
    legal = np.flatnonzero(mask[:DRAW_PILE_ACTION])
    assert g.weight_at(obs) == 1.0 and g(obs, legal).max() == 3.0
    three = obs.copy()
    three[enc.AT_TABLE + 2] = 1.0  # the same hand read at a table of three
    assert table_size(three) == 3 and g.weight_at(three) == 0.5 and g(three, legal).max() == 1.5


def test_a_run_over_several_table_sizes_fits_one_set_of_values_for_all(tmp_path, monkeypatch):
    run = train(AfterstateRun(_tiny(tmp_path, "num_players=[2,3]", "games_per_generation=4", "generations=1", "eval_games=2", "deny=true",
                                    "deny_fit.steps=20", "deny_fit.width=8")), quiet=True)
    data = run.records(0)
    per_game = np.split(data["x"], np.cumsum(data["games"])[:-1])
    assert [int(g[0, 85:].sum()) for g in per_game] == [2, 3, 2, 3] and all(np.all(g[:, 85:] == g[0, 85:]) for g in per_game)
    fitted = run.fitted[0]
    assert fitted["value"]["table"] is True and fitted["value"]["inputs"] == 91 and fitted["deny"]["weight"] is None
    assert fitted["later"]["table"] is True and fitted["later"]["inputs"] == 7 + 6 + 6  # W reads the table's size too
    w = LaterValue(Value.from_state(fitted["later"]))
    with pytest.raises(ValueError, match="fitted over several table sizes: give the table's size"):
        w(np.zeros((1, 7)), np.array([2]))
    assert later_inputs(np.zeros((1, 7)), np.array([2]), np.array([3]))[0, 13:].tolist() == [1, 1, 1, 0, 0, 0]
    assert w(np.zeros((1, 7)), np.array([0]), np.array([3])).tolist() == [0.0]  # no round left: nothing later
    assert {"vs_greedy@2p", "vs_greedy@3p", "mean_score@2p", "mean_score@3p"} <= run.log[-1].keys()
    lines = [line.split(",") for line in (run.cfg.run_dir / "curve.csv").read_text().splitlines()[1:]]
    assert [(row[0], row[6]) for row in lines] == [("0", "2"), ("0", "3"), ("1", "2"), ("1", "3")]  # the random start and one fit, each size
    agent = make_agent(str(run.cfg.run_dir), num_players=3, game="grinch")
    assert agent.num_players == [2, 3] and agent.deny.weight is None and repr(agent).endswith("deny=1/(n-1))")
    with pytest.raises(ValueError, match=r"trained for num_players=\[2, 3\], not 4"):
        make_agent(str(run.cfg.run_dir), num_players=4, game="grinch")
    final_report(run, games=2, seed=5)
    summary = json.loads((run.cfg.run_dir / "report" / "summary.json").read_text())
    assert sorted(summary) == ["expectimax@2p", "expectimax@3p", "greedy@2p", "greedy@3p"]
    assert summary["greedy@3p"]["num_players"] == 3 and summary["greedy@3p"]["parity"] == 1 / 3
    assert (run.cfg.run_dir / "report" / "vs_greedy_3p.txt").exists()
    import grinch_env.evaluation.evaluate as evaluation  # a report stopped part-way keeps the matches it finished
    real, calls = evaluation.evaluate, []

    def stopped_at_the_third(*args, **kwargs):
        calls.append((args[0][1], kwargs["num_players"]))
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    (run.cfg.run_dir / "report" / "summary.json").unlink()
    monkeypatch.setattr(evaluation, "evaluate", stopped_at_the_third)
    with pytest.raises(KeyboardInterrupt):
        final_report(run, games=2, seed=5)
    assert calls == [("greedy", 2), ("expectimax", 2), ("greedy", 3)]
    kept = json.loads((run.cfg.run_dir / "report" / "summary.json").read_text())
    assert kept == {key: summary[key] for key in ("greedy@2p", "expectimax@2p")}
    with pytest.raises(ValueError, match=r"num_players lists a table size twice: \[2, 2\]"):
        load_config(None, ["num_players=[2,2]"])
    with pytest.raises(ValueError, match="num_players for Grinch Grow Your Heart must be an int in 2..6, got 7"):
        load_config(None, ["num_players=[2,7]"])

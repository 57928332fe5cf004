"""The committed policies load, play legal games and carry the config and report the README quotes."""

import json
from pathlib import Path

import pytest
import yaml

from grinch_env.evaluation.evaluate import evaluate
from training.checkpoint import load_agent, load_checkpoint
from training.config import DistillConfig, TrainConfig, load_config

ROOT = Path(__file__).resolve().parents[1]
GRINCH_REPORT = {"greedy@2p", "expectimax@2p", "greedy@4p", "expectimax@4p"}
GNOMING_REPORT = {"greedy@3p", "search@3p", "greedy@5p", "search@5p"}
# run -> (config schema, game, a table size, what its report must hold)
SHIPPED = {
    "distill_lookahead": (DistillConfig, "grinch", 2, GRINCH_REPORT),
    "distill_expectimax": (DistillConfig, "grinch", 2, GRINCH_REPORT),
    "selfplay_mixed": (TrainConfig, "grinch", 2, GRINCH_REPORT),
    "gnoming_distill": (DistillConfig, "gnoming", 3, GNOMING_REPORT),
    "gnoming_finetune": (TrainConfig, "gnoming", 3, GNOMING_REPORT),
}


@pytest.mark.parametrize("run", sorted(SHIPPED))
def test_shipped_policy_loads_plays_and_matches_its_config(run):
    schema, game, n, report = SHIPPED[run]
    run_dir = ROOT / "checkpoints" / run
    ckpt = load_checkpoint(run_dir / "best.pt")
    assert ckpt["optimizer"] is None and ckpt["config"]["run_name"] == run and ckpt["config"].get("game", "grinch") == game  # runs made before the game key are Grinch runs
    stored = schema.model_validate(yaml.safe_load((run_dir / "config.yaml").read_text()))
    assert stored == load_config(ROOT / "configs" / f"{run}.yaml", schema=schema)  # the config in configs/ made it
    result = evaluate([str(run_dir), "random"], num_players=n, num_games=2, seed=0, game=game)
    assert result.agents == [run, "random"] and result.num_games == 2
    summary = json.loads((run_dir / "report" / "summary.json").read_text())
    assert report <= set(summary)


def _cell(rate: float, ci: list[float], players: int) -> str:
    return f"{players}p {rate:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"


def _readme_rows() -> dict[str, list[str]]:
    """Return the README's results table: policy directory -> the row's cells."""
    rows = {}
    for line in (ROOT / "README.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) == 6:
            rows[cells[0].split("`")[1]] = cells
    return rows


@pytest.mark.parametrize("run", sorted(SHIPPED))
def test_the_readme_results_table_quotes_each_shipped_report(run):
    _, game, _, report = SHIPPED[run]
    cells = _readme_rows()[run]
    assert cells[1] == {"grinch": "Grinch", "gnoming": "Gnoming"}[game]
    summary = json.loads((ROOT / "checkpoints" / run / "report" / "summary.json").read_text())
    for key in sorted(report):
        opponent, players = key.split("@")
        column = cells[2] if opponent == "greedy" else cells[3]
        assert _cell(summary[key]["win_rate"], summary[key]["win_rate_ci"], int(players[:-1])) in column, (run, key)
        assert summary[key]["games"] == int(cells[4]), (run, key)
    assert f"checkpoints/{run} " in cells[5] and "--report-only" in cells[5]


def test_the_readme_results_table_quotes_expert_iteration_and_names_the_shipped_policies():
    cells = _readme_rows()["expert_iteration/gen_1"]
    record = json.loads((ROOT / "checkpoints" / "expert_iteration" / "gen_1" / "report.json").read_text())
    for match in record["matches"]:
        assert match["opponent"] == "expectimax" and match["games"] == int(cells[4]) and f"--seed {match['seed']}" in cells[5]
        assert _cell(match["all"]["win_rate"], match["all"]["ci95"], match["players"]) in cells[3]
    rows = _readme_rows()
    assert set(rows) == (set(SHIPPED) | {"expert_iteration/gen_1"} | set(LEARNERS) | set(GRINCH_LEARNERS) | set(NET_SEARCH) | set(AFTERSTATE)
                         | set(GNOMING_AFTERSTATE))
    assert [run for run, cells in rows.items() if "(shipped)" in cells[0]] == ["distill_lookahead", "gnoming_finetune"]
    assert load_agent(ROOT / "checkpoints" / "distill_lookahead").name == "distill_lookahead/best"


# The general learner's long Gnoming run, shipped at two points of its self-play and one of its league branch (the
# run's latest.pt then), and the league branch at the end of its budget with the run's own final report:
# run -> (iteration, the configs/ file that made it, the greedy sizes of its report, each search match and where its
# interval lies: "under" parity, "parity" (the interval holds it), "above"; the random sizes of its report, if any).
LEARNERS = {
    "learner_gnoming_long_106min": (167, "learner_gnoming_long", (3, 4, 5, 6, 7), {"search@3p": "under"}, ()),
    "learner_gnoming_long_237min": (372, "learner_gnoming_long", (3, 5, 7), {"search@3p": "parity", "search@5p": "under"}, ()),
    "learner_gnoming_league_373min": (611, "learner_gnoming_league", (3, 5), {"search@3p": "above", "search@5p": "parity"}, ()),
    "learner_gnoming_league": (1011, "learner_gnoming_league", (3, 5), {"search@3p": "above", "search@5p": "parity"}, (3, 5)),
}


def _side_of_parity(ci: list[float], n: int) -> str:
    return "under" if ci[1] < 1 / n else "above" if ci[0] > 1 / n else "parity"


@pytest.mark.parametrize("learner", sorted(LEARNERS))
def test_the_shipped_learners_load_play_every_size_and_the_readme_quotes_their_reports(learner):
    import torch

    from training.learner.config import LearnerConfig
    from training.learner.config import load_config as load_learner_config
    from training.learner.formats import RUN_FORMAT

    iteration, config, greedy_sizes, searches, random_sizes = LEARNERS[learner]
    run_dir = ROOT / "checkpoints" / learner
    ckpt = torch.load(run_dir / "latest.pt", map_location="cpu", weights_only=False)
    made_by = load_learner_config(ROOT / "configs" / f"{config}.yaml", [])
    assert (ckpt["format"], ckpt["iteration"], ckpt["config"]["num_players"]) == (RUN_FORMAT, iteration, made_by.num_players)
    stored = LearnerConfig.model_validate(yaml.safe_load((run_dir / "config.yaml").read_text()))
    assert stored == LearnerConfig.model_validate(ckpt["config"]) == made_by
    for n in (min(made_by.table_sizes), max(made_by.table_sizes)):  # one network for every size it trained on
        result = evaluate([str(run_dir), "random"], num_players=n, num_games=1, seed=0, game="gnoming")
        assert result.agents == [learner, "random"] and result.num_games == 1
    summary = json.loads((run_dir / "report" / "summary.json").read_text())
    cells = _readme_rows()[learner]
    assert sorted(summary) == sorted([f"greedy@{n}p" for n in greedy_sizes] + list(searches) + [f"random@{n}p" for n in random_sizes])
    for n in random_sizes:
        got = summary.pop(f"random@{n}p")
        assert got["games"] == 1200 and got["win_rate_ci"][0] > 0.99 and f"{got['win_rate']:.3f}" in (run_dir / "report" / f"vs_random_{n}p.txt").read_text()
    for key, side in searches.items():
        got = summary.pop(key)
        n = got["num_players"]
        assert key == f"search@{n}p" and got["games"] == 1200 and _side_of_parity(got["win_rate_ci"], n) == side, (key, got)
        assert _cell(got["win_rate"], got["win_rate_ci"], n) in cells[3]
        assert f"{got['win_rate']:.3f}" in (run_dir / "report" / f"vs_search_{n}p.txt").read_text()
    assert cells[1] == "Gnoming" and cells[4] == "1200" and f"--report checkpoints/{learner} " in cells[5]
    for key, got in summary.items():
        n = got["num_players"]
        assert key == f"greedy@{n}p" and got["games"] == 1200 and got["win_rate_ci"][0] > 1 / n  # above parity with its interval, at every size
        assert _cell(got["win_rate"], got["win_rate_ci"], n) in cells[2]
        assert f"{got['win_rate']:.3f}" in (run_dir / "report" / f"vs_greedy_{n}p.txt").read_text()


# The Grinch learner from scratch, shipped at the end of a 12-minute run (the run directory, its run name set to the
# directory's): run -> (iteration, the configs/ file that made it, the overrides it was run with, each opponent of its
# final report at 2 players and where its interval lies against parity).
GRINCH_LEARNERS = {
    "learner_grinch_cards": (106, "learner_grinch_cards", ["eval.final_games=1200", "eval.final_opponents=[greedy]"],
                             {"greedy": "parity", "expectimax": "under"}),
}


@pytest.mark.parametrize("learner", sorted(GRINCH_LEARNERS))
def test_the_shipped_grinch_learner_loads_plays_and_the_readme_quotes_its_report(learner):
    import torch

    from training.learner.config import LearnerConfig
    from training.learner.config import load_config as load_learner_config
    from training.learner.formats import RUN_FORMAT

    iteration, config, overrides, sides = GRINCH_LEARNERS[learner]
    run_dir = ROOT / "checkpoints" / learner
    ckpt = torch.load(run_dir / "latest.pt", map_location="cpu", weights_only=False)
    made_by = load_learner_config(ROOT / "configs" / f"{config}.yaml", overrides)
    assert (ckpt["format"], ckpt["iteration"]) == (RUN_FORMAT, iteration) and ckpt["train_seconds"] >= made_by.max_seconds
    stored = LearnerConfig.model_validate(yaml.safe_load((run_dir / "config.yaml").read_text()))
    assert stored == LearnerConfig.model_validate(ckpt["config"]) == made_by
    result = evaluate([str(run_dir), "random"], num_players=2, num_games=1, seed=0, game="grinch")
    assert result.agents == [learner, "random"] and result.num_games == 1
    summary = json.loads((run_dir / "report" / "summary.json").read_text())
    cells = _readme_rows()[learner]
    assert sorted(summary) == sorted(sides) and cells[1] == "Grinch" and cells[4] == "1200" and f"--report checkpoints/{learner} " in cells[5]
    for opponent, side in sides.items():
        got = summary[opponent]
        assert got["games"] == 1200 and got["num_players"] == 2 and _side_of_parity(got["win_rate_ci"], 2) == side, (opponent, got)
        assert _cell(got["win_rate"], got["win_rate_ci"], 2) in (cells[2] if opponent == "greedy" else cells[3])
        assert f"{got['win_rate']:.3f}" in (run_dir / "report" / f"vs_{opponent}.txt").read_text()


# The Grinch's afterstate learner from random play (training.learner.afterstate_run), shipped at the end of its run:
# run -> (fitted generations (a distill stage's included), the configs/ file that made it, its table size (a tuple: the sizes of a run over several)
# and final games, each entry of its final report (``<opponent>``, or ``<opponent>@<n>p`` over several sizes) and where
# its interval lies against parity).
AFTERSTATE = {
    "learner_grinch_afterstate_value": (4, "learner_grinch_afterstate_value", 2, 1200, {"greedy": "above", "expectimax": "parity"}),
    "learner_grinch_afterstate_value_4p": (3, "learner_grinch_afterstate_value_4p", 4, 600, {"greedy": "above", "expectimax": "parity"}),
    "learner_grinch_afterstate_deny": (4, "learner_grinch_afterstate_deny", 2, 2400, {"greedy": "above", "expectimax": "parity"}),
    "learner_grinch_afterstate_deny_4p": (6, "learner_grinch_afterstate_deny_4p", 4, 1200, {"greedy": "above", "expectimax": "above"}),
    # six generations and the distill stage's seventh, reported as the network alone (final_play: value)
    "learner_grinch_afterstate_distilled": (7, "learner_grinch_afterstate_distilled", 2, 2400, {"greedy": "above", "expectimax": "parity"}),
    "learner_grinch_afterstate_tables": (4, "learner_grinch_afterstate_tables", (2, 3, 4, 5, 6), 1200,
                                         {f"greedy@{n}p": "above" for n in (2, 3, 4, 5, 6)}),
}

# Gnoming's afterstate values from random play (afterstate_run with game: gnoming), checked by the same test as the Grinch's.
GNOMING_AFTERSTATE = {
    "learner_gnoming_afterstate": (3, "learner_gnoming_afterstate", 5, 1200, {"search": "above"}),
}



@pytest.mark.parametrize("learner", sorted(AFTERSTATE) + sorted(GNOMING_AFTERSTATE))
def test_the_shipped_afterstate_learner_loads_plays_and_the_readme_quotes_its_report(learner):
    import torch

    from training.learner.afterstate import AfterstateAgent
    from training.learner.afterstate_run import AfterstateConfig
    from training.learner.afterstate_run import load_config as load_afterstate_config
    from training.learner.formats import AFTERSTATE_FORMAT
    from training.learner.gnoming_afterstate import GnomingAfterstateAgent

    game, title, agent_class = ("grinch", "Grinch", AfterstateAgent) if learner in AFTERSTATE else ("gnoming", "Gnoming", GnomingAfterstateAgent)
    generations, config, sizes, games, sides = {**AFTERSTATE, **GNOMING_AFTERSTATE}[learner]
    sizes = sizes if isinstance(sizes, tuple) else (sizes,)
    run_dir = ROOT / "checkpoints" / learner
    ckpt = torch.load(run_dir / "latest.pt", map_location="cpu", weights_only=True)
    made_by = load_afterstate_config(ROOT / "configs" / f"{config}.yaml")
    play = made_by.final_play  # the report's agent: the Grinch's look-ahead, or the network alone (value); Gnoming's value
    assert (ckpt["format"], len(ckpt["values"]), made_by.stages, made_by.game) == (AFTERSTATE_FORMAT, generations, generations, game)
    assert made_by.num_players == (list(sizes) if len(sizes) > 1 else sizes[0])
    stored = AfterstateConfig.model_validate(yaml.safe_load((run_dir / "config.yaml").read_text()))
    assert stored == AfterstateConfig.model_validate(ckpt["afterstate_config"])
    # torch_threads: the threads torch sums with, which a resume may change (the distilled run's stage ran with 2: the
    # config's comment); every other key is the config file's
    assert stored.model_dump(exclude={"torch_threads"}) == made_by.model_dump(exclude={"torch_threads"})
    assert isinstance(load_agent(run_dir), agent_class)
    for n in sorted({min(sizes), max(sizes)}):  # one set of values for every size it trained on
        result = evaluate([str(run_dir)] + ["random"] * (n - 1), num_players=n, num_games=1, seed=0, game=game)
        assert result.agents[0] == learner and result.num_games == 1
    summary = json.loads((run_dir / "report" / "summary.json").read_text())
    cells = _readme_rows()[learner]
    assert sorted(summary) == sorted(sides) and cells[1] == title and cells[4] == str(games) and f"--report checkpoints/{learner} " in cells[5]
    for key, side in sides.items():
        got, opponent = summary[key], key.split("@")[0]
        n = got["num_players"]
        assert key == (f"{opponent}@{n}p" if len(sizes) > 1 else opponent) and n in sizes
        assert (got["games"], got["play"], got["generation"]) == (games, play, generations - 1)
        assert _side_of_parity(got["win_rate_ci"], n) == side, (key, got)
        assert _cell(got["win_rate"], got["win_rate_ci"], n) in (cells[2] if opponent == "greedy" else cells[3])
        report = f"vs_{opponent}_{n}p.txt" if len(sizes) > 1 else f"vs_{opponent}.txt"
        assert f"{got['win_rate']:.3f}" in (run_dir / "report" / report).read_text()


# Learned agents measured in blocks that pool (python -m grinch_env.evaluation.pool): the network with search, and a
# network alone measured over more deals than its run's report: agent -> its game and, per table size, the block files
# under docs/results/, the baseline it played and where the pooled interval lies against parity.
NET_SEARCH = {
    "learner_gnoming_league_373min:search=1,samples=8,top_k=3,horizon=round": ("Gnoming", (
        (3, ("learner_netsearch/gnoming_3p_seed4242.json", "learner_netsearch/gnoming_3p_blocks_16core.jsonl",
             "learner_netsearch/gnoming_3p_blocks_2core.jsonl"), "search", "above"),
        (5, ("learner_netsearch/gnoming_5p_blocks_2core.jsonl",), "search", "above"),
    )),
    "learner_grinch_cards:search=1,samples=8,top_k=3,horizon=round": ("Grinch", (
        (2, ("learner_netsearch/grinch_2p_seed4242.json",), "greedy", "above"),
    )),
    "learner_grinch_afterstate_deny_4p:play=value": ("Grinch", (
        (4, ("learner_pooled/grinch_4p_deny_4p_value.jsonl",), "expectimax", "above"),
    )),
    # the shipped run's own agent (its default play, the look-ahead) on 9,600 fresh deals; the harness names an agent
    # given by its run directory alone after the run
    "learner_grinch_afterstate_deny:play=lookahead": ("Grinch", (
        (2, ("learner_pooled/grinch_2p_deny_seed9600.json",), "expectimax", "above", "learner_grinch_afterstate_deny"),
    )),
    # that run trained on to 6 generations, then its look-ahead distilled into V: the network alone, on 9,600 fresh deals
    "learner_grinch_afterstate_distilled:play=value": ("Grinch", (
        (2, ("learner_pooled/grinch_2p_distilled_value_seed9700.json",), "expectimax", "above"),
    )),
}


@pytest.mark.parametrize("agent,n", [(agent, size[0]) for agent, (_, sizes) in sorted(NET_SEARCH.items()) for size in sizes])
def test_the_readme_quotes_the_pooled_blocks_of_learned_agents(agent, n):
    from grinch_env.evaluation.pool import pool, read_blocks

    game, sizes = NET_SEARCH[agent]
    files, opponent, side, *named = next(rest for size, *rest in sizes if size == n)
    name = named[0] if named else f"checkpoints/{agent}"
    folder = ROOT / "docs" / "results"
    blocks = [b for f in files for b in read_blocks(folder / f)]
    assert {b["num_players"] for b in blocks} == {n} and all(b["balanced"] for b in blocks)
    assert len({b["seed"] for b in blocks}) == len(blocks)  # no deal counted twice
    pooled = pool(blocks)
    others = set(pooled) - {name}  # the learned agent against copies of one baseline ("search", "search#2")
    assert len(others) == n - 1 and all(o.split("#")[0] == opponent for o in others)
    got = pooled[name]
    assert got["games"] >= 1200 and _side_of_parity(got["win_rate_ci"], n) == side
    cells = _readme_rows()[agent]
    column = cells[2] if opponent == "greedy" else cells[3]
    assert cells[1] == game and _cell(got["win_rate"], got["win_rate_ci"], n) in column and f"{got['games']} ({n}p)" in cells[4]
    assert "python -m grinch_env.evaluation.pool " + " ".join(f"docs/results/{f}" for f in files) in cells[5]


# The long runs' committed resume points (each trained in pieces): run -> the configs/ file that made it.
# (The league branch, learner_gnoming_league, spent its budget and is a finished run in LEARNERS above.)
RESUME_POINTS = {"learner_gnoming_long": "learner_gnoming_long", "learner_grinch_long": "learner_grinch_long"}


@pytest.mark.parametrize("run", sorted(RESUME_POINTS))
def test_each_long_runs_resume_point_loads_under_its_config_with_budget_left(run):
    from training.learner.config import load_config as load_learner_config
    from training.learner.run import Trainer

    trainer = Trainer.load(ROOT / "checkpoints" / run)
    assert trainer.cfg == load_learner_config(ROOT / "configs" / f"{RESUME_POINTS[run]}.yaml", [])
    assert trainer.cfg.run_name == run and 0 < trainer.train_seconds < trainer.cfg.max_seconds and trainer.iteration > 0
    assert trainer.curve and trainer.curve[-1]["iteration"] <= trainer.iteration

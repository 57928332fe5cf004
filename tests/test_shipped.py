"""The shipped champions (checkpoints/champion_*): each is the run its config in configs/ trains, its config.yaml is the
one its checkpoint holds, and its report holds the figures the README quotes."""

import json
from pathlib import Path

import pytest
import yaml

from training.config import load_config, validate
from training.train import stored

ROOT = Path(__file__).resolve().parents[1]
CHAMPIONS = {"grinch": ROOT / "checkpoints" / "champion_grinch", "gnoming": ROOT / "checkpoints" / "champion_gnoming"}
# what decides the fitted values (the keys a resume may not change, and the budget)
WEIGHT_KEYS = ("game", "num_players", "seed", "generations", "games_per_generation", "replay_generations", "temperature", "play_draws",
               "draw_samples", "value", "later", "deny", "deny_weight", "deny_fit", "distill")


def test_only_the_champions_are_shipped():
    assert sorted(p.name for p in (ROOT / "checkpoints").iterdir() if p.is_dir()) == ["champion_gnoming", "champion_grinch"]


@pytest.mark.parametrize("game", sorted(CHAMPIONS))
def test_each_champion_is_the_run_of_its_config(game):
    run = CHAMPIONS[game]
    data, algo, _ = stored(run)
    assert algo == "afterstate"
    saved = validate(data).runner()
    config = load_config(ROOT / "configs" / f"champion_{game}.yaml").runner()
    assert {k: getattr(saved, k) for k in WEIGHT_KEYS} == {k: getattr(config, k) for k in WEIGHT_KEYS}
    # config.yaml beside it is the stored config, in the trainer's schema
    assert validate(yaml.safe_load((run / "config.yaml").read_text())).runner() == saved
    assert saved.run_name == run.name and len(saved.table_sizes) == len(set(saved.table_sizes))


@pytest.mark.parametrize("game", sorted(CHAMPIONS))
def test_the_readme_champions_table_quotes_each_report_entry(game):
    summary = json.loads((CHAMPIONS[game] / "report" / "summary.json").read_text())
    readme = (ROOT / "README.md").read_text()
    title = {"grinch": "Grinch", "gnoming": "Gnoming"}[game]
    for key, entry in summary.items():
        n = entry["num_players"]
        rows = [line for line in readme.splitlines() if line.startswith(f"| {title} | {n} |")]
        assert len(rows) == 1, f"README.md has {len(rows)} champions rows for {title} at {n} players"
        lo, hi = entry["win_rate_ci"]
        figure = f"{entry['win_rate']:.3f} [{lo:.3f}, {hi:.3f}]"
        opponent = key.split("@")[0]
        assert (figure in rows[0] if opponent == "greedy" else f"{opponent} {figure}" in rows[0]), (key, figure, rows[0])
        assert f"| {entry['games']:,} |" in rows[0] and f"| {1 / n:.3f} |" in rows[0] and entry["games"] >= 1200

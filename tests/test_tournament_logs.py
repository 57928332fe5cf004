"""Tournament game logs (``evaluate(..., log_dir=)``, ``--log-dir``): file names, index, replay to the recorded totals, unchanged results."""

import json

import pytest

from grinch_env.aec import log_from_json, replay_log
from grinch_env.evaluation.evaluate import evaluate, main
from grinch_env.evaluation.logs import list_logs, log_file_name
from grinch_env.games import get_game
from grinch_env.grinch.scoring import STANDARD_LAYOUT


def replay_file(path):
    """Return the engine's game after replaying a written log with the library's replay_log."""
    text = path.read_text()
    seed, log, kwargs = log_from_json(text)
    data = json.loads(text)
    return replay_log(get_game(data["game"]).raw_env, seed, log, game_seed=data["game_seed"], **kwargs)


def test_grinch_logs_replay_to_the_tournaments_totals_and_name_index_lineup_and_seed(tmp_path):
    result = evaluate(["greedy", "random"], 3, 4, seed=2, bonus_layout="none", log_dir=tmp_path / "logs")
    # 2 agents at 3 seats: block 0 = ABA rotated -> ABA, BAA, AAB; block 1 = BAB -> BAB, ... ; all 4 games share cycle 0's deal.
    files = ["game_0000_greedy-random-greedy_seed2000000.json", "game_0001_random-greedy-greedy_seed2000000.json",
             "game_0002_greedy-greedy-random_seed2000000.json", "game_0003_random-greedy-random_seed2000000.json"]
    assert sorted(p.name for p in (tmp_path / "logs").iterdir()) == [*files, "index.json"]
    index = json.loads((tmp_path / "logs" / "index.json").read_text())
    assert {k: index[k] for k in ("game", "num_players", "num_games", "seed", "agents", "game_options")} == {
        "game": "grinch", "num_players": 3, "num_games": 4, "seed": 2, "agents": ["greedy", "random"], "game_options": {"bonus_layout": "none"}}
    assert [g["file"] for g in index["games"]] == files
    assert [g["lineup"] for g in index["games"]] == [[0, 1, 0], [1, 0, 0], [0, 0, 1], [1, 0, 1]]
    for i, name in enumerate(files):
        record = result.games[i]
        data = json.loads((tmp_path / "logs" / name).read_text())
        assert data["seed"] is None and data["game_seed"] == record["deal"] == 2_000_000
        assert data["env_kwargs"] == {"num_players": 3, "bonus_layout": "none"} and data["game"] == "grinch"
        assert data["names"] == [result.agents[a] for a in record["lineup"]] == index["games"][i]["names"]
        assert data["tournament"] == {"seed": 2, "index": i, "lineup": record["lineup"], "totals": record["totals"], "winners": record["winners"]}
        env = replay_file(tmp_path / "logs" / name)
        assert env.game.done and env.game.totals == record["totals"] == index["games"][i]["totals"]
        assert env.game.winners() == record["winners"]
        assert len(data["log"]) == 6 * (2 * 4 + 10)  # the rules: 6 rounds at 3 players: per round 2 Whos x 4 decisions + the Grinch's 10


def test_gnoming_logs_from_worker_processes_replay_and_results_do_not_change(tmp_path):
    args = (["greedy", "random", "greedy"], 3, 4)
    kwargs = {"seed": 1, "game": "gnoming", "game_options": {"max_turns_per_player": 12}}
    plain = evaluate(*args, **kwargs)
    logged = evaluate(*args, **kwargs, processes=2, log_dir=tmp_path)
    assert logged.to_dict() == plain.to_dict() and logged.games == plain.games  # the records hold no actions
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "game_0000_greedy-random-greedy_2_seed1000000.json", "game_0001_random-greedy_2-greedy_seed1000000.json",
        "game_0002_greedy_2-greedy-random_seed1000000.json", "game_0003_greedy-random-greedy_2_seed1000001.json", "index.json"]
    index = json.loads((tmp_path / "index.json").read_text())
    assert index["agents"] == ["greedy", "random", "greedy#2"] and index["game_options"] == {"max_turns_per_player": 12}
    for entry, record in zip(index["games"], plain.games, strict=True):
        data = json.loads((tmp_path / entry["file"]).read_text())
        assert data["env_kwargs"] == {"num_players": 3, "max_turns_per_player": 12} and data["game_seed"] == record["deal"]
        assert data["names"] == [["greedy", "random", "greedy#2"][a] for a in record["lineup"]]
        env = replay_file(tmp_path / entry["file"])
        assert env.game.done and env.game.totals == record["totals"] and env.game.winners() == record["winners"]


def test_cli_writes_the_logs_and_says_where(tmp_path, capsys):
    out = tmp_path / "new" / "logs"  # created, parents too
    assert main(["--agents", "greedy,expectimax:samples=2", "--players", "2", "--games", "2", "--seed", "3", "--no-progress",
                 "--log-dir", str(out)]) == 0
    assert capsys.readouterr().out.endswith(f"\nwrote 2 game logs and index.json to {out}\n")
    assert sorted(p.name for p in out.iterdir()) == ["game_0000_greedy-expectimax_samples=2_seed3000000.json",
                                                     "game_0001_expectimax_samples=2-greedy_seed3000000.json", "index.json"]
    plain = evaluate(["greedy", "expectimax:samples=2"], 2, 2, seed=3)
    for i, path in enumerate(sorted(out.glob("game_*.json"))):
        assert replay_file(path).game.totals == plain.games[i]["totals"]
    assert list_logs(out) == [
        {"path": str(out / "game_0000_greedy-expectimax_samples=2_seed3000000.json"), "game": "grinch",
         "label": f"game 0: greedy, expectimax:samples=2 (totals {', '.join(map(str, plain.games[0]['totals']))})"},
        {"path": str(out / "game_0001_expectimax_samples=2-greedy_seed3000000.json"), "game": "grinch",
         "label": f"game 1: expectimax:samples=2, greedy (totals {', '.join(map(str, plain.games[1]['totals']))})"}]


def test_file_names_pad_the_index_and_keep_only_safe_characters():
    assert log_file_name(7, 12000, ["run/best.pt", "greedy#2", "search:playouts=8"], 5) == "game_00007_run_best.pt-greedy_2-search_playouts=8_seed5.json"
    assert log_file_name(0, 1, ["a" * 30], 0) == f"game_0000_{'a' * 24}_seed0.json"


def test_a_log_dir_that_is_a_file_or_custom_options_are_refused(tmp_path, capsys):
    afile = tmp_path / "taken"
    afile.write_text("")
    with pytest.raises(ValueError, match=r"log_dir '.*taken' is a file, not a directory: give a directory for the game logs"):
        evaluate(["greedy"], 2, 1, log_dir=afile)
    with pytest.raises(SystemExit):
        main(["--agents", "greedy", "--players", "2", "--games", "1", "--log-dir", str(afile)])
    assert "is a file, not a directory" in capsys.readouterr().err
    resolved = {"bonus_layout": STANDARD_LAYOUT}  # a tuple of Bonus entries: JSON makes it a list, which the env refuses
    with pytest.raises(ValueError, match=r"game logs need game options that JSON can hold and the env accepts \(give a bonus_layout by name or as a "
                                         r"table \{card_id: \(points, suit, count\)\}\): bonus_layout must be 'standard', 'none' or a mapping"):
        evaluate(["greedy"], 2, 1, game_options=resolved, log_dir=tmp_path / "x")
    assert not (tmp_path / "x").exists()


def test_a_custom_bonus_table_survives_the_log(tmp_path):
    options = {"bonus_layout": {0: (30, "Wreaths", 1), 5: (20, 1, 2)}}  # JSON turns the keys into "0", "5" and the entries into lists
    result = evaluate(["greedy", "random"], 2, 2, seed=4, game_options=options, log_dir=tmp_path)
    for entry, record in zip(json.loads((tmp_path / "index.json").read_text())["games"], result.games, strict=True):
        data = json.loads((tmp_path / entry["file"]).read_text())
        assert data["env_kwargs"] == {"num_players": 2, "bonus_layout": {"0": [30, "Wreaths", 1], "5": [20, 1, 2]}}
        assert replay_file(tmp_path / entry["file"]).game.totals == record["totals"]


def test_list_logs_without_an_index_lists_the_json_files(tmp_path):
    (tmp_path / "b.json").write_text("{}")
    (tmp_path / "a.json").write_text("{}")
    (tmp_path / "notes.txt").write_text("")
    assert list_logs(tmp_path) == [{"path": str(tmp_path / "a.json"), "game": None, "label": "a.json"},
                                   {"path": str(tmp_path / "b.json"), "game": None, "label": "b.json"}]

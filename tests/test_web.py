"""The web server's JSON API (Flask's test client) and its sessions: play, watch, replay, errors, and what a human seat may see."""

import io
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import grinch_env.web.session as web_session
from grinch_env.aec import log_to_json, replay_log
from grinch_env.games import get_game
from grinch_env.web import Session, create_app
from grinch_env.web._imports import card_name  # the one place the web package imports from


def replayed(log):
    """Return the engine's game after a downloaded log, replayed by the library (not by the page)."""
    return replay_log(get_game(log["game"]).raw_env, log["seed"], [tuple(e) for e in log["log"]], **log["env_kwargs"]).game


@pytest.fixture()
def client(tmp_path):
    run = tmp_path / "ckpt" / "gnoming_run"
    run.mkdir(parents=True)
    (run / "best.pt").write_bytes(b"")
    (run / "config.yaml").write_text("game: gnoming\nseed: 1\n")
    (tmp_path / "ckpt" / "grinch_run").mkdir()
    (tmp_path / "ckpt" / "grinch_run" / "best.pt").write_bytes(b"")
    return create_app(tmp_path / "ckpt").test_client()


def post(client, url, data, status=200):
    res = client.post(url, json=data)
    assert res.status_code == status, res.get_json()
    return res.get_json()


def test_games_lists_both_games_their_agents_and_the_checkpoints_found(client, tmp_path):
    data = client.get("/api/games").get_json()
    assert data["default"] == "grinch"
    for game in ("grinch", "gnoming"):
        assert data["games"][game]["agents"] == sorted(get_game(game).agent_classes())
        assert {"random", "greedy", "search"} <= set(data["games"][game]["agents"])
    assert (data["games"]["grinch"]["min_players"], data["games"]["grinch"]["max_players"]) == (2, 6)
    assert (data["games"]["gnoming"]["min_players"], data["games"]["gnoming"]["max_players"]) == (3, 7)
    assert data["games"]["gnoming"]["highest_total_wins"] is False
    assert data["checkpoints"] == [{"path": str(tmp_path / "ckpt" / "gnoming_run"), "game": "gnoming"},
                                   {"path": str(tmp_path / "ckpt" / "grinch_run"), "game": "grinch"}]


def test_page_and_its_script_are_served(client):
    page = client.get("/")
    assert page.status_code == 200 and b'id="play-start"' in page.data
    assert client.get("/static/app.js").status_code == 200


def _play_to_the_end(client, view):
    """Click the first legal move each turn; return the final view and the number of human moves."""
    moves = 0
    while not view["done"]:
        assert view["to_act"] == view["human"] and view["legal"], view["banner"]
        view = post(client, f"/api/s/{view['id']}/step", {"action": view["legal"][0]["action"]})
        moves += 1
    return view, moves


def test_play_grinch_two_players_one_round_to_the_final_scores(client):
    view = post(client, "/api/play", {"game": "grinch", "players": 2, "seat": 0, "opponents": "random", "seed": 11, "options": "num_rounds=1"})
    assert view["banner"] == "Your turn: draw a card (1 of 2)"  # seat 0 is the first Grinch; the Who (seat 1) has discarded
    assert view["history"][0].startswith("seat 1 (random) discards ")
    assert [m["label"].split(" ")[0] for m in view["legal"]] == ["draw"] * len(view["legal"])
    final, moves = _play_to_the_end(client, view)
    assert moves == 10  # the Grinch's round: 3 turns of 2 draws and a discard, then one score
    log = json.loads(client.get(f"/api/s/{view['id']}/log").data)
    assert log["game"] == "grinch" and len(log["log"]) == 14  # plus the Who's 3 discards and 1 score
    again = replayed(log)
    assert final["totals"] == again.totals and final["winners"] == again.winners()
    assert final["history"][-1] == f"round 1 over: seat 0 {final['totals'][0]:+d}, seat 1 {final['totals'][1]:+d}; totals {final['totals'][0]}, {final['totals'][1]}"
    won = "You win!" if final["winners"] == [0] else "You share the win!" if 0 in final["winners"] else "Game over. Winner: seat 1 (random)"
    assert final["banner"] == won + " (highest total wins)"


def test_play_gnoming_from_seat_one_to_the_final_scores(client):
    view = post(client, "/api/play", {"game": "gnoming", "players": 3, "seat": 1, "opponents": "greedy,random", "seed": 4,
                                      "options": "max_turns_per_player=10"})
    assert view["names"] == ["random", "you", "greedy"]  # opponents from the human's left
    assert view["banner"] == "Your turn: turn up one of your cards"
    final, moves = _play_to_the_end(client, view)
    log = json.loads(client.get(f"/api/s/{view['id']}/log").data)
    assert sum(1 for agent, _ in log["log"] if agent == "player_1") == moves
    again = replayed(log)
    assert again.done and final["totals"] == again.totals
    assert final["winners"] == [s for s in range(3) if again.totals[s] == min(again.totals)]
    assert final["banner"].endswith("(lowest total wins)") and final["legal"] == []


def test_watch_steps_one_action_at_a_time_and_matches_the_engine(client):
    view = post(client, "/api/watch", {"game": "grinch", "players": 3, "agents": "greedy,random", "seed": 2, "options": "num_rounds=1"})
    assert view["names"] == ["greedy", "random", "greedy"] and view["viewer"] is None and view["moves"] == 0
    assert view["banner"] == "Seat 1 (random) to act"  # the first Who sits left of the Grinch (seat 0)
    while not view["done"]:
        before = view["moves"]
        view = post(client, f"/api/s/{view['id']}/step", {})
        assert view["moves"] == before + 1
    assert view["moves"] == 18  # 1 round at 3 players: 2 Whos x 4 decisions + the Grinch's 10
    log = json.loads(client.get(f"/api/s/{view['id']}/log").data)
    assert view["totals"] == replayed(log).totals
    assert post(client, f"/api/s/{view['id']}/step", {}, 400)["error"] == "the game is over: start a new one"


def _random_log(game, num_players, seed, **kwargs):
    env = get_game(game).raw_env(num_players=num_players, **kwargs)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    while not env.game.done:
        env.step(int(rng.choice(env.game.legal_actions())))
    return env, log_to_json(env.action_log, seed=seed, num_players=num_players, **kwargs)


@pytest.mark.parametrize("game,players,kwargs", [("grinch", 2, {"num_rounds": 2}), ("gnoming", 4, {})])
def test_replay_of_a_written_log_moves_forward_back_and_to_the_end(client, game, players, kwargs):
    env, text = _random_log(game, players, 5, **kwargs)
    view = post(client, "/api/replay", {"log": text, "game": game})  # log_to_json's logs do not name their game
    assert (view["mode"], view["moves"], view["length"], view["game"]) == ("replay", 0, len(env.action_log), game)
    key = view["id"]
    view = post(client, f"/api/s/{key}/step", {})
    assert view["moves"] == 1 and len([h for h in view["history"] if not h.startswith("seat")]) == 0
    middle = post(client, f"/api/s/{key}/seek", {"position": 7})
    again = post(client, f"/api/s/{key}/seek", {"position": 3})
    assert again["moves"] == 3
    assert post(client, f"/api/s/{key}/seek", {"position": 7}) == middle
    end = post(client, f"/api/s/{key}/seek", {"position": view["length"]})
    assert end["done"] and end["totals"] == env.game.totals and end["winners"] == env.game.winners()
    assert end["text"] == env.game.render()  # a replay shows the spectator's table


def test_replay_from_a_path_and_from_a_downloaded_log_with_its_game(client, tmp_path):
    env, text = _random_log("gnoming", 3, 9)
    path = tmp_path / "game.json"
    path.write_text(text)
    view = post(client, "/api/replay", {"path": str(path), "game": "gnoming"})
    assert view["length"] == len(env.action_log)
    played = post(client, "/api/watch", {"game": "gnoming", "players": 3, "agents": "random", "seed": 1})
    for _ in range(5):
        played = post(client, f"/api/s/{played['id']}/step", {})
    downloaded = client.get(f"/api/s/{played['id']}/log").data.decode()
    view = post(client, "/api/replay", {"log": downloaded})  # names its game: the form's game is not needed
    view = post(client, f"/api/s/{view['id']}/seek", {"position": 5})
    assert view["game"] == "gnoming" and view["names"] == ["random"] * 3 and view["text"] == played["text"]


@pytest.mark.parametrize("url,data,message", [
    ("/api/watch", {"game": "grinch", "players": 3, "agents": "greedy,nosuch"}, "unknown agent 'nosuch' for Grinch Grow Your Heart"),
    ("/api/watch", {"game": "grinch", "players": 3, "agents": ""}, "give at least one agent for the table"),
    ("/api/watch", {"game": "chess", "players": 3, "agents": "random"}, "unknown game 'chess': choose one of gnoming, grinch"),
    ("/api/watch", {"game": "gnoming", "players": 9, "agents": "random"}, "players must be an integer in 3..7, got 9"),
    ("/api/watch", {"game": "grinch", "players": 2, "agents": "random", "options": "num_rounds=9"}, "num_rounds must be an int in 1..6"),
    ("/api/watch", {"game": "grinch", "players": 2, "agents": "random", "options": "rounds=2"}, "bad game option for Grinch Grow Your Heart"),
    ("/api/watch", {"game": "grinch", "players": 2, "agents": "random", "options": "num_rounds"}, "game option 'num_rounds' must be written key=value"),
    ("/api/watch", {"game": "grinch", "players": 2, "agents": "random", "seed": "abc"}, "seed must be an integer >= 0, got 'abc'"),
    ("/api/play", {"game": "grinch", "players": 2, "seat": 2, "opponents": "random"}, "seat must be an integer in 0..1, got 2"),
    ("/api/play", {"game": "grinch", "players": 2, "opponents": "random,greedy"}, "2 opponents given but a 2-player table has 1 other seats"),
    ("/api/play", {"game": "gnoming", "players": 3, "opponents": "checkpoints/missing_run"}, "no checkpoint at checkpoints/missing_run: it does not exist"),
    ("/api/replay", {"log": "{not json"}, "the log is not JSON"),
    ("/api/replay", {"log": "[1, 2]"}, 'the log must be a JSON object with a "log" list'),
    ("/api/replay", {"log": '{"seed": 1, "env_kwargs": {"num_players": 2}, "log": [["player_0", 1.5]]}'}, "log entry 0 must be a pair [agent, action]"),
    ("/api/replay", {"log": '{"env_kwargs": {"num_players": 2}, "log": []}'}, "the log has neither a seed nor a game_seed"),
    ("/api/replay", {"log": '{"seed": 1, "env_kwargs": {"num_players": 8}, "log": []}'}, "the log's env_kwargs do not make a Grinch Grow Your Heart table"),
    ("/api/replay", {"log": '{"seed": 1, "game": "go", "log": []}'}, "the log's game: unknown game 'go'"),
    ("/api/replay", {"path": "/nonexistent/game.json"}, "cannot read the log file '/nonexistent/game.json'"),
    ("/api/replay", {}, "choose a game log file (JSON) or give its path"),
])
def test_bad_input_gets_a_clear_error(client, url, data, message):
    assert message in post(client, url, data, 400)["error"]


def test_a_log_that_breaks_the_rules_names_the_entry(client):
    env, text = _random_log("grinch", 2, 3, num_rounds=1)
    data = json.loads(text)
    data["log"][2][1] = 61  # scoring a row in the middle of a turn
    error = post(client, "/api/replay", {"log": json.dumps(data)}, 400)["error"]
    assert error.startswith(f"log entry 2 ({data['log'][2][0]}, 61): action 61 is not legal here; legal actions: ")
    data["log"][2][0] = "player_7"
    assert "log entry 2 (player_7, 61): " in post(client, "/api/replay", {"log": json.dumps(data)}, 400)["error"]


def test_a_human_may_click_only_a_legal_action_on_its_own_turn(client):
    view = post(client, "/api/play", {"game": "grinch", "players": 2, "seat": 0, "opponents": "random", "seed": 11})
    legal = [m["action"] for m in view["legal"]]
    assert post(client, f"/api/s/{view['id']}/step", {"action": 0}, 400)["error"] == f"action 0 is not legal now; legal actions: {legal}"
    assert "is not legal now" in post(client, f"/api/s/{view['id']}/step", {"action": True}, 400)["error"]
    assert post(client, f"/api/s/{view['id']}/seek", {"position": 0}, 400)["error"] == "only a replay can move to a position"
    early = client.get(f"/api/s/{view['id']}/log")  # its seed would show the hidden cards
    assert early.status_code == 400 and early.get_json()["error"].startswith("the log of a game you play is ready when the game is over")
    assert client.get("/api/s/nope").status_code == 404


def test_a_human_seat_sees_only_what_it_may_see():
    """Two games that differ only in cards hidden from the human give the same view; other seats' views are refused."""
    session = Session.play("grinch", 4, 2, "random", seed=8, options="num_rounds=2")
    for _ in range(6):
        session.step(session.view()["legal"][-1]["action"])  # take other seats' discards too, so some of their cards are known
    seat, game = 2, session.game
    view = session.view()
    assert view["viewer"] == seat and session.view(seat=0)["viewer"] == seat  # ?seat= is ignored in a played game
    assert view["hand"] == [card_name(c) for c in sorted(game.hands[seat])]
    other = game.resample_from_infostate(seat, np.random.default_rng(1))
    hidden = [c for p in range(4) if p != seat for c in game.hands[p] if c not in game.known[p]]
    assert hidden and any(sorted(other.hands[p]) != sorted(game.hands[p]) for p in range(4) if p != seat)
    session.env._game = other
    assert session.view() == view
    assert view["text"] == game.render(seat=seat) and "??" in view["text"]


def test_a_spectator_sees_every_hand_and_may_take_a_seat_view():
    session = Session.watch("grinch", 3, "random", seed=1)
    game = session.game
    assert session.view()["text"] == game.render() and "??" not in game.render()
    assert session.view(seat=1)["text"] == game.render(seat=1) and session.view(seat=1)["hand"] == [card_name(c) for c in sorted(game.hands[1])]
    with pytest.raises(ValueError, match="view seat must be an integer in 0..2, got 3"):
        session.view(seat=3)


def test_the_table_picture_is_the_games_draw_table_for_the_viewer(client, monkeypatch):
    seen = []

    def draw_table(game, seat=None, last_action=None):
        seen.append((seat, last_action))
        image = np.zeros((20, 30, 3), np.uint8)
        image[:, :, 0] = 200
        return image

    monkeypatch.setattr(web_session, "draw_table", lambda spec: draw_table)
    view = post(client, "/api/play", {"game": "grinch", "players": 2, "seat": 0, "opponents": "random", "seed": 3})
    assert view["image"] is True
    res = client.get(f"/api/s/{view['id']}/table.png?seat=1")
    assert res.status_code == 200 and res.mimetype == "image/png"
    image = np.asarray(Image.open(io.BytesIO(res.data)))
    assert image.shape == (20, 30, 3) and (image[:, :, 0] == 200).all()
    assert seen == [(0, view["history"][-1])] and view["history"][-1].startswith("seat 1 (random) discards ")  # the human's seat, whatever ?seat= says, and the last public move

    monkeypatch.setattr(web_session, "draw_table", lambda spec: None)  # a game without a render module: the text table
    view = post(client, "/api/watch", {"game": "gnoming", "players": 3, "agents": "random", "seed": 3})
    assert view["image"] is False and view["text"].startswith("Round 1/3")
    assert "has no picture of the table" in client.get(f"/api/s/{view['id']}/table.png").get_json()["error"]


def test_watch_a_shipped_checkpoint_against_built_ins_and_refuse_one_of_the_other_game(client):
    import torch

    run = str(Path(__file__).resolve().parents[1] / "checkpoints" / "champion_gnoming")
    last = len(torch.load(Path(run) / "latest.pt", weights_only=False)["values"]) - 1  # the agent plays the last fitted generation
    view = post(client, "/api/watch", {"game": "gnoming", "players": 5, "agents": f"{run},greedy", "seed": 5})
    assert view["names"][0] == view["names"][2] == view["names"][4] == f"champion_gnoming/g{last}" and view["names"][1] == "greedy"
    for n in range(1, 6):
        view = post(client, f"/api/s/{view['id']}/step", {})
        assert view["moves"] == n
    error = post(client, "/api/play", {"game": "grinch", "players": 2, "opponents": run}, 400)["error"]
    assert error == f"checkpoint {run!r} plays Gnoming A Round (game 'gnoming'), not Grinch Grow Your Heart (game 'grinch')"


def test_the_page_marks_what_happened_since_the_human_clicked(client):
    view = post(client, "/api/play", {"game": "grinch", "players": 3, "seat": 1, "opponents": "random", "seed": 2, "options": "num_rounds=1"})
    assert view["fresh"] == 1 and len(view["history"]) == 0  # seat 1 is the first Who: nobody has moved yet
    view = post(client, f"/api/s/{view['id']}/step", {"action": view["legal"][0]["action"]})
    # The human's discard, the next Who's (seat 2), then the Grinch's 3 moves and seat 1's two automatic draws ("you drew").
    assert view["fresh"] == 1 and [h.split(" ")[:3] for h in view["history"]][:2] == [["seat", "1", "(you)"], ["seat", "2", "(random)"]]
    before = len(view["history"])
    view = post(client, f"/api/s/{view['id']}/step", {"action": view["legal"][0]["action"]})
    assert view["fresh"] == before + 1 and view["history"][before].startswith("seat 1 (you) discards ")


def test_env_settings_are_not_game_options(client):
    error = post(client, "/api/watch", {"game": "grinch", "players": 2, "agents": "random", "options": "render_mode=human"}, 400)["error"]
    assert error == "render_mode is an env setting, not a game option: the page shows the game and its final scores"


def test_the_command_refuses_a_port_in_use_with_a_clear_message(capsys):
    import socket

    from grinch_env.web import main

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(SystemExit) as exit_info:
            main(["--port", str(port)])
    assert exit_info.value.code == 1  # Werkzeug's own message
    assert f"Port {port} is in use by another program. Either identify and stop that program, or start the server with a different port." in capsys.readouterr().err


@pytest.mark.parametrize("game,players,agents,options", [
    ("grinch", 3, ["greedy", "random"], {"num_rounds": 2}),
    ("gnoming", 4, ["greedy", "random"], {"max_turns_per_player": 10}),
])
def test_the_page_lists_and_replays_a_tournaments_logs_to_its_totals(tmp_path, game, players, agents, options):
    from grinch_env.evaluation.evaluate import evaluate

    result = evaluate(agents, players, 3, seed=8, game=game, game_options=options, log_dir=tmp_path / "logs")
    client = create_app(tmp_path / "none", log_dir=tmp_path / "logs").test_client()
    logs = client.get("/api/games").get_json()["logs"]
    assert [log["label"] for log in logs] == [
        f"game {i}: {', '.join(agents[a] for a in g['lineup'])} (totals {', '.join(map(str, g['totals']))})" for i, g in enumerate(result.games)]
    assert {log["game"] for log in logs} == {game}
    for log, record in zip(logs, result.games, strict=True):
        view = post(client, "/api/replay", {"path": log["path"]})  # the log names its game
        assert view["game"] == game and view["names"] == [agents[a] for a in record["lineup"]] and view["moves"] == 0
        end = post(client, f"/api/s/{view['id']}/seek", {"position": view["length"]})
        assert end["done"] and end["totals"] == record["totals"] and end["winners"] == record["winners"]


def test_without_a_log_dir_the_page_lists_no_logs_and_the_command_refuses_a_missing_one(client, tmp_path, capsys):
    from grinch_env.web import main

    assert client.get("/api/games").get_json()["logs"] == []
    with pytest.raises(SystemExit) as exit_info:
        main(["--log-dir", str(tmp_path / "missing")])
    assert exit_info.value.code == 2
    assert f"--log-dir must be an existing directory of game logs, got '{tmp_path / 'missing'}'" in capsys.readouterr().err

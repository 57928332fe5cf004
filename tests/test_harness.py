"""The one harness: the game interface, old import paths, one-way imports, checkpoint loaders."""

import importlib
import subprocess
import sys

import numpy as np
import pytest

import grinch_env
from grinch_env.agent_base import CHECKPOINT_LOADERS, register_checkpoint_loader
from grinch_env.agents import make_agent
from grinch_env.evaluation.tournament import play_game
from grinch_env.games import GAMES, get_game
from grinch_env.grinch.game import PHASE_DRAW, Game, Phase


def test_get_game_names_the_games():
    assert get_game("grinch") is GAMES["grinch"]
    assert get_game(GAMES["grinch"]) is GAMES["grinch"]
    with pytest.raises(ValueError, match="unknown game 'chess': choose one of gnoming, grinch"):
        get_game("chess")


def test_spec_facts_and_player_range():
    g = get_game("grinch")
    assert (g.min_players, g.max_players, g.num_actions, g.obs_size, g.highest_total_wins) == (2, 6, 62, 1337, True)
    n = get_game("gnoming")
    assert (n.min_players, n.max_players, n.num_actions, n.obs_size, n.highest_total_wins) == (3, 7, 15, 1046, False)
    with pytest.raises(ValueError, match=r"num_players for Grinch Grow Your Heart must be an int in 2\.\.6, got 7"):
        g.check_num_players(7)
    with pytest.raises(ValueError, match=r"num_players for Gnoming A Round must be an int in 3\.\.7, got 2"):
        n.check_num_players(2)


def test_grinch_through_the_interface_is_the_rules_game():
    spec = get_game("grinch")
    state = spec.new_game(3, 11)
    reference = Game(3, rng=11)
    assert state.state_dict() == reference.state_dict()
    view = spec.encoder().observe(state, state.current)
    assert view["observation"].shape == (1337,) and view["action_mask"].shape == (62,)


def test_recorder_keeps_role_row_and_points_of_every_round():
    spec = get_game("grinch")
    record = play_game([make_agent("greedy"), make_agent("random")], 2, deal=5, seeds=[1, 2])
    replay = Game(2, rng=5)
    agents = [make_agent("greedy"), make_agent("random")]
    for agent, s in zip(agents, [1, 2]):
        agent.reset(s)
    encoder = spec.encoder()
    while not replay.done:
        view = encoder.observe(replay, replay.current)
        replay.step(int(agents[replay.current].act(view["observation"], view["action_mask"])))
    assert record["totals"] == replay.totals
    assert len(record["rounds"]) == replay.num_rounds == 6
    for r, rnd in enumerate(record["rounds"]):
        grinch = r % 2  # the Grinch passes left each round from seat 0
        assert [e["role"] for e in rnd] == ["Grinch" if s == grinch else "Who" for s in range(2)]
    # every seat's rows are used once and its points add up to its total
    for seat in range(2):
        assert sum(rnd[seat]["points"] for rnd in record["rounds"]) == replay.totals[seat]
        used = [rnd[seat]["row"] for rnd in record["rounds"]]
        assert len(set(used)) == 6
        assert all(replay.score_sheet[seat][rnd[seat]["row"]] == rnd[seat]["points"] for rnd in record["rounds"])


def test_phase_is_one_enum_that_reads_as_its_string():
    assert PHASE_DRAW is Phase.DRAW
    assert Phase.DRAW == "draw" and f"{Phase.DRAW}" == "draw" and repr(Phase.DRAW) == "'draw'"
    assert {"draw": 1}[Phase.DRAW] == 1
    assert [p.code for p in Phase] == [0, 1, 2, 3]


def test_public_surface_and_version():
    from importlib.metadata import version

    assert grinch_env.__version__ == version("grinch_env")
    assert grinch_env.OBS_SIZE == 1337 and grinch_env.NUM_ACTIONS == 62
    assert grinch_env.VectorGrinch.__name__ == "VectorGrinch"
    assert grinch_env.make_agent("greedy").name == "greedy"
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        grinch_env.nope  # noqa: B018


def test_grinch_env_and_evaluation_import_neither_training_nor_torch():
    code = (
        "import sys, grinch_env, grinch_env.evaluation, grinch_env.agents\n"
        "from grinch_env.evaluation.evaluate import evaluate\n"
        "r = evaluate(['greedy', 'random'], num_players=2, num_games=2, seed=0)\n"
        "assert r.per_agent['greedy']['seat_games'] == 2\n"
        "bad = sorted(m for m in sys.modules if m == 'torch' or m.split('.')[0] == 'training')\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_checkpoint_loaders_registry_and_entry_point(tmp_path):
    from importlib.metadata import entry_points

    (ep,) = [e for e in entry_points(group="grinch_env.checkpoint_loaders") if e.name == "torch"]
    assert ep.value == "training.checkpoint:load_agent"
    importlib.import_module("training.checkpoint")
    from training.checkpoint import load_agent

    assert load_agent in CHECKPOINT_LOADERS
    register_checkpoint_loader(load_agent)  # registering twice keeps one entry
    assert CHECKPOINT_LOADERS.count(load_agent) == 1
    agent = make_agent("checkpoints/champion_grinch")
    assert agent.game == "grinch"
    with pytest.raises(ValueError, match="plays Grinch Grow Your Heart \\(game 'grinch'\\), not Gnoming A Round \\(game 'gnoming'\\)"):
        make_agent("checkpoints/champion_grinch", game="gnoming")
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match="cannot load checkpoint .*junk.pt.*not a readable torch checkpoint"):
        make_agent(str(junk))


def test_rewards_live_in_the_rules_layer():
    game = Game(2, rng=0)
    game.totals = [30, 10]
    assert game.rewards("win") == [1.0, -1.0]
    assert game.rewards("margin") == [0.2, -0.2]
    from grinch_env.grinch.game import terminal_rewards

    assert np.allclose(terminal_rewards([5, 5, 5], "win"), [0.0, 0.0, 0.0])

"""Pictures of the table: shapes, determinism, what a seat may see, PettingZoo's render_test, the pygame window, videos."""

import hashlib
import os
import re
import warnings

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")  # the "human" window on a machine without a display

import imageio.v2 as imageio
import numpy as np
import pytest
from gnoming_helpers import random_game
from pettingzoo.test import render_test
from PIL import Image

import grinch_env
import grinch_env.gnoming as gn
from grinch_env.__main__ import main as watch_main
from grinch_env.evaluation.evaluate import main as evaluate_main
from grinch_env.gnoming import render as gnoming_render
from grinch_env.gnoming.game import Game as GnomingGame
from grinch_env.grinch import render as grinch_render
from grinch_env.grinch.cards import parse_card
from grinch_env.grinch.game import DRAW_DISCARD_BASE, DRAW_PILE_ACTION, SCORE_BASE, Game, decisions_per_game
from grinch_env.video import HOLD_SECONDS, check_video_path, fps_for, game_frames, play_recorded, write_game_video

GRINCH_HEIGHTS = {2: 400, 3: 512, 4: 624, 5: 736, 6: 848}  # 156 + 112 per seat + 8, rounded up to 16
GNOMING_HEIGHT = 880  # two rows of seat panels for every table size
ENVS = {"grinch": (grinch_env.env, range(2, 7)), "gnoming": (gn.env, range(3, 8))}


def digest(frame: np.ndarray) -> str:
    return hashlib.sha256(frame.tobytes()).hexdigest()


def played_grinch(n: int, seed: int, steps: int) -> Game:
    game = Game(n, rng=seed)
    rng = np.random.default_rng(seed + 1)
    for _ in range(steps):
        legal = game.legal_actions()
        game.step(legal[rng.integers(len(legal))])
    return game


# ------------------------------------------------------------------ shapes
@pytest.mark.parametrize("n", range(2, 7))
def test_grinch_pictures_have_one_shape_per_table_size(n):
    env = grinch_env.env(num_players=n, render_mode="rgb_array")
    env.reset(seed=n)
    for seat in (None, *range(n)):
        env.unwrapped.render_seat = seat
        frame = env.render()
        assert frame.shape == (GRINCH_HEIGHTS[n], 1408, 3) and frame.dtype == np.uint8 and frame.flags.c_contiguous
    assert grinch_render.draw_table(played_grinch(n, 0, decisions_per_game(n))).shape == (GRINCH_HEIGHTS[n], 1408, 3)  # game over


@pytest.mark.parametrize("n", range(3, 8))
def test_gnoming_pictures_have_one_shape_per_table_size(n):
    env = gn.env(num_players=n, render_mode="rgb_array", render_seat=n - 1)
    env.reset(seed=n)
    assert env.render().shape == (GNOMING_HEIGHT, 1408, 3) and env.render().dtype == np.uint8
    for seat in (None, 0):
        assert gnoming_render.draw_table(random_game(n, seed=n), seat).shape == (GNOMING_HEIGHT, 1408, 3)  # game over


@pytest.mark.parametrize("game", ["grinch", "gnoming"])
def test_pettingzoo_render_test_passes_at_every_size(game):
    make, sizes = ENVS[game]
    for n in sizes:
        render_test(lambda render_mode=None, n=n: make(num_players=n, render_mode=render_mode))


# ------------------------------------------------------------- determinism
@pytest.mark.parametrize(("game", "n"), [("grinch", 3), ("grinch", 6), ("gnoming", 4), ("gnoming", 7)])
def test_a_seeded_state_renders_the_same_bytes(game, n):
    make, _ = ENVS[game]
    hashes = []
    for _ in range(2):
        env = make(num_players=n, render_mode="rgb_array", render_seat=1)
        env.reset(seed=42)
        rng = np.random.default_rng(7)
        for _ in range(25):
            obs, *_ = env.last()
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        hashes.append((digest(env.render()), env.unwrapped.last_action_text()))
        env.unwrapped.render_seat = None
        hashes.append((digest(env.render()), env.unwrapped.last_action_text()))
    assert hashes[0] == hashes[2] and hashes[1] == hashes[3]
    assert hashes[0][0] != hashes[1][0]  # seat 1's view and the spectator's are two pictures


def test_the_last_action_is_written_on_the_picture():
    env = grinch_env.env(num_players=2, render_mode="rgb_array")
    env.reset(seed=0)
    before = env.render()
    assert env.unwrapped.last_action_text() is None
    obs, *_ = env.last()
    action = int(np.flatnonzero(obs["action_mask"])[0])
    env.step(action)
    assert env.unwrapped.last_action_text() == grinch_render.action_text(2, 1, action)
    game = env.unwrapped.game
    assert not np.array_equal(grinch_render.draw_table(game, None, "player_1: something"), grinch_render.draw_table(game, None, None))
    assert not np.array_equal(before, env.render())


def test_action_texts_name_piles_by_their_owner():
    assert grinch_render.action_text(4, 1, parse_card("W3'")) == "player_1: discard W3'"
    assert grinch_render.action_text(4, 3, DRAW_PILE_ACTION) == "player_3: draw from the draw pile"
    assert grinch_render.action_text(4, 3, DRAW_DISCARD_BASE) == "player_3: draw from own discard pile"
    assert grinch_render.action_text(4, 3, DRAW_DISCARD_BASE + 2) == "player_3: draw from player_1's discard pile"
    assert grinch_render.action_text(4, 0, SCORE_BASE + 5) == "player_0: score the Match row"
    assert gnoming_render.action_text(3, 2, 4) == "player_2: slot 4 (row 1, col 1)"
    assert gnoming_render.action_text(3, 0, 12) == "player_0: DISCARD onto pile A"
    assert gnoming_render.action_text(3, 1, 9) == "player_1: DRAW from the draw pile"
    with pytest.raises(ValueError, match=r"a Grinch action is an int in 0..61, got 62"):
        grinch_render.action_text(4, 0, 62)


# ------------------------------------------------------- what a seat may see
def _swap_hidden_grinch(game: Game, seat: int) -> Game:
    """Return a copy with a card of another seat's hand that ``seat`` cannot locate swapped with a draw-pile card."""
    other = next(p for p in range(game.num_players) if p != seat and any(c not in game.known[p] for c in game.hands[p]))
    hidden = next(c for c in game.hands[other] if c not in game.known[other])
    b = game.clone()
    i = b.hands[other].index(hidden)
    b.hands[other][i], b.draw_pile[0] = b.draw_pile[0], hidden
    return b


@pytest.mark.parametrize(("n", "seed", "steps"), [(2, 0, 3), (4, 1, 17), (6, 2, 40), (3, 5, 9)])
def test_grinch_hidden_cards_leave_seat_views_unchanged(n, seed, steps):
    a = played_grinch(n, seed, steps)
    for seat in range(n):
        b = _swap_hidden_grinch(a, seat)
        assert b.hands != a.hands
        assert np.array_equal(grinch_render.draw_table(a, seat, "x"), grinch_render.draw_table(b, seat, "x"))
        assert not np.array_equal(grinch_render.draw_table(a, None, "x"), grinch_render.draw_table(b, None, "x"))
    # The draw pile's order is hidden from everyone, the spectator included.
    c = a.clone()
    c.draw_pile = c.draw_pile[::-1]
    assert np.array_equal(grinch_render.draw_table(a), grinch_render.draw_table(c))
    # A seat does see its own hand: changing it changes that seat's view.
    d = a.clone()
    d.hands[0][0], d.draw_pile[0] = d.draw_pile[0], d.hands[0][0]
    assert not np.array_equal(grinch_render.draw_table(a, 0), grinch_render.draw_table(d, 0))


def test_grinch_cards_known_from_a_discard_pile_show_face_up_to_everyone():
    game = Game(3, rng=0)
    game.known[2] = [game.hands[2][0]]
    assert grinch_render.visible_hand(game, 2, seat=0)[0] == grinch_render.card_face(game, game.hands[2][0])
    assert grinch_render.visible_hand(game, 2, seat=0)[1:] == [None] * (len(game.hands[2]) - 1)
    assert None not in grinch_render.visible_hand(game, 2, seat=2) and None not in grinch_render.visible_hand(game, 2, seat=None)


def _swap_face_down(game: GnomingGame) -> GnomingGame:
    """Return a copy with two face-down cards of different kinds (in two layouts) swapped."""
    spots = [(s, p) for s in range(game.num_players) for p in range(9) if not game.face_up[s][p]]
    b = game.clone()
    for s1, p1 in spots:
        for s2, p2 in spots:
            if s1 != s2 and b.layouts[s1][p1] != b.layouts[s2][p2]:
                b.layouts[s1][p1], b.layouts[s2][p2] = b.layouts[s2][p2], b.layouts[s1][p1]
                return b
    raise AssertionError("no two face-down cards of different kinds")


@pytest.mark.parametrize(("n", "seed", "steps"), [(3, 0, 6), (5, 1, 40), (7, 2, 90)])
def test_gnoming_face_down_cards_leave_every_seat_view_unchanged(n, seed, steps):
    a = random_game(n, seed, steps=steps)
    b = _swap_face_down(a)
    assert b.layouts != a.layouts
    views = [digest(gnoming_render.draw_table(a, s, "x")) for s in range(n)]
    assert views == [digest(gnoming_render.draw_table(b, s, "x")) for s in range(n)]
    assert len(set(views)) == n  # only the "you" mark tells the seats' pictures apart
    assert not np.array_equal(gnoming_render.draw_table(a, None, "x"), gnoming_render.draw_table(b, None, "x"))
    # Turning a card up shows it to every seat.
    c = a.clone()
    s, p = next((s, p) for s in range(n) for p in range(9) if not c.face_up[s][p])
    c.face_up[s][p] = True
    assert not np.array_equal(gnoming_render.draw_table(a, 0), gnoming_render.draw_table(c, 0))


def test_bad_render_seats_are_clear_errors():
    with pytest.raises(ValueError, match=r"render_seat must be None \(the spectator, who sees every card\) or a seat in 0..3, got 4"):
        grinch_render.draw_table(Game(4, rng=0), 4)
    with pytest.raises(ValueError, match=r"or a seat in 0..2, got True"):
        gnoming_render.draw_table(GnomingGame(3, rng=0), True)
    with pytest.raises(ValueError, match=r"or a seat in 0..4, got 5"):
        gn.env(num_players=5, render_seat=5)


# ----------------------------------------------------------- human window
def test_human_mode_shows_the_picture_in_a_pygame_window(capsys):
    import pygame

    env = gn.env(num_players=3, render_mode="human", render_seat=0)
    env.reset(seed=3)  # the window opens at reset and is redrawn after every step
    obs, *_ = env.last()
    env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert env.render() is None and capsys.readouterr().out == ""
    shown = np.transpose(pygame.surfarray.array3d(pygame.display.get_surface()), (1, 0, 2))
    raw = env.unwrapped
    assert np.array_equal(shown, gnoming_render.draw_table(raw.game, 0, raw.last_action_text()))
    env.close()
    assert not pygame.display.get_init()


# ------------------------------------------------------------------ videos
def test_a_game_video_has_one_frame_per_decision_plus_the_deal_and_the_hold(tmp_path):
    agents = [grinch_env.make_agent("greedy", seed=1), grinch_env.make_agent("random", seed=2)]
    decisions = play_recorded("grinch", 2, agents, 5, num_rounds=1)
    assert len(decisions) == 14  # one round at 2 players: 3 Who discards + 3 x (2 draws + 1 discard) + 2 scores
    assert fps_for(15, seconds=5) == 3.0
    frames, fps = write_game_video(tmp_path / "g.mp4", "grinch", 2, 5, decisions, seconds=5, game_options={"num_rounds": 1})
    assert (frames, fps) == (15 + int(HOLD_SECONDS * 3), 3.0)
    reader = imageio.get_reader(tmp_path / "g.mp4")
    assert reader.count_frames() == 24 and reader.get_meta_data()["fps"] == 3.0
    assert reader.get_data(0).shape == (400, 1408, 3)
    frames, _ = write_game_video(tmp_path / "g.gif", "grinch", 2, 5, decisions, seat=1, seconds=5, game_options={"num_rounds": 1})
    gif = Image.open(tmp_path / "g.gif")
    durations = []
    for i in range(gif.n_frames):  # Pillow merges equal frames (the hold) into one longer frame
        gif.seek(i)
        durations.append(gif.info["duration"])
    # GIF stores durations in 10 ms steps, so 24 frames of 333 ms add up to about 8 s: 24 frame times.
    assert frames == 24 and gif.n_frames < 24 and round(sum(durations) * 3 / 1000) == 24


def test_game_frames_replay_the_recorded_game_and_refuse_a_wrong_log():
    agents = [grinch_env.make_agent("random", seed=s, game="gnoming") for s in range(3)]
    decisions = play_recorded("gnoming", 3, agents, 11)
    frames = list(game_frames("gnoming", 3, 11, decisions[:5], seat=2))
    assert len(frames) == 6
    game = GnomingGame(3, rng=11)
    for _, action in decisions[:5]:
        game.step(action)
    assert np.array_equal(frames[-1], gnoming_render.draw_table(game, 2, gnoming_render.action_text(3, *decisions[4])))
    wrong = [(decisions[0][0] + 1, decisions[0][1])]
    with pytest.raises(ValueError, match=r"decision 0 \(1, \d+\): seat 0 is to act, not 1"):
        list(game_frames("gnoming", 3, 11, wrong))


def test_bad_video_paths_are_clear_errors(tmp_path):
    with pytest.raises(ValueError, match=r"a video path must end in .mp4 or .gif, got 'x.avi'"):
        check_video_path("x.avi")
    with pytest.raises(ValueError, match="does not exist: create"):
        check_video_path(tmp_path / "missing" / "x.mp4")
    with pytest.raises(SystemExit):
        watch_main(["--players", "2", "--video", "x.webm"])


def test_the_watch_command_writes_a_video_of_the_printed_game(tmp_path, capsys):
    path = tmp_path / "w.mp4"
    assert watch_main(["--players", "2", "--num-rounds", "1", "--seed", "4", "--agents", "greedy,random", "--video", str(path),
                       "--video-seconds", "7"]) == 0
    out = capsys.readouterr().out
    assert "seed 4, agents seat 0 greedy, seat 1 random (every hand shown)" in out
    # 14 decisions + the deal in 7 s: 2.14 fps, and the final table held round(3 * 2.14) = 6 frames.
    assert out.rstrip().endswith(f"wrote {path}: 21 frames at 2.14 fps (9.8 s)")
    assert imageio.get_reader(path).count_frames() == 21


def test_the_gnoming_watch_command_writes_the_same_game_it_prints(tmp_path, capsys):
    path = tmp_path / "g.mp4"
    assert watch_main(["--game", "gnoming", "--players", "3", "--seed", "2", "--agents", "greedy", "--video", str(path), "--video-seat", "1"]) == 0
    out = capsys.readouterr().out
    agents = [grinch_env.make_agent("greedy", game="gnoming") for _ in range(3)]
    decisions = play_recorded("gnoming", 3, agents, 2, np.random.SeedSequence(2).generate_state(3))
    frames = len(decisions) + 1
    hold = int(round(HOLD_SECONDS * fps_for(frames)))
    assert re.search(rf"wrote {re.escape(str(path))}: {frames + hold} frames at ", out)
    assert imageio.get_reader(path).count_frames() == frames + hold


def test_the_tournament_command_writes_a_video_of_one_of_its_games(tmp_path, capsys):
    path = tmp_path / "t.mp4"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert evaluate_main(["--agents", "greedy,random", "--players", "2", "--games", "2", "--no-progress", "--video", str(path),
                              "--video-game", "1", "--video-seconds", "10"]) == 0
    out = capsys.readouterr().out
    # Game 1 seats random then greedy; a 2-player game has 84 decisions: 85 frames at 8.5 fps, held 26 frames.
    assert out.rstrip().endswith(f"wrote {path}: game 1 (random, greedy), 111 frames at 8.5 fps")
    assert imageio.get_reader(path).count_frames() == 111
    with pytest.raises(SystemExit):
        evaluate_main(["--agents", "greedy,random", "--players", "2", "--games", "2", "--video", str(path), "--video-game", "2"])

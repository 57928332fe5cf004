"""Videos of games: every decision's table picture (:func:`draw_table`) written as an MP4 or a GIF.

A game is recorded as its deal seed and its decisions (``(seat, action)``, the
actions the agents chose; the moves the rules force are replayed by the
engine), then replayed to draw one frame per state: the deal, then the table
after every decision, then the final scores held for :data:`HOLD_SECONDS`.
The frame rate is chosen so that the video lasts about ``seconds`` (default
30), between 1 and 30 frames a second.

MP4 is written by ``imageio`` with the ffmpeg binary that the
``imageio-ffmpeg`` wheel ships (nothing to install on the system); GIF by
``imageio`` through Pillow.  Both are in the ``grinch_env[render]`` extra.

``python -m grinch_env --game gnoming --players 4 --agents champion,greedy --video g.mp4``
and ``python -m grinch_env.evaluation ... --video game.mp4`` use this module.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from importlib import import_module
from pathlib import Path
from typing import Any

import numpy as np

from grinch_env.games import GameSpec, get_game
from grinch_env.rendering import check_seat

VIDEO_SUFFIXES = (".mp4", ".gif")
HOLD_SECONDS = 3.0
DEFAULT_SECONDS = 30.0
MIN_FPS, MAX_FPS = 1.0, 30.0

Decision = tuple[int, int]


def check_video_path(path: str | os.PathLike) -> Path:
    """Return ``path`` as a ``Path`` if it ends in ``.mp4`` or ``.gif`` and its folder exists, else raise ``ValueError``."""
    p = Path(path)
    if p.suffix.lower() not in VIDEO_SUFFIXES:
        raise ValueError(f"a video path must end in .mp4 or .gif, got {str(path)!r}")
    if not p.parent.is_dir():
        raise ValueError(f"the folder of the video {str(path)!r} does not exist: create {str(p.parent)!r} first")
    return p


def play_recorded(game: str | GameSpec, num_players: int, agents: Sequence[Any], game_seed: int, agent_seeds: Sequence[int] | None = None,
                  **game_options: Any) -> list[Decision]:
    """Play one game (``agents[s]`` at seat ``s``, each seeing its observation and mask) and return its decisions.

    ``agent_seeds`` (one per seat) reset the agents first, as the tournaments do.
    """
    spec = get_game(game)
    state = spec.new_game(num_players, game_seed, **game_options)
    encoder = spec.encoder()
    if agent_seeds is not None:
        for agent, s in zip(agents, agent_seeds):
            agent.reset(int(s))
    decisions: list[Decision] = []
    while not state.done:
        seat = state.current
        view = encoder.observe(state, seat)
        action = int(agents[seat].act(view["observation"], view["action_mask"]))
        state.step(action)
        decisions.append((seat, action))
    return decisions


def fps_for(num_frames: int, seconds: float = DEFAULT_SECONDS) -> float:
    """Return the frame rate that plays ``num_frames`` in about ``seconds`` (1 to 30 frames a second, two decimals)."""
    if not seconds > 0:
        raise ValueError(f"the video length must be > 0 seconds, got {seconds!r}")
    return round(min(MAX_FPS, max(MIN_FPS, num_frames / seconds)), 2)


def game_frames(game: str | GameSpec, num_players: int, game_seed: int, decisions: Iterable[Decision], seat: int | None = None,
                hold_frames: int = 0, **game_options: Any) -> Iterator[np.ndarray]:
    """Yield the table pictures of a recorded game: the deal, every decision's result, then the last one ``hold_frames`` more times.

    ``seat`` picks the view (``None``: the spectator's).  A decision that is
    not legal where it comes raises ``ValueError`` naming it.
    """
    spec = get_game(game)
    seat = check_seat(seat, num_players)
    render = import_module(f"{spec.package}.render")
    state = spec.new_game(num_players, game_seed, **game_options)
    frame = render.draw_table(state, seat, None)
    yield frame
    for i, (who, action) in enumerate(decisions):
        if state.current != who:
            raise ValueError(f"decision {i} ({who}, {action}): seat {state.current} is to act, not {who}")
        try:
            state.step(int(action))
        except ValueError as err:
            raise ValueError(f"decision {i} ({who}, {action}): {err}") from None
        frame = render.draw_table(state, seat, render.action_text(num_players, who, int(action)))
        yield frame
    for _ in range(hold_frames):
        yield frame


def write_video(path: str | os.PathLike, frames: Iterable[np.ndarray], fps: float) -> int:
    """Write ``frames`` (``uint8[H, W, 3]``, all one size) to ``path`` (.mp4 or .gif) at ``fps``; return the frame count."""
    import imageio.v2 as imageio  # the [render] extra

    p = check_video_path(path)
    if p.suffix.lower() == ".gif":
        writer = imageio.get_writer(p, mode="I", duration=1000.0 / fps, loop=0)
    else:
        writer = imageio.get_writer(p, fps=fps, codec="libx264", quality=7, macro_block_size=16, pixelformat="yuv420p",
                                    ffmpeg_log_level="error")
    count = 0
    try:
        for frame in frames:
            writer.append_data(frame)
            count += 1
    finally:
        writer.close()
    return count


def write_game_video(path: str | os.PathLike, game: str | GameSpec, num_players: int, game_seed: int, decisions: Sequence[Decision],
                     seat: int | None = None, seconds: float = DEFAULT_SECONDS, game_options: Mapping[str, Any] | None = None) -> tuple[int, float]:
    """Write the video of a recorded game to ``path``; return ``(frames, fps)``.

    The game's frames (deal + one per decision) last about ``seconds``; the final table is then held for :data:`HOLD_SECONDS`.
    """
    check_video_path(path)
    fps = fps_for(len(decisions) + 1, seconds)
    hold = int(round(HOLD_SECONDS * fps))
    frames = game_frames(game, num_players, game_seed, decisions, seat, hold, **dict(game_options or {}))
    return write_video(path, frames, fps), fps


__all__ = [
    "DEFAULT_SECONDS", "HOLD_SECONDS", "VIDEO_SUFFIXES", "check_video_path", "fps_for", "game_frames", "play_recorded",
    "write_game_video", "write_video",
]

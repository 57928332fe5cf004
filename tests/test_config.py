"""Config files: the shipped ones validate; bad keys and types fail naming the key."""

from pathlib import Path

import pytest
from pydantic import BaseModel

from training.config import DistillConfig, SB3Config, TrainConfig, apply_overrides, config_from_dict, load_config

CONFIGS = Path(__file__).resolve().parents[1] / "configs"


@pytest.mark.parametrize("name", ["default", "smoke", "selfplay_4p", "selfplay_mixed", "selfplay_finetune"])
def test_shipped_training_configs_validate(name):
    cfg = load_config(CONFIGS / f"{name}.yaml")
    assert isinstance(cfg, TrainConfig) and cfg.run_name == name


@pytest.mark.parametrize("name", ["distill_expectimax", "distill_lookahead", "distill_smoke"])
def test_shipped_distill_configs_validate(name):
    cfg = load_config(CONFIGS / f"{name}.yaml", schema=DistillConfig)
    assert cfg.run_name == name and cfg.rounds == 2


def test_finetune_starts_from_the_distilled_run():
    cfg = load_config(CONFIGS / "selfplay_finetune.yaml")
    distilled = load_config(CONFIGS / "distill_expectimax.yaml", schema=DistillConfig)
    assert cfg.init_checkpoint == f"{distilled.checkpoint_dir}/{distilled.run_name}"
    assert cfg.model == distilled.model and cfg.table_sizes == distilled.table_sizes


def test_shipped_sb3_config_validates():
    cfg = load_config(CONFIGS / "sb3_maskable_ppo.yaml", schema=SB3Config)
    assert cfg.run_name == "sb3_maskable_ppo" and cfg.num_players == 4


def test_mixed_config_mixes_every_table_size():
    assert load_config(CONFIGS / "selfplay_mixed.yaml").table_sizes == [2, 3, 4, 5, 6]


def test_unknown_key_is_an_error_naming_it(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("run_name: x\nppo:\n  learning_rat: 0.001\n")
    with pytest.raises(ValueError, match=r"ppo\.learning_rat: unknown key; did you mean ppo\.learning_rate\?"):
        load_config(path)
    with pytest.raises(ValueError, match=r"num_env: unknown key; did you mean num_envs\?"):
        config_from_dict({"num_env": 8})


def test_unknown_key_suggests_the_nearest_key_here_then_in_another_section():
    with pytest.raises(ValueError) as err:
        config_from_dict({"learning_rate": 1e-3, "eval": {"num_player": [2]}, "zzz": 1}, source="x.yaml")
    assert str(err.value) == (
        "invalid training config x.yaml:\n"
        "  eval.num_player: unknown key; did you mean eval.num_players?\n"
        "  learning_rate: unknown key; did you mean ppo.learning_rate?\n"
        "  zzz: unknown key; valid keys here: game, run_name, checkpoint_dir, seed, num_players, bonus_layout, reward_mode, num_envs, "
        "total_updates, torch_threads, save_every, tensorboard, init_checkpoint, model, ppo, selfplay, eval, distributed"
    )
    with pytest.raises(ValueError, match=r"^invalid training config <dict>:\n  final_games: unknown key; did you mean eval\.final_games\?$"):
        config_from_dict({"final_games": 10})
    with pytest.raises(ValueError, match=r"^invalid training config <dict>:\n  games: unknown key; did you mean game\?$"):
        config_from_dict({"games": 10})  # the nearest key here (the game) comes before keys of other sections


def test_a_config_for_another_command_names_that_command():
    with pytest.raises(ValueError) as err:
        load_config(CONFIGS / "sb3_maskable_ppo.yaml")
    sb3 = str(CONFIGS / "sb3_maskable_ppo.yaml")
    assert str(err.value) == (
        f"invalid training config {sb3}: it is a config for `python -m training.train_sb3` (keys batch_size, ent_coef, eval_games, "
        f"eval_opponents and 9 more are SB3Config keys), not for `python -m training.train`; run: python -m training.train_sb3 --config {sb3}"
    )
    with pytest.raises(ValueError, match=r"it is a config for `python -m training\.distill` \(keys batch_size, epochs, explore, games_per_round and 5 more"):
        load_config(CONFIGS / "distill_lookahead.yaml")
    with pytest.raises(ValueError, match=r"it is a config for `python -m training\.train` .* not for `python -m training\.train_sb3`"):
        load_config(CONFIGS / "default.yaml", schema=SB3Config)
    # One unknown key is a typo, not another command's config (n_envs is an SB3Config key).
    with pytest.raises(ValueError, match=r"^invalid training config <dict>:\n  n_envs: unknown key; did you mean num_envs\?$"):
        config_from_dict({"n_envs": 4})


def test_yaml_syntax_errors_name_the_file_line_and_column(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("run_name: x\nnum_envs: [1, 2\n")
    with pytest.raises(ValueError) as err:
        load_config(path)
    assert str(err.value) == (
        f"invalid training config {path}: not valid YAML: expected ',' or ']', but got '<stream end>' at line 3, column 1 "
        "(while parsing a flow sequence at line 2, column 11)"
    )
    with pytest.raises(ValueError, match=r"^override 'num_envs=\[1,': the value is not valid YAML: .* at line 1, column 4"):
        apply_overrides({}, ["num_envs=[1,"])


def test_wrong_type_is_an_error_naming_the_key():
    with pytest.raises(ValueError, match=r"num_envs: Input should be a valid integer.*'many'"):
        config_from_dict({"num_envs": "many"})
    with pytest.raises(ValueError, match=r"selfplay\.self_prob: Input should be a valid number"):
        config_from_dict({"selfplay": {"self_prob": [1]}})
    with pytest.raises(ValueError, match=r"reward_mode: Input should be 'win' or 'margin'"):
        config_from_dict({"reward_mode": "score"})


def test_draw_lookahead_needs_action_features():
    with pytest.raises(ValueError, match=r"model: draw_lookahead: true needs action_features: true"):
        config_from_dict({"model": {"action_features": False, "draw_lookahead": True}})
    assert load_config(CONFIGS / "distill_lookahead.yaml", schema=DistillConfig).model.draw_lookahead is True
    assert load_config(CONFIGS / "distill_expectimax.yaml", schema=DistillConfig).model.draw_lookahead is False


def test_out_of_range_values_are_errors():
    with pytest.raises(ValueError, match=r"num_players.*2\.\.6, got \[2, 7\]"):
        config_from_dict({"num_players": [2, 7]})
    with pytest.raises(ValueError, match=r"ppo\.gamma: Input should be less than or equal to 1"):
        config_from_dict({"ppo": {"gamma": 1.5}})
    with pytest.raises(ValueError, match="must be > 0"):
        config_from_dict({"selfplay": {"self_prob": 0, "snapshot_prob": 0, "baseline_probs": {}}})


def test_missing_file_and_bad_top_level(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        load_config(tmp_path / "nope.yaml")
    (tmp_path / "list.yaml").write_text("- 1\n- 2\n")
    with pytest.raises(ValueError, match="top level must be a mapping"):
        load_config(tmp_path / "list.yaml")


def test_overrides_parse_yaml_values():
    data = apply_overrides({"ppo": {"learning_rate": 1.0}}, ["ppo.learning_rate=2e-4", "num_players=[2, 3]", "eval.every=0"])
    cfg = config_from_dict(data)
    assert cfg.ppo.learning_rate == 2e-4 and cfg.table_sizes == [2, 3] and cfg.eval.every == 0
    with pytest.raises(ValueError, match="key.sub=value"):
        apply_overrides({}, ["ppo.learning_rate"])


def _models(model: type[BaseModel]):
    yield model
    for field in model.model_fields.values():
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            yield from _models(field.annotation)


@pytest.mark.parametrize("schema", [TrainConfig, SB3Config])
def test_every_field_has_a_description(schema):
    for model in _models(schema):
        for name, field in model.model_fields.items():
            assert field.description, f"{model.__name__}.{name} has no description"


def test_distill_config_errors_name_the_key():
    with pytest.raises(ValueError, match=r"^invalid training config <dict>:\n  num_players: table sizes must be an int or a non-empty list of ints in 2\.\.6, got 7$"):
        config_from_dict({"num_players": 7}, schema=DistillConfig)  # the value as given, once (not "got [7] (got 7)")
    with pytest.raises(ValueError, match=r"explore: Input should be less than or equal to 1"):
        config_from_dict({"explore": 1.5}, schema=DistillConfig)
    assert config_from_dict({"num_players": 3}, schema=DistillConfig).table_sizes == [3]


def test_game_key_checks_sizes_reward_mode_and_grinch_only_options():
    cfg = config_from_dict({"game": "gnoming", "num_players": [3, 7], "model": {"action_features": False}})
    assert cfg.game == "gnoming" and cfg.reward_mode == "win" and cfg.game_options() == {}
    assert config_from_dict({}).reward_mode == "win"  # the Grinch's default
    with pytest.raises(ValueError, match=r"num_players: table sizes must be an int or a non-empty list of ints in 3\.\.7 \(Gnoming A Round\), got 2"):
        config_from_dict({"game": "gnoming", "num_players": 2, "model": {"action_features": False}})
    # Both games name their reward modes alike: "win" (zero-sum win share) and "margin".
    assert config_from_dict({"game": "gnoming", "reward_mode": "margin", "model": {"action_features": False}}).reward_mode == "margin"
    with pytest.raises(ValueError, match=r"reward_mode: Input should be 'win' or 'margin'"):
        config_from_dict({"game": "gnoming", "reward_mode": "win_loss", "model": {"action_features": False}})
    with pytest.raises(ValueError, match=r"model\.draw_lookahead: it features the Grinch's draws; set model\.draw_lookahead: false for gnoming"):
        config_from_dict({"game": "gnoming", "model": {"draw_lookahead": True}})
    assert config_from_dict({"game": "gnoming"}).model.action_features  # Gnoming's own action features (greedy's option values)
    with pytest.raises(ValueError, match=r"bonus_layout: Gnoming A Round has no bonus cards"):
        config_from_dict({"game": "gnoming", "bonus_layout": "none", "model": {"action_features": False}})
    with pytest.raises(ValueError, match=r"eval\.num_players: Grinch Grow Your Heart is played by 2\.\.6 players, got 7"):
        config_from_dict({"eval": {"num_players": [7]}})
    with pytest.raises(ValueError, match=r"game: Input should be 'grinch' or 'gnoming'"):
        config_from_dict({"game": "chess"})


def test_run_command_loads_the_config_and_maps_failures_to_exit_statuses(tmp_path, capsys):
    # The one main of distill, expert_iteration and train_rllib (training.config.run_command).
    import signal

    from training.checkpoint import Interrupted
    from training.config import command_parser, run_command

    parser = command_parser("grinch-x", "a command", "configs/x.yaml", override_config=True)
    config = tmp_path / "c.yaml"
    config.write_text("run_name: mine\nseed: 3\n")
    seen = []

    def body(cfg, run_dir, args):
        seen.append((cfg.run_name, cfg.seed, run_dir, args.override_config))

    assert run_command(parser, ["--config", str(config), "--set", "seed=5"], DistillConfig, body) == 0
    assert run_command(parser, ["--config", str(config), "--run-dir", str(tmp_path / "r"), "--override-config"], DistillConfig, body) == 0
    assert seen == [("mine", 5, Path("checkpoints") / "mine", False), ("mine", 3, tmp_path / "r", True)]
    capsys.readouterr()

    def fail(error):
        def body(cfg, run_dir, args):
            raise error
        return body

    assert run_command(parser, ["--config", str(config)], DistillConfig, fail(ValueError("teacher: no such agent"))) == 2
    assert capsys.readouterr().err == "error: teacher: no such agent\n"
    assert run_command(parser, ["--config", str(tmp_path / "none.yaml")], DistillConfig, body) == 2
    assert "none.yaml' does not exist" in capsys.readouterr().err
    assert run_command(parser, ["--config", str(config), "--set", "rounds=0"], DistillConfig, body) == 2
    assert "rounds" in capsys.readouterr().err
    assert run_command(parser, ["--config", str(config)], DistillConfig, fail(Interrupted(signal.SIGTERM))) == 143
    assert run_command(parser, ["--config", str(config)], DistillConfig, fail(KeyboardInterrupt())) == 130
    assert len(seen) == 2

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
    with pytest.raises(ValueError, match=r"ppo\.learning_rat: Extra inputs are not permitted"):
        load_config(path)
    with pytest.raises(ValueError, match=r"num_env: Extra inputs"):
        config_from_dict({"num_env": 8})


def test_wrong_type_is_an_error_naming_the_key():
    with pytest.raises(ValueError, match=r"num_envs: Input should be a valid integer.*'many'"):
        config_from_dict({"num_envs": "many"})
    with pytest.raises(ValueError, match=r"selfplay\.self_prob: Input should be a valid number"):
        config_from_dict({"selfplay": {"self_prob": [1]}})
    with pytest.raises(ValueError, match=r"reward_mode: Input should be 'win', 'win_loss' or 'margin'"):
        config_from_dict({"reward_mode": "score"})


def test_draw_lookahead_needs_action_features():
    with pytest.raises(ValueError, match=r"model: Value error, draw_lookahead: true needs action_features: true"):
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
    with pytest.raises(ValueError, match=r"num_players: Value error, table sizes must be .* in 2\.\.6, got \[7\]"):
        config_from_dict({"num_players": 7}, schema=DistillConfig)
    with pytest.raises(ValueError, match=r"explore: Input should be less than or equal to 1"):
        config_from_dict({"explore": 1.5}, schema=DistillConfig)
    assert config_from_dict({"num_players": 3}, schema=DistillConfig).table_sizes == [3]

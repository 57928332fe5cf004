"""The learner's config: a YAML file in ``configs/learner_*.yaml`` validated by pydantic (unknown keys are errors).

``load_config(path, overrides)`` returns a :class:`LearnerConfig`; the
resolved config is stored in every checkpoint, so ``--resume`` needs only the
run directory (:meth:`LearnerConfig.from_stored` reads a stored one, the retired
options of older checkpoints dropped).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from grinch_env.games import get_game
from grinch_env.grinch.tokens import TOKEN_OPTIONS


def table_sizes(num_players: int | list[int]) -> list[int]:
    """A config's ``num_players`` (one table size or a list of them) as the list of its sizes, in order."""
    return [num_players] if isinstance(num_players, int) else list(num_players)


def check_table_sizes(game: str, num_players: int | list[int]) -> list[int]:
    """``num_players``' sizes, each checked against ``game``'s table sizes (none missing, none twice)."""
    spec = get_game(game)
    sizes = table_sizes(num_players)
    if not sizes:
        raise ValueError(f"num_players must be an int or a non-empty list of ints in {spec.min_players}..{spec.max_players}, got {num_players!r}")
    if len(set(sizes)) != len(sizes):
        raise ValueError(f"num_players lists a table size twice: {num_players}")
    for n in sizes:
        spec.check_num_players(n)
    return sizes


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NetConfig(_Section):
    """The token network (:class:`training.learner.net.TokenNet`)."""

    d_model: int = Field(32, ge=8, description="width of every token embedding")
    layers: int = Field(1, ge=1, description="transformer encoder layers over the state tokens")
    heads: int = Field(4, ge=1, description="attention heads (divides d_model)")
    ff: int = Field(64, ge=8, description="feed-forward width (encoder and action MLP)")
    value_global: bool = Field(False, description="the value head reads the encoded global token beside the pooled state")
    round_value: bool = Field(False, description="a second value head: the margin the seat's current round will still bank "
                              "(Grinch, pad credit; trained with ppo.round_coef)")
    raw_dense: bool = Field(False, description="the action MLP also reads the action tokens' dense columns unnormalised")
    action_context: bool = Field(False, description="the action MLP also reads the encoded global and own-seat tokens")
    action_card_ids: bool = Field(True, description="action tokens embed their card ids (false: only type, position and dense columns)")
    token_options: list[Literal[TOKEN_OPTIONS]] = Field(
        default_factory=list, description="Grinch: input options of grinch_env.grinch.tokens.encode_batch the network reads: 'action_cards' "
        "(discard and pile-draw tokens also carry the moved card's suit, rank and bonus columns), 'card_after' (every card token also "
        "carries the open-row values and bonus of the observer's hand with that card added, or removed if held), 'extend' (discard "
        "and draw tokens also carry, per open row, how many unseen cards would raise that row of the afterstate hand)")
    hand_pool: int = Field(0, ge=0, description="Grinch, with token_options [action_cards]: 0 (off) or the width of the per-card features "
                           "that the action MLP reads summed over each action's afterstate hand and over the unseen cards (a set encoder)")
    afterstate_head: int = Field(0, ge=0, description="Grinch, with token_options [action_cards]: 0 (off) or the width of a 3-layer MLP "
                                 "that adds to each action's logit and Q-value from its kept hand's suit x rank counts and bonus cards, the "
                                 "unseen cards' counts and the action, global and own-seat tokens' dense columns")

    @model_validator(mode="after")
    def _heads_divide(self) -> NetConfig:
        if self.d_model % self.heads:
            raise ValueError(f"net.heads ({self.heads}) must divide net.d_model ({self.d_model})")
        return self


class PPOSection(_Section):
    """Clipped PPO with GAE over each seat's own decisions (``training.learner.rollout.seat_gae``)."""

    gamma: float = Field(1.0, ge=0, le=1)
    gae_lambda: float = Field(0.95, ge=0, le=1)
    round_cut: bool = Field(False, description="pad credit (Grinch): each seat's GAE trace stops at its score decision and bootstraps on "
                            "the value of its next round, so no later round's chance reaches a round's advantages")
    clip_coef: float = Field(0.2, gt=0)
    ent_coef: float = Field(0.01, ge=0)
    vf_coef: float = Field(0.5, ge=0)
    update_epochs: int = Field(2, ge=1)
    norm_adv: bool = True
    q_coef: float = Field(0.0, ge=0, description="weight of the Q head's regression on the taken actions' returns (the lambda-returns "
                          "the value head learns), so that Q(s, a) is learned for every action from its token")
    all_action_coef: float = Field(0.0, ge=0, description="weight of the all-action policy term -sum_a pi(a) (Q(a) - sum_b pi(b) Q(b)) "
                                   "over the legal actions (Q held fixed, scaled as the normalised advantages): every action's "
                                   "estimated advantage reaches the policy, also one it seldom samples; needs q_coef > 0")
    round_coef: float = Field(0.0, ge=0, description="pad credit (Grinch): weight of the round value head's regression on the margin "
                              "the seat's current round will still bank (its pad rewards up to its score decision); needs net.round_value")
    oracle_critic: bool = Field(False, description="Grinch: the value heads read the deciding seat's observation with every other "
                                "hand revealed (an asymmetric critic, in training only: the policy and every agent read only the "
                                "observation); the draw pile's order stays hidden")
    oracle_rows: bool = Field(False, description="with oracle_critic: the critic's seat tokens also carry every hand's row values "
                              "(the rows the seat can still write), bonus and best open row's points, the rules-level values its own "
                              "hand has on the global token and the action tokens")
    round_baseline: bool = Field(False, description="pad credit (Grinch): a decision before the seat's score decision gets its "
                                 "advantage from GAE over the round value, ending at that score decision (later rounds' chance "
                                 "never reaches it); score decisions keep the whole game's; needs round_coef > 0")


class EvalSection(_Section):
    """Periodic evaluation for the learning curve: the learner in one seat (rotated), a baseline in the others."""

    every_seconds: float = Field(120.0, gt=0, description="wall time between curve points")
    games: int = Field(48, ge=1, description="games per opponent per curve point (batched, seat-rotated)")
    opponents: list[str] = Field(default_factory=lambda: ["random", "greedy"])
    final_opponents: list[str] | None = Field(None, description="opponents of the final report (None: the curve's)")
    final_games: int = Field(600, ge=0, description="games per opponent of the final report (grinch_env.evaluation; 0: none)")


class LearnerConfig(_Section):
    """One run of the token network's self-play PPO: game, table sizes, budget, knobs and where its games are played."""

    game: Literal["grinch", "gnoming"] = "gnoming"
    num_players: int | list[int] = Field(3, description="table size, or a list of sizes mixed evenly over the games of every iteration (one network plays them all)")
    run_name: str = "learner"
    checkpoint_dir: str = "checkpoints"
    seed: int = 0
    reward_mode: str = Field("margin", description="the engine's reward: terminal, zero-sum; 'margin' is denser than the win reward")
    credit: Literal["game", "round", "pad"] = Field("game", description="'round' (Gnoming, margin): each round is an episode paid its own margin; "
                                                    "'pad' (Grinch, margin): potential-based shaping by the banked score-pad margin")
    pad_others: float = Field(1.0, ge=0, le=1, description="pad credit (Grinch): weight of the others' mean total in every payment, "
                              "(own total - pad_others x mean of the others) / 100; 1 is the margin reward, 0 each seat's own points")
    branch_from: str | None = Field(None, description="a fresh run (--config) starts from this learner run's state (a run directory or "
                                    "its latest.pt: weights, optimizer, counters, random streams and curve) under this config; "
                                    "its CPU time counts against max_seconds.  Same game and net")
    num_envs: int = Field(32, ge=1, description="games per iteration (each plays exactly one game), split evenly over the shards")
    shards: int = Field(1, ge=1, description="the iteration's games are played in this many shards, each on its own engine with its "
                        "own seeds drawn from the run's stream: the weights depend on it (not on workers or backend), so a resumed "
                        "run keeps it; num_envs must be a multiple of shards x the number of table sizes")
    workers: int = Field(1, ge=1, description="processes (backend local; 1: this process) or Ray actors that play the shards; "
                         "may change on resume")
    backend: Literal["local", "ray"] = Field("local", description="where the shards are played: local processes or Ray actors "
                                             "(training.distributed); may change on resume")
    address: str = Field("local", description="ray: 'local' starts a private Ray instance, 'auto' or host:port joins a cluster; "
                         "may change on resume")
    max_seconds: float = Field(900.0, gt=0, description="training CPU-time budget of this run, over all pieces (rollouts, wherever "
                               "played, and updates)")
    max_samples: int | None = Field(None, ge=1, description="stop after this many learner samples (None: time only)")
    learning_rate: float = Field(3e-4, gt=0)
    learning_rate_final: float | None = Field(None, gt=0, description="anneal the learning rate linearly from learning_rate to this "
                                              "over anneal_samples learner samples, then hold it (None: constant)")
    anneal_samples: int | None = Field(None, ge=1, description="learner samples over which the learning rate anneals to learning_rate_final")
    minibatch_size: int = Field(512, ge=1)
    max_grad_norm: float = Field(0.5, gt=0)
    save_every_seconds: float = Field(120.0, gt=0)
    torch_threads: int = Field(1, ge=1)
    opponents: dict[str, float] = Field(default_factory=dict, description="agent spec -> share of each table size's games per iteration "
                                        "(in every shard) in which the learner plays one seat (drawn per game) against that agent in "
                                        "every other seat; only the learner's decisions are learned from; the rest of the games are self-play")
    net: NetConfig = Field(default_factory=NetConfig)
    ppo: PPOSection = Field(default_factory=PPOSection)
    eval: EvalSection = Field(default_factory=EvalSection)

    # the keys of retired options that older checkpoints store: dropped when a stored config is read (from_stored)
    RETIRED: ClassVar[dict[str, tuple[str, ...]]] = {"": ("algo", "dmc"), "ppo": ("vine_pairs", "vine_coef", "vine_form")}

    @classmethod
    def stored_data(cls, data: dict[str, Any]) -> dict[str, Any]:
        """A checkpoint's stored config ``data`` without the keys of retired options (Deep Monte-Carlo's ``algo: dmc`` and
        ``dmc:`` section, PPO's vine pairs), ready to validate; ``ValueError`` for a Deep Monte-Carlo run, whose network
        learned Q-values only (its policy head is untrained)."""
        if data.get("algo", "ppo") != "ppo":
            raise ValueError(f"the stored config is of a run with algo={data['algo']!r} (Deep Monte-Carlo), a retired family: its network "
                             "learned Q-values, which nothing reads any more; only PPO runs load")
        out = {k: v for k, v in data.items() if k not in cls.RETIRED[""]}
        for section, keys in cls.RETIRED.items():
            if section and isinstance(out.get(section), dict):
                out[section] = {k: v for k, v in out[section].items() if k not in keys}
        return out

    @classmethod
    def from_stored(cls, data: dict[str, Any]) -> LearnerConfig:
        """The config a checkpoint stored (:meth:`stored_data`: retired keys dropped), validated."""
        return cls.model_validate(cls.stored_data(data))

    @model_validator(mode="after")
    def _fits_the_game(self) -> LearnerConfig:
        spec = get_game(self.game)
        sizes = check_table_sizes(self.game, self.num_players)
        if self.num_envs % (self.shards * len(sizes)):
            if self.shards == 1:
                raise ValueError(f"num_envs ({self.num_envs}) must be a multiple of the number of table sizes ({len(sizes)}), so every size gets the same games")
            raise ValueError(f"num_envs ({self.num_envs}) must be a multiple of shards x the number of table sizes ({self.shards} x {len(sizes)}), "
                             "so every shard plays the same games of every size")
        if self.reward_mode not in spec.reward_modes:
            raise ValueError(f"reward_mode for {spec.title} must be one of {spec.reward_modes}, got {self.reward_mode!r}")
        if self.credit == "round" and (self.game != "gnoming" or self.reward_mode != "margin"):
            raise ValueError("credit='round' needs game=gnoming and reward_mode=margin: only there are rounds independent deals whose margins add up to the game's")
        if self.credit == "pad" and (self.game != "grinch" or self.reward_mode != "margin"):
            raise ValueError("credit='pad' needs game=grinch and reward_mode=margin: only there is the final reward the banked score-pad margin")
        if self.pad_others != 1.0 and self.credit != "pad":
            raise ValueError(f"pad_others = {self.pad_others} weighs the others' totals in pad credit's payments: it needs credit=pad, got credit={self.credit}")
        if self.ppo.all_action_coef > 0 and self.ppo.q_coef == 0:
            raise ValueError(f"ppo.all_action_coef = {self.ppo.all_action_coef} reads the Q head, which only ppo.q_coef > 0 trains: set ppo.q_coef too")
        if self.ppo.round_cut and self.credit != "pad":
            raise ValueError(f"ppo.round_cut stops PPO's GAE trace at the Grinch's score decisions: it needs credit=pad, got credit={self.credit}")
        if self.ppo.round_coef > 0 and (self.credit != "pad" or not self.net.round_value):
            raise ValueError(f"ppo.round_coef = {self.ppo.round_coef} trains the round value head on the Grinch's score-pad rounds: it needs "
                             f"credit=pad and net.round_value=true, got credit={self.credit}, net.round_value={self.net.round_value}")
        if self.ppo.oracle_critic and self.game != "grinch":
            raise ValueError(f"ppo.oracle_critic reveals the Grinch's hidden hands to PPO's value head: it needs game=grinch, got game={self.game}")
        if self.ppo.oracle_rows and not self.ppo.oracle_critic:
            raise ValueError("ppo.oracle_rows gives the asymmetric critic the revealed hands' row values: set ppo.oracle_critic=true too")
        if (self.learning_rate_final is None) != (self.anneal_samples is None):
            raise ValueError(f"learning_rate_final and anneal_samples set the learning rate's linear anneal together: set both or neither, "
                             f"got learning_rate_final={self.learning_rate_final} and anneal_samples={self.anneal_samples}")
        if self.net.token_options and self.game != "grinch":
            raise ValueError(f"net.token_options {self.net.token_options} are input options of the Grinch's tokens: they need game=grinch, got {self.game}")
        for name in ("afterstate_head", "hand_pool"):  # the network options that read the moved card's columns
            if getattr(self.net, name) and "action_cards" not in self.net.token_options:
                raise ValueError(f"net.{name} reads the moved card's columns of the action tokens: it needs net.token_options to hold "
                                 f"'action_cards' (and game=grinch), got {self.net.token_options}")
        if len(set(self.net.token_options)) != len(self.net.token_options):
            raise ValueError(f"net.token_options lists an option twice: {self.net.token_options}")
        if self.ppo.round_baseline and self.ppo.round_coef == 0:
            raise ValueError("ppo.round_baseline reads the round value head, which only ppo.round_coef > 0 trains: set ppo.round_coef too")
        self._check_opponents(spec, sizes)
        return self

    def _check_opponents(self, spec, sizes: list[int]) -> None:
        from grinch_env.agents import make_agent

        per_size = self.num_envs // (len(sizes) * self.shards)
        where = "per table size" + (f" and shard ({self.shards} shards)" if self.shards > 1 else "")
        for name, share in self.opponents.items():
            if not 0 < share <= 1:
                raise ValueError(f"opponents[{name!r}] is a share of the games, in (0, 1], got {share}")
            games = share * per_size
            if abs(games - round(games)) > 1e-9:
                raise ValueError(f"opponents[{name!r}] = {share} of {per_size} games {where} is {games:g} games: pick a share that gives whole games "
                                 f"(a multiple of 1/{per_size})")
            for n in sizes:
                try:
                    make_agent(name, seed=0, num_players=n, game=self.game)
                except (ValueError, OSError) as exc:
                    raise ValueError(f"opponents: {name!r} is not a {spec.title} agent for {n} players: {exc}") from None
        total = sum(self.opponents.values())
        if total > 1 + 1e-9:
            raise ValueError(f"the opponents' shares add up to {total:g}; at most 1 (the rest of the games are self-play)")

    def opponent_games(self) -> list[tuple[str, int]]:
        """Return ``(agent spec, games per table size in each shard)`` of every configured opponent, in config order."""
        per_size = self.num_envs // (len(self.table_sizes) * self.shards)
        return [(name, int(round(share * per_size))) for name, share in self.opponents.items()]

    @property
    def shard_games(self) -> int:
        """The games of one shard (``num_envs / shards``)."""
        return self.num_envs // self.shards

    @property
    def table_sizes(self) -> list[int]:
        """The table sizes this run trains and evaluates on, in order."""
        return table_sizes(self.num_players)

    @property
    def spec(self):
        return get_game(self.game)

    @property
    def run_dir(self) -> Path:
        return Path(self.checkpoint_dir) / self.run_name


def _set(data: dict[str, Any], dotted: str, value: Any) -> None:
    """Set the dotted key ``dotted`` of ``data`` to ``value``; a section left out or null (``distill: null``) becomes one."""
    keys = dotted.split(".")
    for i, k in enumerate(keys[:-1]):
        if data.get(k) is None:
            data[k] = {}
        data = data[k]
        if not isinstance(data, dict):
            raise ValueError(f"--set {dotted}: {'.'.join(keys[:i + 1])} is {data!r}, not a section with keys")
    data[keys[-1]] = value


def validate_yaml(schema: type[BaseModel], path: str | Path | None, overrides: list[str] | None = None):
    """Return ``schema`` validated from YAML ``path`` (None: the defaults) with ``key=value`` overrides (dotted keys,
    YAML values): the learner families' one config reader.  ``ValueError`` names what is wrong: a missing file, a file
    that is not a mapping, an override without ``=``, an unknown key or a bad value."""
    data: dict[str, Any] = {}
    if path is not None:
        if not Path(path).is_file():
            raise ValueError(f"config file {path} does not exist (the learner configs are configs/learner_*.yaml)")
        data = yaml.safe_load(Path(path).read_text()) or {}
        if not isinstance(data, dict):
            raise ValueError(f"{path}: a learner config is a YAML mapping, got {type(data).__name__}")
    for item in overrides or []:
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise ValueError(f"--set takes key=value (e.g. num_envs=64, net.d_model=64), got {item!r}")
        _set(data, key.strip(), yaml.safe_load(value))
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        raise ValueError(f"{path or 'config'}: {exc}") from None


def load_config(path: str | Path | None = None, overrides: list[str] | None = None) -> LearnerConfig:
    """Return the validated config of ``path`` (YAML) with ``key=value`` overrides (dotted keys, YAML values)."""
    return validate_yaml(LearnerConfig, path, overrides)


__all__ = ["EvalSection", "LearnerConfig", "NetConfig", "PPOSection", "load_config", "validate_yaml"]

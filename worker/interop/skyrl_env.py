"""The bundle's SkyRL environment: env_class `dewpoint_reward`, a single-step text environment whose
step scores the model's response with the bundle's reward.py (Dewpoint's reward, standard-library
Python) against the row's `reward_spec["ground_truth"]`, and ends the episode.

Written by Dewpoint's `export --to skyrl` (worker/interop/skyrl_env.py) beside reward.py. Its shape is
SkyRL's own (NovaSky-AI/SkyRL @ a9564572eb8e91076be43c1bd5e4615e3de17265): a
skyrl_gym.envs.base_text_env.BaseTextEnv built by `skyrl_gym.make(env_class, env_config=...,
extras=row)` (skyrl/train/generators/skyrl_gym_generator.py), where `extras` holds the parquet row's
columns besides `prompt` and `env_class` (skyrl/train/dataset/dataset.py); its `step(action)` returns
BaseTextEnvStepOutput(observations, reward, done, metadata), as skyrl-gym/skyrl_gym/envs/gsm8k/env.py.
`register_env()` registers it as skyrl_gym.envs.register(id=..., entry_point=...) does for gsm8k
(skyrl-gym/skyrl_gym/envs/__init__.py); SkyRL needs that inside the training task, which the bundle's
skyrl_main.py does (as examples/train/multiply/main_multiply.py).

Imports the standard library and skyrl_gym only.
"""

import importlib.util
import os

from skyrl_gym.envs import register
from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput

ENV_CLASS = "dewpoint_reward"


def _load_reward():
    """reward.py from this file's folder, loaded by path (its name could shadow another module's)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reward.py")
    spec = importlib.util.spec_from_file_location("dewpoint_bundle_reward", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


REWARD = _load_reward()


class DewpointRewardEnv(BaseTextEnv):
    """One action, scored by reward.py's compute_score; no observation, no tool."""

    def __init__(self, env_config=None, extras=None):
        super().__init__()
        extras = extras or {}
        spec = extras.get("reward_spec")
        if not isinstance(spec, dict) or "ground_truth" not in spec:
            raise ValueError(
                "env_class %s: the row needs reward_spec with ground_truth (the bundle's train.parquet and "
                "val.parquet have it); got reward_spec = %r" % (ENV_CLASS, spec)
            )
        self.ground_truth = spec["ground_truth"]
        self.data_source = extras.get("data_source", "")
        extra_info = extras.get("extra_info")
        self.extra_info = dict(extra_info) if isinstance(extra_info, dict) else {}

    def step(self, action):
        # SkyRL hands the step the response text, not how it ended: reward.py takes it as ended by the
        # model ("stop"), which only the calc twin reads (a cut last action is scored differently there).
        reward = REWARD.compute_score(self.data_source, action, self.ground_truth, self.extra_info)
        return BaseTextEnvStepOutput(observations=[], reward=reward, done=True, metadata={})


def register_env():
    """Registers `dewpoint_reward` in skyrl_gym's registry (call it in the process that builds the envs)."""
    register(id=ENV_CLASS, entry_point=DewpointRewardEnv)

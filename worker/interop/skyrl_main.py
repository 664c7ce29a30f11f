"""The bundle's SkyRL entrypoint: SkyRL's main_base with the bundle's `dewpoint_reward` environment
registered inside the training task, as NovaSky-AI/SkyRL @ a9564572eb8e91076be43c1bd5e4615e3de17265
examples/train/multiply/main_multiply.py registers its own (docs/content/docs/tutorials/new_env.mdx:
the registration "needs to be done inside the entrypoint task"). Run by the bundle's launch.sh, with
this folder on PYTHONPATH so that the Ray task imports skyrl_env.py; the overrides are SkyRL's
(skyrl/train/config/config.py), read by SkyRLTrainConfig.from_cli_overrides.

Written by Dewpoint's `export --to skyrl` (worker/interop/skyrl_main.py).
"""

import sys

import ray
from skyrl.train.config import SkyRLTrainConfig
from skyrl.train.entrypoints.main_base import BasePPOExp, validate_cfg
from skyrl.train.utils import initialize_ray


@ray.remote(num_cpus=1)
def skyrl_entrypoint(cfg: SkyRLTrainConfig):
    import skyrl_env

    skyrl_env.register_env()
    exp = BasePPOExp(cfg)
    exp.run()


def main() -> None:
    cfg = SkyRLTrainConfig.from_cli_overrides(sys.argv[1:])
    validate_cfg(cfg)
    initialize_ray(cfg)
    ray.get(skyrl_entrypoint.remote(cfg))


if __name__ == "__main__":
    main()

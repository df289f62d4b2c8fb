"""The GPU configurations of ``examples/scale`` (docs/scale-out.md) load and validate on a CPU machine:
the accelerate files through accelerate's own loader, the DeepSpeed file as JSON with its ZeRO stage, and
the GRPO option sets through reharness's stage config into TRL's ``GRPOConfig`` (with vLLM on)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

SCALE = Path(__file__).resolve().parents[2] / "examples" / "scale"


@pytest.mark.parametrize(
    ("name", "processes", "kind"),
    [
        ("accelerate-1gpu", 1, "NO"),
        ("accelerate-8gpu-zero3", 8, "DEEPSPEED"),
        ("accelerate-8gpu-zero2", 8, "DEEPSPEED"),
    ],
)
def test_accelerate_configs_load(name: str, processes: int, kind: str) -> None:
    from accelerate.commands.config.config_args import load_config_from_file

    config = load_config_from_file(str(SCALE / f"{name}.yaml"))
    assert config.num_processes == processes and str(config.distributed_type).endswith(kind)
    assert config.use_cpu is False
    if kind == "DEEPSPEED":
        deepspeed = config.deepspeed_config
        if "deepspeed_config_file" in deepspeed:  # relative to the repository root, where accelerate runs
            file = SCALE.parents[1] / deepspeed["deepspeed_config_file"]
            assert json.loads(file.read_text())["zero_optimization"]["stage"] == 2
        else:
            assert deepspeed["zero_stage"] == 3


@pytest.mark.parametrize("mode", ["server", "colocate"])
def test_grpo_vllm_configs_build_trl_configs(mode: str) -> None:
    import torch

    from reharness.training.grpo import GRPOStageConfig, trl_config

    values = yaml.safe_load((SCALE / f"grpo-vllm-{mode}.yaml").read_text())
    stage = GRPOStageConfig(**values)  # the object `train engineer --stage grpo` builds from its flags
    assert stage.use_vllm and stage.vllm_mode == mode and stage.device == "cuda"
    assert stage.k * stage.packets_per_step == 32  # Harness-R1's global batch
    if not torch.cuda.is_available():  # transformers refuses bf16 without a GPU; everything else is checked
        stage = stage.model_copy(update={"bf16": False})
    trl = trl_config(stage, max_new_tokens=1536)
    assert trl.use_vllm and trl.vllm_mode == mode and trl.num_generations == 8
    assert trl.learning_rate == 1e-6 and (trl.epsilon, trl.epsilon_high, trl.beta) == (0.2, 0.28, 0.0)
    if mode == "server":
        assert trl.vllm_server_base_url == "http://vllm-host:8000"

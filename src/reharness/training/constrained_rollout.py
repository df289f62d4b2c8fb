"""GRPO rollouts of a repair-program engineer decoded under the program grammar (TRL ``rollout_func``).

Without it, GRPO samples the engineer's replies unconstrained while evaluation decodes them under the
grammar mask (:mod:`reharness.engineer.program_prefix`): a reply that does not compile scores 0 and, when all
K replies of a packet tie at 0, the group gives no gradient. Sampling the training replies under the same
mask makes every reply a program whose measured Δ can differ from its siblings', so more groups carry signal
and the engineer is trained on the distribution it is deployed with.

The replies are decoded by the same :class:`~reharness.models.hf_backend.HFBackend` pass as at evaluation,
over the trainer's live weights (no copy, no prefix cache: the weights change every step). Each row's seed
derives from (seed, optimizer step, row), so a resumed run samples the same replies. The returned log-probs
are the policy's own at the sampling temperature, for the chosen tokens. The trainer recomputes its log-probs
from the weights, so the surrogate's ratio starts at 1 whatever the mask did; the mask only decides which
replies are drawn (sampling from a masked policy, as constrained decoding in RL usually does).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from reharness.core.hashing import derive_seed
from reharness.core.types import ChatRequest, SamplingParams
from reharness.engineer.program_prefix import program_constraint


def prompt_key(messages: Sequence[dict[str, Any]]) -> str:
    """A lookup key for a chat prompt (its messages' roles and contents)."""
    return json.dumps([[m["role"], m["content"]] for m in messages], ensure_ascii=False)


def constrained_rollout_func(
    envs_by_prompt: dict[str, str],
    *,
    temperature: float,
    top_p: float,
    max_new_tokens: int,
    seed: int,
) -> Callable[[list[Any], Any], dict[str, Any]]:
    """A TRL ``rollout_func``: one constrained reply per prompt row it receives (TRL already repeats each
    packet's prompt ``num_generations`` times in the batch). ``envs_by_prompt`` maps :func:`prompt_key` of
    each training prompt to its packet's environment, whose repair grammar masks the reply."""
    state: dict[str, Any] = {}

    def rollout(prompts: list[Any], trainer: Any) -> dict[str, Any]:
        from reharness.models.hf_backend import HFBackend

        model = trainer.model
        backend = state.get("backend")
        if backend is None or backend.model is not model:
            backend = HFBackend(
                "grpo-engineer",
                policy_id="grpo-engineer",
                max_batch_size=max(1, len(prompts)),
                prefix_cache_mb=0,
                loaded=(trainer.processing_class, model),
            )
            state["backend"] = backend
        step = int(trainer.state.global_step)
        sampling = SamplingParams(temperature=temperature, top_p=top_p, max_tokens=max_new_tokens)
        requests = []
        for row, messages in enumerate(prompts):
            env = envs_by_prompt.get(prompt_key(messages))
            if env is None:
                raise RuntimeError("constrained GRPO rollout: a prompt not among the training packets")
            requests.append(
                ChatRequest(
                    messages=list(messages),
                    sampling=sampling,
                    seed=derive_seed("grpo-constrained", seed, step, row) & 0x7FFF_FFFF,
                    constraint=program_constraint(env),
                )
            )
        training = model.training
        model.eval()
        try:
            responses = backend.generate_batch(requests)
        finally:
            model.train(training)
        prompt_ids: list[list[int]] = []
        completion_ids: list[list[int]] = []
        logprobs: list[list[float]] = []
        for request, response in zip(requests, responses, strict=True):
            if response.error or not response.completion_token_ids:
                # scored like any empty reply (invalid ⇒ 0); one stop token keeps the row well-formed
                prompt_ids.append(list(response.prompt_token_ids) or backend.encode(request))
                completion_ids.append([backend.pad_id])
                logprobs.append([0.0])
                continue
            prompt_ids.append(list(response.prompt_token_ids))
            completion_ids.append(list(response.completion_token_ids))
            logprobs.append(list(response.logprobs))
        return {"prompt_ids": prompt_ids, "completion_ids": completion_ids, "logprobs": logprobs}

    return rollout

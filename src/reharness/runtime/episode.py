"""The async episode loop: one task, one policy, one harness.

Each decision: build ``ctx`` → ``before_decision`` hooks → ask the policy (seeded per episode seed and step)
→ parse the reply → ``before_action`` hooks (block / rewrite / force) → step the env → ``after_feedback``
hooks (hints / force the next action) → format feedback. Errors inside the episode — a policy that raises, a
malformed reply, a failing hook, an env that raises — become data in the trajectory, never a crash of the run.

``env.reset`` and ``env.step`` run in a worker thread (``executor``, or the loop's default one), so an env
step that takes long (a db statement running up to its time limit) never stalls the other episodes on the
event loop. Determinism is kept: one episode owns its env and awaits each call before the next. An env that
must be called from one thread opts out with the attribute ``steps_off_loop = False``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any

from reharness.core.env_protocol import TextEnvLike
from reharness.core.types import ChatRequest, ChatResponse, Message
from reharness.envs.base import Task, task_identity
from reharness.runtime.agents import Agent
from reharness.runtime.context import (
    Conversation,
    Counters,
    build_ctx_data,
    context_digest,
    feedback_message,
    request_seed,
)
from reharness.runtime.effects import TEXT_EFFECTS, Effect, EffectError, parse_effect
from reharness.runtime.harness import Harness
from reharness.runtime.protocols import parse_action
from reharness.runtime.r1.adapter import Proposal
from reharness.runtime.r1.factory import make_adapter
from reharness.runtime.r1.hooks import OFFICIAL, R1Call, apply_init, r1_outcome
from reharness.runtime.repair import repair_unparsed
from reharness.runtime.reply_end import reply_complete
from reharness.runtime.view import ReadOnlyView, thaw
from reharness.store.records import EpisodeRecord, HookErrorRecord, PolicyOutput, StepRecord


@dataclass
class _HookResults:
    effects: list[Effect] = field(default_factory=list)
    errors: list[HookErrorRecord] = field(default_factory=list)


class EpisodeRunner:
    """Runs one episode of ``agent`` in ``env`` under ``harness`` and returns its record."""

    def __init__(
        self,
        env: TextEnvLike,
        agent: Agent,
        harness: Harness,
        run_id: str = "",
        executor: Executor | None = None,
    ) -> None:
        self.env = env
        self.executor = executor
        self.off_loop = bool(getattr(env, "steps_off_loop", True))
        self.agent = agent
        self.harness = harness
        self.config = harness.config
        self.run_id = run_id
        honoured = getattr(env, "honoured_effects", None)
        self.honoured = None if honoured is None else frozenset(honoured) | TEXT_EFFECTS
        self.admissible_only = bool(getattr(env, "restrict_forced_to_admissible", False))
        #: r1-dialect overlays (their forced actions were checked by the official normalisation instead)
        self.r1_names = frozenset(o.name for o in harness.overlays if o.dialect == "r1")

    async def env_call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """Call a blocking env method off the event loop (or on it, for an env that opts out)."""
        if not self.off_loop:
            return fn(*args, **kwargs)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, lambda: fn(*args, **kwargs))

    async def _call_hooks(
        self,
        point: str,
        make_ctx: Callable[[], Any],
        notebooks: list[dict[str, Any]],
        r1: R1Call | None = None,
        native: bool = True,
    ) -> _HookResults:
        """Run ``point`` of every overlay in order; ``r1`` gives r1-dialect overlays their official ctx
        (``None``: the official runtime does not fire this hook here, so r1 overlays are skipped).

        Each view is built only when an overlay needs it: ``make_ctx()`` (reharness's ctx) on the first
        native overlay, the official ctx once per proposed action for the r1 overlays."""
        results = _HookResults()
        current: str | None = r1.proposal.final if r1 is not None and r1.proposal is not None else None
        ctx: Any = None
        rewritten: str | None = None
        official: dict[str | None, dict[str, Any]] = {}
        for overlay, nb in zip(self.harness.overlays, notebooks, strict=True):
            if point not in overlay.points:
                continue
            is_r1 = overlay.dialect == "r1"
            if (is_r1 and r1 is None) or (not is_r1 and not native):
                continue
            data: dict[str, Any] = {}
            if is_r1:
                assert r1 is not None
                if current not in official:
                    official[current] = r1.ctx(current)
                data = official[current]
            elif ctx is None:
                ctx = make_ctx() if rewritten is None else _with_action(make_ctx(), rewritten)
            outcome = await overlay.call(point, ReadOnlyView(data) if is_r1 else ctx, nb)
            if outcome.nb is not nb:
                nb.clear()
                nb.update(outcome.nb)
            if outcome.error:
                results.errors.append(
                    HookErrorRecord(
                        point=point,
                        overlay=overlay.name,
                        error_type=outcome.error_type or "error",
                        message=outcome.error,
                    )
                )
                continue
            if is_r1:
                assert r1 is not None
                effects, failed = r1_outcome(overlay, point, outcome.value, data, r1)
                results.errors += [
                    HookErrorRecord(point=point, overlay=overlay.name, error_type="runtime_error", message=m)
                    for m in failed
                ]
            else:
                try:
                    effect = parse_effect(point, outcome.value, overlay=overlay.name)
                except EffectError as exc:
                    results.errors.append(
                        HookErrorRecord(
                            point=point,
                            overlay=overlay.name,
                            error_type="invalid_effect",
                            message=exc.message,
                        )
                    )
                    continue
                effects = [] if effect is None else [effect]
            for effect in effects:
                results.effects.append(effect)
                if point == "before_action" and effect.kind in ("rewrite", "force", "block"):
                    if effect.kind == "block":
                        return results
                    rewritten = effect.action or ""
                    ctx = None if ctx is None else _with_action(ctx, rewritten)
                    current = effect.action
        return results

    def _honoured(self, effect: Effect) -> str | None:
        """Why ``effect`` is dropped, or None when it applies."""
        if self.honoured is not None and effect.kind not in self.honoured:
            return f"{self.env.name} does not honour {effect.kind} effects"
        if effect.action is not None and self.admissible_only and effect.overlay not in self.r1_names:
            admissible = self.env.admissible_actions() or []
            if effect.action not in admissible:
                return "forced/rewritten action is not admissible"
        return None

    def _failed_start(
        self, task: Task, seed: int, episode_index: int, exc: Exception, started: float
    ) -> EpisodeRecord:
        """The record of an episode whose ``reset`` raised: no steps, ``termination="error"`` and an
        ``env error`` (an infrastructure error, rerun by ``--retry-errors``)."""
        env = self.env
        return EpisodeRecord(
            run_id=self.run_id,
            episode_index=episode_index,
            seed=seed,
            env=env.name,
            task_id=task.task_id,
            task_identity=task_identity(env.env_id, env.version, task, seed),
            task_type=task.task_type,
            instruction=task.instruction,
            initial_observation="",
            harness_id=self.harness.identity,
            policy_id=self.agent.policy_id,
            termination="error",
            error=f"env error: {type(exc).__name__} in reset: {exc}"[:1000],
            duration_s=time.perf_counter() - started,
        )

    async def run(self, task: Task, seed: int, episode_index: int = 0) -> EpisodeRecord:
        started = time.perf_counter()
        env, config = self.env, self.config
        max_steps = config.step_limit or env.default_max_steps
        env.max_steps = max_steps
        try:
            observation, info = await self.env_call(env.reset, seed=seed, options={"task": task})
        except Exception as exc:  # an env that cannot start: the episode is recorded with the error
            return self._failed_start(task, seed, episode_index, exc, started)
        record = EpisodeRecord(
            run_id=self.run_id,
            episode_index=episode_index,
            seed=seed,
            env=env.name,
            task_id=info["task_id"],
            task_identity=info["task_identity"],
            task_type=info.get("task_type", ""),
            instruction=info["instruction"],
            initial_observation=observation,
            harness_id=self.harness.identity,
            policy_id=self.agent.policy_id,
        )
        policy = self.agent.start_episode(env, config.protocol)
        tools = tuple(env.tools()) if config.protocol == "tools" else ()
        tool_names = ", ".join(t["function"]["name"] for t in tools) if tools else ""
        convo = Conversation(
            config,
            config.system_prompt.format(
                tool_names=tool_names, max_steps=max_steps, instruction=info["instruction"], observation=""
            ),
            head=[
                Message(
                    role="user",
                    content=config.first_user_template.format(
                        observation=observation,
                        instruction=info["instruction"],
                        tool_names=tool_names,
                        max_steps=max_steps,
                    ),
                )
            ],
        )
        notebooks: list[dict[str, Any]] = [{} for _ in self.harness.overlays]
        counters = Counters(last_observation=observation)
        history: list[dict[str, Any]] = []
        last_reward = 0.0
        forced: str | None = None

        admissible = info.get("admissible_actions")
        complete = reply_complete(config.protocol, env)  # where a reply's action ends (end_at_action)
        cache: dict[str, Any] = {}
        adapter = make_adapter(env, max_steps) if self.r1_names else None
        if adapter is not None:
            adapter.reset(observation, info)

        def r1call(point: str, step_index: int, proposal: Proposal | None = None) -> R1Call | None:
            if adapter is None:
                return None
            hook = OFFICIAL[point]
            scheduled = proposal.final or proposal.action if proposal is not None else None
            return R1Call(adapter, hook, step_index, proposal) if adapter.fires(hook, scheduled) else None

        def ctx_now(proposed: dict[str, Any] | None = None) -> ReadOnlyView:
            # one ctx build per state: after_feedback(t) and before_decision/before_action(t+1) share it
            key = (env.steps, counters.format_errors, counters.blocked_count, counters.hook_errors)
            if cache.get("key") != key:
                cache["key"] = key
                cache["data"] = build_ctx_data(
                    env,
                    observation=observation,
                    step=env.steps,
                    max_steps=max_steps,
                    counters=counters,
                    history=history,
                    admissible=admissible,
                    last_reward=last_reward,
                )
            data = cache["data"]
            return ReadOnlyView(data if proposed is None else data | {"action": proposed})

        init = (
            await self._call_hooks("on_init", ctx_now, notebooks, r1call("on_init", 0))
            if self.harness.overlays
            else _HookResults()
        )
        init_effects = [e for e in init.effects if not self._honoured(e)]
        tools = apply_init(init_effects, convo, tools, adapter, self.r1_names)
        pending_effects = [e.to_dict() for e in init_effects]
        pending_errors = list(init.errors)

        for decision in range(max_steps):
            step_started = time.perf_counter()
            step = StepRecord(index=decision, effects=pending_effects, hook_errors=pending_errors)
            pending_effects, pending_errors = [], []
            action: str | None = None
            agent: Proposal | None = None
            action_notes: list[str] = []
            tool_call = None
            assistant: Message | None = None
            if forced is not None and not self.r1_names:
                step.source, action, forced = "hook", forced, None
                step.flags.append("forced")
                assistant = Message(role="assistant", content=f"Action: {action}")
            else:
                if self.harness.overlays:
                    pre = await self._call_hooks(
                        "before_decision", ctx_now, notebooks, r1call("before_decision", decision)
                    )
                    step.hook_errors.extend(pre.errors)
                    for effect in pre.effects:
                        step.effects.append(effect.to_dict())
                        convo.add_pending_user_note(f"[Harness] {effect.text}")
                messages = convo.messages()
                step.context_digest = context_digest(messages)
                request = ChatRequest(
                    messages=messages,
                    tools=tools,
                    sampling=config.sampling,
                    seed=request_seed(seed, decision),
                    metadata={"episode": episode_index},
                    complete=complete,
                )
                try:
                    response = await policy.complete(request)
                except Exception as exc:  # the policy failing is data, not a crash
                    response = ChatResponse(error=f"{type(exc).__name__}: {exc}"[:1000])
                step.output = PolicyOutput(
                    text=response.text,
                    tool_calls=list(response.tool_calls),
                    error=response.error,
                    completion_token_ids=_opt_list(response.completion_token_ids),
                    logprobs=_opt_list(response.logprobs),
                    attempts=response.attempts,
                    retry_waits_s=list(response.retry_waits_s),
                    retry_errors=list(response.retry_errors),
                    replayed=response.replayed,
                    prompt_tokens=response.prompt_tokens or _opt_len(response.prompt_token_ids),
                )
                assistant = Message(role="assistant", content=response.text, tool_calls=response.tool_calls)
                if response.error:
                    step.flags.append("policy_error")
                    record.error = f"policy error: {response.error}"
                    record.termination = "error"
                    record.steps.append(step)
                    break
                parsed = parse_action(config.protocol, response, env)
                tool_call = parsed.tool_call
                repair = (
                    await repair_unparsed(
                        self._call_hooks, self._honoured, ctx_now, notebooks, response, tool_call
                    )
                    if parsed.action is None and self.harness.overlays
                    else None
                )
                if repair is not None:  # a hook repaired (or blocked) a reply that yields no action
                    step.parse_error = parsed.error
                    step.hook_errors.extend(repair.errors)
                    step.effects.extend(repair.effects)
                    step.dropped_effects.extend(repair.dropped)
                if parsed.action is None and (repair is None or repair.action is None):
                    message = config.format_error_message if repair is None else repair.blocked or ""
                    step.parse_error = parsed.error
                    step.flags.append("format_error")
                    counters.on_format_error()
                    if repair is not None:
                        counters.blocked_count += 1
                        step.flags.append("blocked")
                    if adapter is not None:
                        adapter.no_action(message)
                    convo.add_turn(assistant, feedback_message(config, message, tool_call, None, []))
                    step.observation = message
                    step.duration_s = time.perf_counter() - step_started
                    record.steps.append(step)
                    continue
                if repair is not None and repair.action is not None:
                    action = repair.action
                    step.flags.extend(repair.flags)
                    action_notes.extend(repair.notes)
                else:
                    step.parsed_action = action = parsed.action
                assert action is not None
                if adapter is not None:
                    adapter.acted(action)
                if forced is not None:  # r1 rule: a pending force replaces the next proposed action
                    step.source, action, forced = "hook", forced, None
                    step.flags.append("forced")
                agent = Proposal.of(parsed.action or action, tool_call, action)
                if self.harness.overlays and repair is None:
                    tool_name = tool_call.name if tool_call else None

                    def proposed_ctx(
                        action: str = action, raw: str = response.text[:2000], tool: str | None = tool_name
                    ) -> ReadOnlyView:
                        proposed = {"text": action, "raw": raw, "tool": tool}
                        proposed.update(getattr(env, "action_fields", lambda a: {})(action))
                        return ctx_now(proposed)

                    pre_act = await self._call_hooks(
                        "before_action",
                        proposed_ctx,
                        notebooks,
                        r1call("before_action", decision, agent),
                    )
                    step.hook_errors.extend(pre_act.errors)
                    blocked = None
                    for effect in pre_act.effects:
                        why = self._honoured(effect)
                        if why:
                            step.dropped_effects.append(effect.to_dict() | {"reason": why})
                            continue
                        step.effects.append(effect.to_dict())
                        if effect.kind == "block":
                            blocked = effect.text
                            break
                        action = effect.action
                        if effect.text:
                            action_notes.append(f"[Harness] {effect.text}")
                        step.flags.append("rewritten" if effect.kind == "rewrite" else "forced")
                    if blocked is not None:
                        counters.blocked_count += 1
                        step.flags.append("blocked")
                        step.action = None
                        step.observation = blocked
                        convo.add_turn(assistant, feedback_message(config, blocked, tool_call, None, []))
                        step.duration_s = time.perf_counter() - step_started
                        record.steps.append(step)
                        continue
            assert action is not None
            step.action = action
            try:
                observation, reward, terminated, truncated, info = await self.env_call(env.step, action)
            except Exception as exc:  # an env that raises ends the episode; the error is recorded
                step.flags.append("env_error")
                record.error = f"env error: {type(exc).__name__}: {exc}"[:1000]
                record.termination = "error"
                record.steps.append(step)
                break
            admissible = info.get("admissible_actions")
            step.observation, step.reward = observation, float(reward)
            step.terminated, step.truncated = bool(terminated), bool(truncated)
            if info.get("invalid_action"):
                step.flags.append("invalid_action")
            counters.on_executed(action, observation, bool(info.get("invalid_action")))
            if counters.repeated_action:
                step.flags.append("repeated_action")
            record.total_reward += float(reward)
            last_reward = float(reward)
            history.append({"action": action, "observation": observation[:300], "reward": float(reward)})
            notes: list[str] = action_notes
            done = terminated or truncated
            if adapter is not None:
                adapter.executed(action, observation, info)
            if self.harness.overlays and (not done or adapter is not None):
                executed = (agent or Proposal(action, action)).scheduled(action)
                post = await self._call_hooks(
                    "after_feedback",
                    ctx_now,
                    notebooks,
                    r1call("after_feedback", decision, executed),
                    native=not done,
                )
                step.hook_errors.extend(post.errors)
                for effect in post.effects:
                    why = self._honoured(effect) or (
                        "the episode ended"
                        if done
                        else "only the first force applies"
                        if effect.kind == "force" and forced is not None
                        else None
                    )
                    if why:
                        step.dropped_effects.append(effect.to_dict() | {"reason": why})
                        continue
                    step.effects.append(effect.to_dict())
                    if effect.kind == "hint":
                        notes.append(f"[Harness] {effect.text}")
                    else:
                        forced = effect.action
                        if effect.text:
                            notes.append(f"[Harness] {effect.text}")
            convo.add_turn(
                assistant,
                feedback_message(
                    config, observation, tool_call, None if done else info.get("admissible_actions"), notes
                ),
            )
            counters.hook_errors += len(step.hook_errors)
            step.duration_s = time.perf_counter() - step_started
            record.steps.append(step)
            if done:
                break

        record.success = bool(env.last_success)
        record.score = float(env.last_score)
        record.num_steps = len(record.steps)
        if record.termination != "error":
            last = record.steps[-1] if record.steps else None
            if record.success:
                record.termination = "success"
            elif last is not None and last.terminated:
                record.termination = "terminated"
            else:
                record.termination = "step_limit"
        record.duration_s = time.perf_counter() - started
        return record


def _with_action(ctx: ReadOnlyView, action: str) -> ReadOnlyView:
    previous = thaw(ctx["action"]) or {}
    return ReadOnlyView({k: ctx._data[k] for k in ctx} | {"action": previous | {"text": action}})


def _opt_list(value: Any) -> list[Any] | None:
    return None if value is None else list(value)


def _opt_len(value: Any) -> int | None:
    return None if value is None else len(value)

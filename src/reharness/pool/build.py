"""Hand-built pools: siblings named by the user instead of evolved (``reharness pool build``).

``pool evolve`` admits a sibling only when it rescues a valid task that the *greedy* policy fails in H0. That
is the right test for a deployed route, but it can leave a pool empty where rescue training still has room: on
db no repair lifts the tiny greedy agent, yet a sampled group of K rollouts under a hint-giving sibling may
succeed where H0's K failed. A researcher who knows which siblings to try names them here, one per
``--sibling DIRECTION=ITEMS``: ``ITEMS`` is ``op1+op2`` (repair operators, merged into one patch with their
defaults for the environment, as the operators engineer does) or the path of a patch file. The result is an
ordinary frozen pool (same format, same hashes, same loader) whose provenance says ``manual``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from reharness.core.errors import ConfigError
from reharness.patches.model import Patch, load_patch
from reharness.pool.directions import load_directions, select_directions
from reharness.pool.pool import PolicyRef, Pool
from reharness.pool.sibling import Provenance, Sibling
from reharness.runtime.harness import HarnessConfig, base_harness_config

_SPEC_HINT = "write --sibling DIRECTION=OPERATOR[+OPERATOR…] or --sibling DIRECTION=PATCH_FILE"


def parse_sibling_spec(spec: str) -> tuple[str, str]:
    """``'error_feedback=sql_error_hint'`` → ``('error_feedback', 'sql_error_hint')``."""
    direction, sep, items = spec.partition("=")
    if not sep or not direction.strip() or not items.strip():
        raise ConfigError(f"--sibling {spec!r} is not DIRECTION=ITEMS", hint=_SPEC_HINT)
    return direction.strip(), items.strip()


def sibling_patch(items: str, env: str) -> Patch:
    """The patch ``items`` names for ``env``: a patch file, or operators joined by ``+``."""
    from reharness.engineer.operators.base import merge
    from reharness.engineer.operators.registry import get_operator

    path = Path(items)
    if path.is_file():
        return load_patch(path)
    if path.suffix.lower() in (".yaml", ".yml", ".json") or "/" in items:
        raise ConfigError(f"patch file {items!r} does not exist", hint=_SPEC_HINT)
    operators = [get_operator(name.strip(), env) for name in items.split("+")]
    wrong = [op.name for op in operators if not op.applies_to(env)]
    if wrong:
        raise ConfigError(
            f"operator(s) {wrong} do not apply to env {env!r}",
            hint="`reharness pool show` or the directions file lists the operators of each direction",
        )
    return merge([(op, {}) for op in operators], env)


def build_pool(
    env: str,
    specs: Sequence[str],
    policy: PolicyRef,
    directions: str | Path | None = None,
    h0: HarnessConfig | None = None,
) -> Pool:
    """A pool of the siblings ``specs`` name (see the module docstring), on ``h0`` (default: ``env``'s base
    harness): every sibling is H0 plus its patch."""
    from reharness.envs.registry import resolve_env_name

    env = resolve_env_name(env).name
    if not specs:
        raise ConfigError("pool build needs at least one --sibling", hint=_SPEC_HINT)
    known = load_directions(directions)
    h0 = h0 or base_harness_config(env)
    siblings: list[Sibling] = []
    for number, spec in enumerate(specs, start=1):
        name, items = parse_sibling_spec(spec)
        (direction,) = select_directions(known, [name])
        patch = sibling_patch(items, env)
        sibling = Sibling(
            name=f"{direction.name}-m{number}",
            direction=direction.name,
            base=h0,
            patches=[patch],
            description=patch.description or items,
            provenance=Provenance(engineer="manual"),
            evidence={"spec": spec},
        )
        if any(s.id == sibling.id for s in siblings):
            raise ConfigError(f"--sibling {spec!r} repeats an earlier sibling", hint="name each sibling once")
        siblings.append(sibling)
    return Pool(env, h0, siblings, policy, known, meta={"build": {"siblings": list(specs)}})

"""``reharness patch check`` and ``reharness patch try``: validate a patch, run one hook in the sandbox.

Both commands are contracts checked from outside: ``check`` prints
``{valid, errors: [{code, line, col, message}], hooks: [...]}`` and exits 0 when valid, 1 when not;
``try`` prints ``{ok, effect, nb, error: {type, message}}`` and the host exits normally whatever the patch
does (exit 0 when the call succeeded, 1 when it did not).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, cast

import typer

from reharness.cli.common import Isolation, friendly_errors, input_file, positive, stdout
from reharness.core.errors import ConfigError

patch_app = typer.Typer(help="Validate patches and run their hooks in the sandbox.", no_args_is_help=True)
_DIALECT_HELP = "Read the file as reharness or r1 (Harness-R1's ctx and rules); default: from the file."


def _read_json(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{what} file {str(path)!r} does not exist") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{what} file {path} is not valid JSON: {exc}", hint="pass a JSON object") from exc


@patch_app.command("check")
@friendly_errors
def check(
    file: Annotated[
        Path, typer.Argument(help="A reharness-patch-v1 or harness-r1-patch-v1 file (JSON/YAML).")
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as one JSON object.")] = False,
    dialect: Annotated[str | None, typer.Option(help=_DIALECT_HELP)] = None,
) -> None:
    """Statically validate a patch (format, AST allow-list, shape, leakage); exit 1 when invalid.

    An r1-dialect patch is checked by Harness-R1's own validator rules.
    """
    from reharness.patches.errors import PatchFormatError, PatchValidationError
    from reharness.patches.model import load_patch
    from reharness.patches.validate import validate_patch

    hooks: list[str] = []
    try:
        patch = load_patch(file, dialect=dialect)
        hooks = sorted(patch.hooks)
        errors = validate_patch(patch)
    except PatchFormatError as exc:
        errors = [PatchValidationError(exc.code, exc.message)]
    result = {"valid": not errors, "errors": [_error_dict(e) for e in errors], "hooks": hooks}
    if as_json:
        print(json.dumps(result))
    else:
        stdout.print(
            f"{file}: {'valid' if result['valid'] else 'INVALID'}; hooks: {', '.join(hooks) or '-'}",
            highlight=False,
            markup=False,
        )
        for err in errors:
            stdout.print(
                f"  {err.hook or 'patch'}:{err.line}:{err.col} [{err.rule}] {err.message}",
                highlight=False,
                markup=False,
            )
    raise typer.Exit(0 if result["valid"] else 1)


def _error_dict(err: Any) -> dict[str, Any]:
    return {"code": err.rule, "line": err.line, "col": err.col, "message": err.message}


@patch_app.command("try")
@friendly_errors
def try_hook(
    file: Annotated[Path, typer.Argument(help="The patch file.")],
    hook: Annotated[str, typer.Option(help="Hook to call (reharness or Harness-R1 name).")],
    ctx: Annotated[
        Path, typer.Option(callback=input_file, help="JSON file with the ctx object passed to the hook.")
    ],
    nb: Annotated[
        Path | None, typer.Option(callback=input_file, help="JSON file with the notebook (default: {}).")
    ] = None,
    isolation: Annotated[
        Isolation,
        typer.Option(help="standard (best effort) or strict (refuse without seccomp and Landlock)."),
    ] = Isolation.standard,
    no_static_check: Annotated[bool, typer.Option("--no-static-check", help="Skip L1 validation.")] = False,
    timeout: Annotated[
        float,
        typer.Option(callback=positive, max=600.0, help="Wall-clock deadline of the call in seconds."),
    ] = 0.5,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as one JSON object.")] = False,
    dialect: Annotated[str | None, typer.Option(help=_DIALECT_HELP)] = None,
) -> None:
    """Run one hook call of a patch in the sandbox and print its effect, notebook and error.

    For an r1-dialect patch ``--ctx`` is Harness-R1's ctx and the effect is the official normalisation.
    """
    from reharness.patches.errors import PatchExecutionError, PatchFormatError
    from reharness.patches.model import load_patch
    from reharness.patches.sandbox.supervisor import HookWorker, SandboxLimits
    from reharness.patches.validate import validate_patch
    from reharness.runtime.effects import EffectError, canonical_hook_point, parse_effect

    point = canonical_hook_point(hook)
    ctx_data = _read_json(ctx, "--ctx")
    nb_data = _read_json(nb, "--nb") if nb else {}
    if not isinstance(ctx_data, dict) or not isinstance(nb_data, dict):
        raise ConfigError(
            "--ctx and --nb must each hold a JSON object",
            hint='write an object, e.g. {"step": 1, "observation": "..."} for --ctx and {} for --nb',
        )
    result: dict[str, Any] = {"ok": False, "effect": None, "nb": nb_data, "error": None}
    worker = None
    try:
        patch = load_patch(file, dialect=dialect)
        if point not in patch.hooks:
            raise ConfigError(
                f"the patch has no {point} hook", hint=f"it has: {', '.join(sorted(patch.hooks))}"
            )
        errors = [] if no_static_check else validate_patch(patch)
        if errors:
            first = errors[0]
            result["error"] = {
                "type": "validation",
                "message": f"{first.rule} at {first.line}:{first.col}: {first.message}",
            }
        else:
            limits = SandboxLimits(
                isolation=cast(Any, isolation.value), call_timeout_s=timeout, dialect=cast(Any, patch.dialect)
            )
            worker = HookWorker(dict(patch.hooks), limits)
            call = worker.call(point, ctx_data, nb_data)
            result["nb"] = call.nb
            if patch.dialect == "r1":
                from reharness.patches.sandbox.r1_dialect import split_blocks
                from reharness.runtime.r1.hooks import OFFICIAL
                from reharness.runtime.r1.normalise import normalise

                hook, admissible = OFFICIAL[point], ctx_data.get("admissible")
                if len(split_blocks(patch.hooks[point])) > 1:  # a repeated hook: one effect per block
                    blocks = call.value.get("r1_blocks", []) if isinstance(call.value, dict) else []
                    result["effect"] = [
                        normalise(hook, b.get("value"), admissible)
                        if b.get("ok")
                        else {"error": b.get("error")}
                        for b in blocks
                    ]
                else:
                    result["effect"] = normalise(hook, call.value, admissible)
            else:
                effect = parse_effect(point, call.value, overlay="try")
                result["effect"] = None if effect is None else effect.to_dict()
            result["ok"] = True
    except PatchFormatError as exc:
        result["error"] = {"type": "format", "message": exc.message}
    except PatchExecutionError as exc:
        result["error"] = {"type": exc.type, "message": exc.message}
    except EffectError as exc:
        result["error"] = {"type": "invalid_effect", "message": exc.message}
    finally:
        if worker is not None:
            worker.close()
    if as_json:
        print(json.dumps(result))
    else:
        stdout.print_json(json.dumps(result))
    raise typer.Exit(0 if result["ok"] else 1)


@patch_app.command("convert")
@friendly_errors
def convert(
    file: Annotated[Path, typer.Argument(help="The patch file (either format, either dialect).")],
    to: Annotated[str, typer.Option("--to", help="Target dialect: reharness or r1 (Harness-R1's own).")],
    out: Annotated[Path | None, typer.Option(help="Write here (.yaml/.yml: YAML) instead of stdout.")] = None,
    dialect: Annotated[str | None, typer.Option(help=_DIALECT_HELP)] = None,
) -> None:
    """Translate a patch between the reharness and r1 dialects where a faithful translation exists.

    ``--to r1`` writes an official harness-r1-patch-v1 document; ``--to reharness`` a reharness-patch-v1 one.
    What cannot be translated (ctx fields without an equivalent, imports, computed effect types) is named
    in the error.
    """
    from reharness.patches.model import load_patch
    from reharness.patches.r1.convert import convert_patch

    converted = convert_patch(load_patch(file, dialect=dialect), to)
    if to == "r1":
        text = json.dumps(converted.to_harness_r1(), indent=2, ensure_ascii=False) + "\n"
        if out is not None:
            out.write_text(text, encoding="utf-8")
    elif out is not None:
        converted.dump(out)
    else:
        text = converted.to_json()
    if out is None:
        print(text, end="")
    else:
        stdout.print(f"wrote {out} ({to} dialect; hooks: {', '.join(converted.hooks)})", highlight=False)

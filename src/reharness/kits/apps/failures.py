"""apps failure detectors: API, auth and code errors and collateral damage, read from observations
(:mod:`.evidence`)."""

from __future__ import annotations

from collections.abc import Iterator

from reharness.failures.codes import FailureCode
from reharness.failures.detectors import Finding
from reharness.failures.evidence import executed
from reharness.kits.apps import evidence
from reharness.store.records import EpisodeRecord


def detect(record: EpisodeRecord) -> Iterator[Finding]:
    done = [s for s in record.steps if executed(s)]
    auth = [s.index for s in done if evidence.is_auth_error(s.observation)]
    misuse = [s.index for s in done if evidence.is_api_misuse(s.observation)]
    code = [s.index for s in done if evidence.code_error(s.observation)]
    damage = [s.index for s in done if evidence.collateral_damage(s.observation)]
    yield Finding(
        FailureCode.AUTH_ERROR,
        tuple(auth),
        f"{len(auth)} step(s) with an API call rejected as unauthenticated (401)",
    )
    yield Finding(
        FailureCode.API_ERROR, tuple(misuse), f"{len(misuse)} step(s) with a misused API (404/409/422)"
    )
    yield Finding(FailureCode.CODE_ERROR, tuple(code), f"{len(code)} step(s) whose code raised or timed out")
    yield Finding(
        FailureCode.COLLATERAL_DAMAGE, tuple(damage), "the task changed data it was not asked to change"
    )

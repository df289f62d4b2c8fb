"""Secret redaction (``reharness.core.secrets``): what counts as a secret, and JSON stays JSON."""

from __future__ import annotations

import json

import pytest

from reharness.core.secrets import REDACTED, redact, redact_data, register_secret


def test_key_like_strings_bearer_tokens_and_url_passwords() -> None:
    text = (
        "bad key sk-proj-AbC123_xyz-7890; header Authorization: Bearer abc.DEF-123_456~xyz; "
        "url https://alice:hunter22@example.com/v1 and sk-short"
    )
    out = redact(text)
    assert "AbC123" not in out and "abc.DEF" not in out and "hunter22" not in out and "alice" not in out
    assert out.count(REDACTED) == 3 and "Bearer [REDACTED]" in out and "https://[REDACTED]@example.com" in out
    assert "sk-short" in out  # too short to be a key: ordinary words are left alone
    assert redact("no secrets in here: step 3, reward 1.0") == "no secrets in here: step 3, reward 1.0"


def test_configured_and_environment_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    from reharness.core import secrets

    monkeypatch.setattr(secrets, "_registered", set())  # the registered key must not leak into later tests
    monkeypatch.setenv("MY_SERVICE_API_KEY", "plain-value-0001")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_exampletoken")
    monkeypatch.setenv("TOKEN_PATH", "/home/me/token")  # a path to a token is not a secret
    monkeypatch.setenv("OTHER_SECRET", "short")  # under 8 characters: ignored
    register_secret('quo"te\\key-0002')
    text = "a plain-value-0001 b ghp_exampletoken c /home/me/token d short"
    assert redact(text) == f"a {REDACTED} b {REDACTED} c /home/me/token d short"
    encoded = json.dumps({"error": 'got quo"te\\key-0002 and plain-value-0001'})
    assert "key-0002" not in redact(encoded) and "plain-value" not in redact(encoded)
    assert json.loads(redact(encoded)) == {"error": f"got {REDACTED} and {REDACTED}"}  # still valid JSON


def test_redact_data_walks_containers_and_keeps_keys() -> None:
    data = {"sk-keys-are-not-values": ["x sk-0123456789abcdef", ("Bearer zzzzzzzzzzzz",)], "n": 3}
    assert redact_data(data) == {
        "sk-keys-are-not-values": [f"x {REDACTED}", (f"Bearer {REDACTED}",)],
        "n": 3,
    }

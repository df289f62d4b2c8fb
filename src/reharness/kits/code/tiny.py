"""The code tiny-agent recipe: replies are one tool command; an edit copies the buggy line and writes the
fixed one."""

from reharness.models.tiny.spec import TinySpec

TINY = TinySpec(recipes={"S": {"max_new_tokens": 160, "max_length": 3072, "steps": 500}})

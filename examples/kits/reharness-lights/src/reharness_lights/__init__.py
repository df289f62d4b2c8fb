"""reharness-lights: an example environment kit (see the package README)."""

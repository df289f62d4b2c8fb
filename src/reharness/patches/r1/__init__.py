"""Harness-R1 (``r1`` dialect) support in the patches layer: the official validator and conversion."""

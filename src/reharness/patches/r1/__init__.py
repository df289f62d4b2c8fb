"""Harness-R1 (``r1`` dialect) support in the patches layer: the official validator and conversion.

- :mod:`.validate`: Harness-R1's validator for ``r1``-dialect patches: accepts what it accepts, no more;
- :mod:`.convert`: ``reharness patch convert``: a patch translated between the two dialects.
"""

"""The ``r1`` dialect in the runtime: Harness-R1's official ``ctx`` and return rules (docs/r1-interop.md).

Hooks of an ``r1`` overlay run through the same sandbox and the same effect engine as reharness's own; only
the view differs. :mod:`.adapter` is the base of the per-benchmark ctx builders (each kit brings its own:
``EnvKit.r1_adapter``; :mod:`.factory` picks it), :mod:`.normalise` applies the official return-value
normalisation, :mod:`.hooks` connects both to the episode loop.
"""

from reharness.runtime.r1.adapter import Proposal, R1Adapter
from reharness.runtime.r1.factory import make_adapter
from reharness.runtime.r1.normalise import normalise

__all__ = ["Proposal", "R1Adapter", "make_adapter", "normalise"]

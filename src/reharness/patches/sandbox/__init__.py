"""The sandbox that runs untrusted hook code in a confined worker process (L2–L5)."""

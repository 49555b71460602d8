"""memtui: see, consolidate and safely change AI agents' long-term memory stores."""

import os

# numpy's BLAS on one thread unless the user says otherwise, set before numpy loads: memtui's
# matrices are one user's (a few hundred rows), where OpenBLAS's threads spin longer than they
# compute (a 100k-entry default plan: 22 s of CPU against 15), its parallelism is by user across
# processes (`--jobs`), and scores no longer depend on how many cores sum them.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

__version__ = "0.1.0"

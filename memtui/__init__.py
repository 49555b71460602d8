"""memtui: see, consolidate and safely change AI agents' long-term memory stores."""

import os

# numpy's BLAS on one thread unless the user says otherwise, set before numpy loads: memtui's
# matrices are one user's (a few hundred rows), where OpenBLAS's threads spin longer than they
# compute (a 100k-entry default plan: 27 s of CPU against 16), and its parallelism is by user
# across processes (`--jobs`).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

__version__ = "0.1.0"

"""loadlab: what does a concurrency runtime cost under load?

The package is organised as one module per stage of the data flow
(DESIGN.md): images -> container -> verify -> loadgen/sampler -> trial ->
raw run folders -> processed tables -> stats -> plots.
"""

__version__ = "0.1.0"

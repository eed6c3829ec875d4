"""MIB, the one name left of the old grab-bag: its functions moved to their stages (stats.conditions,
stats.power, stats.noise, judgements.evidence, judgements.capacity, judgements.profiler_overhead,
latency_curve.merged_latency, pages.summary, pages.overload). The units module takes MIB over."""

MIB = 1024**2  # bytes in a mebibyte

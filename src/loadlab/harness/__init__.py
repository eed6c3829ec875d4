"""Everything that talks to Docker: from images to a finished trial's raw files.

    engine -> images -> session (container) -> verify -> loadgen + sampler + capture -> trial -> runner

Nothing outside this subpackage (and the entry points `study`, `cli`) imports
the Docker SDK; the analysis side reads only the raw run folders it leaves
(docs/architecture.md).
"""

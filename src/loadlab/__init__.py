"""loadlab: what does a concurrency runtime cost under load?

The package follows the data flow (docs/architecture.md draws it and names
the owner of each stage): `loadlab.harness` (images -> container -> warm up
-> measure -> collect -> raw run folder; the only part that talks to
Docker), `loadlab.contract` (the server contract, verify, fuzz), then the
analysis, which never imports the harness: `loadlab.tables` (tidy tables) ->
`loadlab.stats` / `judgements` / `claims` -> `loadlab.plots` -> `loadlab.pages` -> notebooks ->
`loadlab.report` (HTML).
"""

__version__ = "0.1.0"

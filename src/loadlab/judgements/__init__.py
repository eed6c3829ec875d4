"""Verdicts: the rule (`rule`), the evidence policy (`evidence`), the A/A noise margins (`margins`), and one
module per source (`s1` ... `s5`) whose functions judge that source's claims on a run's tables.

Notebooks call these functions (``from loadlab.judgements import s1``) and show their records; no verdict
logic lives in a notebook cell. The source modules are not imported here: they build on `loadlab.claims`,
which itself takes the verdict names from `rule`.
"""

from loadlab.judgements.rule import RULE_TEXT, RULE_VERSION, Family, judge_ratio

__all__ = ["RULE_TEXT", "RULE_VERSION", "Family", "judge_ratio"]

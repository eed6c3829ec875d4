"""Verdicts: the rule (`rule`), the evidence policy (`evidence`), the A/A noise margins (`margins`), the verdict
records and their files (`verdicts`), and one module per source (`s1` ... `s5`) whose functions judge that
source's claims (`loadlab.claims`) on a run's tables.

Notebooks call these functions (``from loadlab.judgements import s1``), show their records and save them
(`save_verdicts`); no verdict logic lives in a notebook cell. The source modules are not imported here, so that
importing the rule does not import every judgement.
"""

from loadlab.judgements.rule import RULE_TEXT, RULE_VERSION, Family, judge_ratio
from loadlab.judgements.verdicts import Verdict, load_verdicts, save_verdicts

__all__ = ["RULE_TEXT", "RULE_VERSION", "Family", "Verdict", "judge_ratio", "load_verdicts", "save_verdicts"]

"""Bad-input cases of the stats-ci area: interval options and intervals that cannot be had."""

from __future__ import annotations

from tests.bad_inputs.cases import Case, policy

#: group M has exactly one actual positive (its TPR rests on one row), group F many
_ONE_POSITIVE = (
    "y_true,y_pred,sex\n" + "1,1,F\n0,0,F\n1,0,F\n0,1,F\n" * 40 + "1,1,M\n" + "0,0,M\n0,1,M\n" * 60
)

CASES: list[Case] = [
    Case(
        "stats-ci-resample-not-a-choice",
        ("resample 'bootstrap' is not allowed", "stratified, rows"),
        policy=policy(ci='"200"', resample="bootstrap"),
        file="policy.yaml",
        control="c1",
        key="resample",
    ),
    Case(
        "stats-ci-resample-flag-not-a-choice",
        ("--resample", "invalid choice: 'bogus'"),
        args=("--resample", "bogus"),
    ),
    Case(
        "stats-ci-rate-on-one-row",
        ("INCONCLUSIVE", "'M' has no value in", "about 1 of its rows"),
        policy=policy(
            metric_key="equal_opportunity_diff",
            ci='"300"',
            decision="ci_upper",
            min_samples='"1"',
            threshold='"0.9"',
        ),
        data=_ONE_POSITIVE,
        code=1,
        report=True,
        note="documented: a group's TPR resting on one actual positive is undefined in ~37 % "
        "of resamples, so there is no interval (the reason names the group and its count) "
        "and ci_upper is inconclusive, which fails the gate by default",
    ),
    Case(
        "stats-ci-rows-resample-passes-end-to-end",
        ("PASS",),
        policy=policy(ci='"200"', resample="rows", decision="ci_upper", threshold='"0.9"'),
        code=0,
        report=True,
        note="documented: resample: rows is a valid choice; a clear pass stays a pass",
    ),
]

"""Bad-input rows of the policy area: loose numbers, vacuous thresholds, and OSCAL profile
constructs that must be resolved exactly or refused (never ignored, never last-one-wins)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.bad_inputs.cases import DEFAULT_DATA, Case, policy

NS = "https://fairpolicy.example.org/ns/oscal"


def control(cid: str, param: str = "0.2", extra: str = "") -> str:
    """One catalog control (YAML, inside ``controls:``) on the default data's columns."""
    props = {
        "metric_key": "demographic_parity_diff",
        "operator": "'<'",
        "input.target": "y_true",
        "input.prediction": "y_pred",
        "input.dimension": "sex",
    }
    lines = [f"    - id: {cid}", f"      title: control {cid}", "      params:"]
    lines += [f"        - {{id: {cid}_prm_threshold, values: ['{param}']}}", "      props:"]
    lines += [f"        - {{name: {k}, ns: '{NS}', value: {v}}}" for k, v in props.items()]
    return "\n".join(lines) + "\n" + extra


def catalog(*controls: str) -> str:
    return "catalog:\n  controls:\n" + "".join(controls)


def beside(name: str, text: str) -> Callable[[Path], Path]:
    """Data for a case whose policy imports ``name``: writes it next to the data."""

    def write(tmp: Path) -> Path:
        (tmp / name).write_text(text)
        data = tmp / "data.csv"
        data.write_text(DEFAULT_DATA)
        return data

    return write


TWO = catalog(control("c-1"), control("c-2"))

CASES: list[Case] = [
    Case(
        "policy-threshold-underscore",
        ("threshold '0_10' is not a number", "plain decimal number"),
        policy=policy(threshold="0_10"),
        file="policy.yaml",
        control="c1",
        key="threshold",
    ),
    Case(
        "policy-threshold-quoted-underscore",
        ("threshold '0_10' is not a number",),
        policy=policy(threshold='"0_10"'),
        file="policy.yaml",
        control="c1",
        key="threshold",
    ),
    Case(
        "policy-threshold-unicode-digits",
        ("is not a number", "ASCII digits only"),
        policy=policy(threshold='"\u0660.\u0661"'),
        file="policy.yaml",
        control="c1",
        key="threshold",
    ),
    Case(
        "policy-threshold-sexagesimal",
        ("threshold '1:30' is not a number",),
        policy=policy(threshold="1:30"),
        file="policy.yaml",
        control="c1",
        key="threshold",
    ),
    Case(
        "policy-between-bound-hex",
        ("threshold '0x1' is not a number",),
        policy=policy(
            metric_key="demographic_parity_ratio", operator="between", threshold='"0.8,0x1"'
        ),
        file="policy.yaml",
        control="c1",
        key="threshold",
    ),
    Case(
        "policy-min-samples-underscore",
        ("min_samples '1_0' is not a whole number",),
        policy=policy(min_samples='"1_0"'),
        file="policy.yaml",
        control="c1",
        key="min_samples",
    ),
    Case(
        "policy-ci-level-unicode",
        ("ci_level", "is not a number"),
        policy=policy(ci_level='"0.\u0669\u0665"'),
        file="policy.yaml",
        control="c1",
        key="ci_level",
    ),
    Case(
        "policy-cli-bootstrap-underscore",
        ("invalid int value: '1_000'",),
        args=("--bootstrap", "1_000"),
        output=False,
    ),
    Case(
        "policy-cli-ci-level-unicode",
        ("invalid float value",),
        args=("--ci-level", "0.\u0669\u0665"),
        output=False,
    ),
    Case(
        "policy-gap-threshold-above-range",
        ("can never fail", "takes values in [0, 1]"),
        policy=policy(threshold='"1.5"'),
        file="policy.yaml",
        control="c1",
        key="threshold",
    ),
    Case(
        "policy-threshold-below-every-double-is-named-as-written",
        ("'>= -1e-400' can never fail", "takes values in [0, 1]"),
        policy=policy(operator="'>='", threshold='"-1e-400"'),
        file="policy.yaml",
        control="c1",
        key="threshold",
        note="issue 26: the message shows the threshold written, not its double ('>= 0')",
    ),
    Case(
        "policy-threshold-exponent-too-far",
        ("threshold '1e-99999999' has an exponent beyond ±1000", "nearer to 0"),
        policy=policy(operator="'>='", threshold='"1e-99999999"'),
        file="policy.yaml",
        control="c1",
        key="threshold",
        subprocess=True,
        note="issue 26: a threshold is decided on its exact decimal, and this short text is "
        "a 10^8-digit number: refused before it is built (no metric value lies nearer to 0 "
        "than about 1e-650)",
    ),
    Case(
        "policy-threshold-tiny-positive-is-a-real-threshold",
        (">=  1e-400", "PASS"),
        policy=policy(operator="'>='", threshold='"1e-400"'),
        code=0,
        report=True,
        subprocess=True,
        note="issue 26: 1e-400 is a positive threshold decided exactly (no double holds it; "
        "it is not read as 0), so a gap of exactly 0 would fail it",
    ),
    Case(
        "policy-threshold-longer-than-a-double",
        ("violates <= 0.09999999999999999999",),
        policy=policy(operator="'<='", threshold='"0.09999999999999999999"', min_samples='"1"'),
        data="y_true,y_pred,sex\n"
        + "".join(f"{i % 2},{int(i < 5)},F\n" for i in range(10))
        + "".join(f"{i % 2},{int(i < 4)},M\n" for i in range(10)),
        code=1,
        report=True,
        note="issue 26: a gap of exactly 1/10 is above the decimal written (the double "
        "nearest to it is 0.1, which passed); the report prints the threshold as written",
    ),
    Case(
        "policy-ratio-ge-above-one",
        ("'>= 1.2' can never pass", "takes values in [0, 1]"),
        policy=policy(metric_key="demographic_parity_ratio", operator="'>='", threshold='"1.2"'),
        file="policy.yaml",
        control="c1",
        key="threshold",
    ),
    Case(
        "policy-profile-imports-a-control-twice",
        ("control 'c-1' is imported twice", "imports[0] (href 'catalog.yaml')", "imports[1]"),
        policy="profile:\n  imports:\n    - {href: catalog.yaml, include-all: {}}\n"
        "    - {href: catalog.yaml, include-controls: [{with-ids: [c-1]}]}\n",
        data=beside("catalog.yaml", TWO),
        file="policy.yaml",
        control="c-1",
        key="imports",
    ),
    Case(
        "policy-profile-sets-a-param-twice",
        ("param 'c-1_prm_threshold' is set twice", "set-parameters[0]", "set-parameters[1]"),
        policy="profile:\n  imports: [{href: catalog.yaml, include-all: {}}]\n  modify:\n"
        "    set-parameters:\n      - {param-id: c-1_prm_threshold, values: ['0.1']}\n"
        "      - {param-id: c-1_prm_threshold, values: ['0.3']}\n",
        data=beside("catalog.yaml", TWO),
        file="policy.yaml",
        key="set-parameters",
    ),
    Case(
        "policy-catalog-duplicate-control-id",
        ("control id 'c-1' is defined twice", "catalog.controls[0] (line", "catalog.controls[1]"),
        policy=catalog(control("c-1"), control("c-1", "0.1")),
        file="policy.yaml",
        control="c-1",
    ),
    Case(
        "policy-profile-custom-merge",
        ("merge has 'custom', which fairpolicy does not resolve",),
        policy="profile:\n  imports: [{href: catalog.yaml, include-all: {}}]\n"
        "  merge: {custom: {groups: []}}\n",
        data=beside("catalog.yaml", TWO),
        file="policy.yaml",
        key="custom",
    ),
    Case(
        "policy-profile-alter-adds-a-title",
        ("modify.alters[0].adds[0] has 'title', which fairpolicy does not resolve",),
        policy="profile:\n  imports: [{href: catalog.yaml, include-all: {}}]\n  modify:\n"
        "    alters: [{control-id: c-1, adds: [{title: new}]}]\n",
        data=beside("catalog.yaml", TWO),
        file="policy.yaml",
        control="c-1",
        key="title",
    ),
    Case(
        "policy-profile-alter-adds-enforcement-twice",
        ("adds prop 'enforcement_mode', which control 'c-1' already has", "catalog.yaml"),
        policy="profile:\n  imports: [{href: catalog.yaml, include-all: {}}]\n  modify:\n"
        "    alters: [{control-id: c-1, adds: [{props: [{name: enforcement_mode, value: "
        "block}]}]}]\n",
        data=beside(
            "catalog.yaml",
            catalog(
                control("c-1", extra="").replace(
                    "      props:\n",
                    "      props:\n        - {name: enforcement_mode, value: warn}\n",
                )
            ),
        ),
        file="policy.yaml",
        control="c-1",
        key="enforcement_mode",
    ),
    Case(
        "policy-profile-matching-nothing",
        ("matching pattern 'x-*' matches no control",),
        policy="profile:\n  imports:\n    - href: catalog.yaml\n"
        "      include-controls: [{matching: [{pattern: x-*}]}]\n",
        data=beside("catalog.yaml", TWO),
        file="policy.yaml",
        key="matching",
    ),
    Case(
        "policy-component-definition-loosens-profile",
        ("may not loosen its profile's threshold", "profile.yaml, modify.set-parameters[0]"),
        policy="component-definition:\n  components:\n    - control-implementations:\n"
        "        - source: profile.yaml\n          implemented-requirements:\n"
        "            - control-id: c-1\n              set-parameters:\n"
        "                - {param-id: c-1_prm_threshold, values: ['0.4']}\n",
        data=lambda tmp: (
            (tmp / "catalog.yaml").write_text(TWO),
            beside(
                "profile.yaml",
                "profile:\n  imports: [{href: catalog.yaml, include-controls: [{with-ids: "
                "[c-1]}]}]\n  modify:\n    set-parameters:\n"
                "      - {param-id: c-1_prm_threshold, values: ['0.1']}\n",
            )(tmp),
        )[1],
        file="policy.yaml",
        control="c-1",
    ),
    Case(
        "policy-threshold-prop-stricter-than-param",
        ("the threshold prop '< 0.05'", "is stricter than param 'c-1_prm_threshold'"),
        policy=catalog(
            control("c-1").replace(
                "      props:\n", "      props:\n        - {name: threshold, value: '0.05'}\n"
            )
        ),
        file="policy.yaml",
        control="c-1",
        key="threshold",
    ),
]

"""Small builders shared by tests: policies and CSVs written to a temp dir."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from fairpolicy.policy.dialect import DIFFERING

FIXTURES = Path(__file__).resolve().parent / "reference"


def control(
    cid: str = "c1",
    metric: str = "demographic_parity_diff",
    threshold: str = "0.2",
    operator: str = "<",
    target: str = "y_true",
    prediction: str = "y_pred",
    dimension: str = "sex",
    **props: Any,
) -> dict[str, Any]:
    base = {
        "metric_key": metric,
        "threshold": threshold,
        "operator": operator,
        "input.target": target,
        "input.prediction": prediction,
        "input.dimension": dimension,
    }
    base.update({k.replace("__", "."): v for k, v in props.items()})
    if metric in DIFFERING and "dialect" not in base:  # fairpolicy's meaning, said
        base["dialect"] = "fairpolicy"
    return {
        "control-id": cid,
        "description": f"{metric} control",
        "props": [{"name": k, "value": str(v)} for k, v in base.items() if v is not None],
    }


def write_policy(tmp: Path, *controls: dict[str, Any], name: str = "policy.yaml") -> Path:
    path = tmp / name
    path.write_text(yaml.safe_dump(list(controls), sort_keys=False))
    return path


def write_csv(tmp: Path, text: str, name: str = "data.csv") -> Path:
    path = tmp / name
    path.write_text(text)
    return path


def balanced_csv(tmp: Path, n_per_group: int = 40, name: str = "data.csv") -> Path:
    """Two groups, binary labels, a known DP gap of exactly 0.25."""
    rows = ["y_true,y_pred,sex"]
    for g, pos_rate in (("F", 0.25), ("M", 0.5)):
        k = int(n_per_group * pos_rate)
        for i in range(n_per_group):
            rows.append(f"{i % 2},{1 if i < k else 0},{g}")
    return write_csv(tmp, "\n".join(rows) + "\n", name)

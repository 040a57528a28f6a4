"""Which registry keys can raise a ``sequential`` window alarm (issue 30, item 2).

Every key of the metric registry is run through a 3-window ``sequential`` check (the
default gate: 1000 resamples for a control without ``ci``) on a strongly violating data set
generated here: two groups of N rows per weekly window, group A far more accurate and more
often selected than B; binary and 3-class labels and scores; unweighted and with survey
weights U[0.5, 2]. The threshold is set from the observed value (0.3× it for a
lower-is-better metric, above it for a higher-is-better one). Prints one Markdown row per
(key, data kind): the window interval's method, ``details.alarm_interval.used`` per window
(None: the window cannot alarm) and the first reason. Whether it *did* alarm is power;
"can alarm" is ``used`` set.

    nice -n 10 python benchmarks/window_alarm_survey.py [N] [KEY ...]   # N = 800
"""

from __future__ import annotations

import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from fairpolicy.metrics.direction import resolve
from fairpolicy.metrics.registry import REGISTRY
from fairpolicy.policy.dialect import DIFFERING
from fairpolicy.runner import check

#: the column each role binds to (as tests/metrics/test_registry_common.py)
ROLE_COLUMNS = {
    "target": "y_true",
    "prediction": "y_pred",
    "dimension": "grp",
    "score": "y_score",
    "rank": "rank",
    "site": "site",
    "columns": "grp",
    "fields": "grp",
    "sensitive_columns": "site",
}
WEEKS = ("2024-01-01", "2024-01-08", "2024-01-15")


def data(k: int, n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frames = []
    for week in WEEKS:
        t0 = pd.Timestamp(week, tz="UTC")
        for g, acc, pos in (("A", 0.97, 0.85), ("B", 0.45, 0.1)):
            y_t = rng.integers(0, k, n)
            logits = rng.normal(size=(n, k)) + 6 * acc * np.eye(k)[y_t]
            logits[:, 1 % k] += 4 * (pos - 0.5)
            prob = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
            f = pd.DataFrame(
                {
                    "y_true": y_t,
                    "y_pred": prob.argmax(axis=1),
                    "grp": g,
                    "ts": t0 + pd.to_timedelta(rng.integers(0, 7 * 86400, n), unit="s"),
                }
            )
            if k == 2:
                f["y_score"] = prob[:, 1].round(3)
            else:
                for j in range(k):
                    f[f"y_score_{j}"] = prob[:, j]
            f["site"] = rng.choice(["S1", "S2"], n)
            f["w"] = rng.uniform(0.5, 2.0, n)
            frames.append(f)
    return pd.concat(frames, ignore_index=True)


def kinds(key: str) -> list[str]:
    spec = REGISTRY[key]
    if spec.kind != "classification":
        return [spec.kind]
    return ["binary", "multiclass"] if "multiclass" in spec.tasks else ["binary"]


def main(argv: list[str]) -> int:
    n = int(argv[0]) if argv else 800
    keys = argv[1:] or sorted(REGISTRY)
    frames = {"binary": data(2, n, 1), "multiclass": data(3, n, 2)}
    print("| key | data | value, threshold, gate | window method | used (per window) | reason |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        pol = Path(tmp) / "p.yaml"
        for key in keys:
            spec = REGISTRY[key]
            if spec.kind in ("regression", "ranking"):
                print(f"| {key} | {spec.kind} | not supported with windows (exit 2) | | | |")
                continue
            for kind in kinds(key):
                for survey in (False, True):
                    print(row(key, kind, survey, frames, pol), flush=True)
    return 0


def row(key: str, kind: str, survey: bool, frames: dict[str, pd.DataFrame], pol: Path) -> str:
    spec = REGISTRY[key]
    roles = [*spec.inputs, *spec.one_of[:1], *(r for r in spec.optional if r == "dimension")]
    lo, hi = spec.value_range
    first = (lo + hi) / 2 if hi < float("inf") and lo > float("-inf") else 0.5
    props: dict[str, str] = {"metric_key": key, "operator": "<", "threshold": f"{first:g}"}
    if key in DIFFERING:
        props["dialect"] = "fairpolicy"
    for r in roles:
        props[f"input.{r}"] = ROLE_COLUMNS[r]
    if survey:
        props["input.weight"], props["weight_kind"] = "w", "survey"
    df = frames.get(kind, frames["binary"])
    label = kind + (" + survey" if survey else "")

    def run(window: str | None = None) -> object:
        pol.write_text(
            yaml.safe_dump(
                [{"control-id": "c", "props": [{"name": a, "value": b} for a, b in props.items()]}]
            )
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return check(str(pol), df, window=window)

    try:
        v = run().findings[0].value  # type: ignore[attr-defined]
        if v is None:
            return f"| {key} | {label} | no value | | | |"
        if resolve(spec, {})[0] == "higher":
            props["operator"] = ">"
            props["threshold"] = f"{min(v + 0.3 * (1 - v) + 0.02, 0.999):.4f}"
        else:
            props["threshold"] = f"{v * 0.3:.4g}"
        t = time.time()
        res = run("ts=1w")
        f = res.findings[0]  # type: ignore[attr-defined]
        ws = [w.findings[0] for w in res.windows.windows]  # type: ignore[attr-defined]
        ai = [w.details.get("alarm_interval", {}) for w in ws]
        used = ", ".join(str(a.get("used")) for a in ai)
        meth = ", ".join(sorted({str(w.ci.method) if w.ci else "none" for w in ws}))
        why = next((a.get("reason") for a in ai if a.get("reason")), "") or ""
        took = time.time() - t
        head = f"{v:.3g} {props['operator']} {props['threshold']}: {f.status} ({took:.1f} s)"
        return f"| {key} | {label} | {head} | {meth} | {used} | {why[:110]} |"
    except Exception as e:  # a refusal (exit 2) is a row too
        return f"| {key} | {label} | {type(e).__name__}: {str(e)[:110]} | | | |"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

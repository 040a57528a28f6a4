"""Generate the example datasets under ``examples/`` (synthetic, deterministic).

    python examples/generate.py            # rewrite examples/*/predictions.csv
    python examples/generate.py --out DIR  # write DIR/credit/..., DIR/dermatology/...

Every dataset comes from a NumPy ``Generator`` with a fixed seed; floats are
written with six decimals and lines end in ``\\n``, so the bytes are the same on
every run (``tests/test_examples.py`` checks this). No network, no real people.

credit/predictions.csv
    Binary credit scoring, 3000 applicants. ``approved`` is the true outcome
    (1 = the loan was repaid), ``predicted`` the model's decision at a score
    cut-off of 0.5, ``score`` the model's probability. Base rates differ by age
    and race (thin credit files, historical disadvantage) and the model adds a
    small penalty for women and young applicants: mildly unfair, inside the
    four-fifths rule, with a visible intersectional (sex × race) gap.

dermatology/predictions.csv
    Six-class dermatopathology-shaped predictions from two hospitals (HCUV,
    HUSC), 1500 cases. Classes 0-2 are common, 3-5 rare. The model was tuned
    on HCUV; at HUSC it is somewhat worse on the common classes and collapses
    on the rare ones, which yields a support-weighted F1 gap of about 0.19
    between the sites (the figure in fmm-fairness-eval's spec). ``y_score_0..y_score_5`` are
    probabilities whose argmax is ``y_pred`` and whose rows sum to 1.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

HERE = Path(__file__).resolve().parent

CREDIT_SEED = 98
DERMATOLOGY_SEED = 28


def _sigmoid(x: NDArray[np.float64]) -> NDArray[np.float64]:
    return 1.0 / (1.0 + np.exp(-x))


def _csv(header: Sequence[str], columns: Sequence[Sequence[str]]) -> bytes:
    lines = [",".join(header)]
    lines += [",".join(row) for row in zip(*columns, strict=True)]
    return ("\n".join(lines) + "\n").encode("utf-8")


def _fmt(values: NDArray[np.float64]) -> list[str]:
    return [f"{v:.6f}" for v in values]


def _ints(values: NDArray[np.int64]) -> list[str]:
    return [str(int(v)) for v in values]


# ------------------------------------------------------------------ credit

SEXES = np.array(["F", "M"])
AGE_BANDS = np.array(["18-29", "30-49", "50+"])
RACES = np.array(["White", "Black", "Hispanic", "Asian"])


def credit(n: int = 3000, seed: int = CREDIT_SEED) -> bytes:
    """Binary credit-scoring predictions (see the module docstring)."""
    rng = np.random.default_rng(seed)
    sex = rng.choice(2, size=n, p=[0.47, 0.53])
    age = rng.choice(3, size=n, p=[0.24, 0.47, 0.29])
    race = rng.choice(4, size=n, p=[0.61, 0.19, 0.16, 0.04])

    # Creditworthiness: thinner files when young, lower wealth where history left it lower.
    quality = (
        rng.normal(0.0, 1.0, size=n)
        + np.array([-0.20, 0.05, 0.12])[age]
        + np.array([0.10, -0.30, -0.15, 0.15])[race]
    )
    repaid = (rng.uniform(size=n) < _sigmoid(0.8 + 1.4 * quality)).astype(np.int64)

    # The model sees a noisy view of creditworthiness (noisier for thin files)
    # and has learnt small penalties for women and young applicants.
    noise = rng.normal(0.0, 1.0, size=n) * np.array([0.65, 0.55, 0.55])[age]
    logit = (
        0.45
        + 1.5 * (quality + noise)
        + np.array([-0.12, 0.0])[sex]
        + np.array([-0.04, 0.0, 0.0])[age]
    )
    score = np.round(_sigmoid(logit), 6)
    predicted = (score >= 0.5).astype(np.int64)

    ids = [f"A{100001 + i}" for i in range(n)]
    return _csv(
        ["applicant_id", "approved", "predicted", "score", "sex", "age_band", "race"],
        [
            ids,
            _ints(repaid),
            _ints(predicted),
            _fmt(score),
            list(SEXES[sex]),
            list(AGE_BANDS[age]),
            list(RACES[race]),
        ],
    )


# ------------------------------------------------------------------ dermatology

SITES = np.array(["HCUV", "HUSC"])
#: class prevalence: three common, three rare classes
CLASS_PREVALENCE = np.array([0.30, 0.26, 0.22, 0.09, 0.07, 0.06])
#: probability that a case of class k is classified correctly, per site
RECALL = {
    "HCUV": np.array([0.90, 0.88, 0.86, 0.78, 0.74, 0.72]),
    "HUSC": np.array([0.78, 0.75, 0.73, 0.45, 0.38, 0.33]),
}


def dermatology(n: int = 1500, seed: int = DERMATOLOGY_SEED) -> bytes:
    """Six-class, two-site dermatopathology-shaped predictions (see the module docstring)."""
    rng = np.random.default_rng(seed)
    k = len(CLASS_PREVALENCE)
    site = rng.choice(2, size=n, p=[0.55, 0.45])
    sex = rng.choice(2, size=n, p=[0.52, 0.48])
    y_true = rng.choice(k, size=n, p=CLASS_PREVALENCE)

    recall = np.stack([RECALL[str(s)] for s in SITES])[site, y_true]
    correct = rng.uniform(size=n) < recall
    # Errors fall mostly on the common classes (the model's prior), never the true class.
    wrong = np.empty(n, dtype=np.int64)
    for i in np.flatnonzero(~correct):
        p = CLASS_PREVALENCE.copy()
        p[y_true[i]] = 0.0
        wrong[i] = rng.choice(k, p=p / p.sum())
    y_pred = np.where(correct, y_true, wrong)

    # Scores: random logits with the predicted class lifted above the rest
    # (a smaller margin at HUSC: less confident), softmaxed, then written in
    # micro-units so each row sums to exactly 1.000000.
    logits = rng.normal(0.0, 1.0, size=(n, k))
    margin = rng.gamma(2.0, 1.0, size=n) * np.array([1.2, 0.7])[site] + 0.3
    rows = np.arange(n)
    others = logits.copy()
    others[rows, y_pred] = -np.inf
    logits[rows, y_pred] = others.max(axis=1) + margin
    prob = np.exp(logits - logits.max(axis=1, keepdims=True))
    prob /= prob.sum(axis=1, keepdims=True)
    micro = np.round(prob * 1_000_000).astype(np.int64)
    micro[rows, y_pred] += 1_000_000 - micro.sum(axis=1)
    assert (micro.argmax(axis=1) == y_pred).all()

    ids = [f"D{20001 + i}" for i in range(n)]
    score_cols = [[f"{v / 1_000_000:.6f}" for v in micro[:, j]] for j in range(k)]
    return _csv(
        ["case_id", "y_true", "y_pred", *(f"y_score_{j}" for j in range(k)), "site", "sex"],
        [ids, _ints(y_true), _ints(y_pred), *score_cols, list(SITES[site]), list(SEXES[sex])],
    )


DATASETS = {
    "credit/predictions.csv": credit,
    "dermatology/predictions.csv": dermatology,
}


def generate(out: Path) -> list[Path]:
    """Write every dataset under ``out``; returns the paths written."""
    written = []
    for rel, make in DATASETS.items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(make())
        written.append(path)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Generate the fairpolicy example datasets.")
    parser.add_argument(
        "--out", type=Path, default=HERE, help="output directory (default: examples/)"
    )
    args = parser.parse_args(argv)
    for path in generate(args.out):
        print(f"wrote {path} ({path.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

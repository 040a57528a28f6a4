"""Hypothesis strategies for policies and datasets, shared by the property tests and
``benchmarks/fuzz_loader.py``.

Policies come three ways: random JSON-ish structures whose keys lean towards the policy
vocabulary (roots, ``props``, ``name``/``value``, metric keys, operators), valid policies
from the repository mutated structurally (a key deleted, a value replaced by junk, a type
swapped, a list item duplicated), and the YAML text of those with character-level edits
(YAML's syntax characters, tabs, anchors, tags, quotes, byte-order marks).

Datasets: two to four groups of random sizes and label skews, binary or K = 3 labels with
class scores, numeric target/prediction, a tie-free rank and a site column, optionally
rows without a group value: the columns of ``tests.metrics.test_registry_common``.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]

#: valid policies (their directory is where their imports resolve)
CORPUS_FILES = sorted(
    [
        *(ROOT / "tests/policy/files").glob("*.yaml"),
        *(ROOT / "tests/policy/files").glob("*.json"),
        *(ROOT / "tests/policy/files/chain").glob("*.yaml"),
        *(ROOT / "policies").glob("*/*.json"),
        *(ROOT / "examples").glob("*/policy.yaml"),
    ]
)


def _corpus() -> list[tuple[Any, Path]]:
    out = []
    for path in CORPUS_FILES:
        try:
            doc = yaml.safe_load(path.read_text("utf-8"))
        except yaml.YAMLError:
            continue  # the deliberately unreadable fixtures
        if doc is not None:
            out.append((doc, path.parent))
    return out


CORPUS = _corpus()


def scratch_dirs(tmp: Path) -> dict[Path, Path]:
    """A copy of every corpus directory (its policy files) under ``tmp``, so a mutated
    policy can be written beside the catalogs it imports without touching the repository."""
    import shutil

    out = {}
    for i, base in enumerate(sorted({base for _, base in CORPUS})):
        dest = tmp / f"corpus-{i}"
        shutil.copytree(base, dest, ignore=shutil.ignore_patterns("*.csv", "*.parquet"))
        out[base] = dest
    return out


VOCABULARY = [
    *("assessment-plan", "component-definition", "catalog", "profile", "assessment-results"),
    *("metadata", "uuid", "title", "version", "controls", "groups", "params", "values"),
    *("control-implementations", "implemented-requirements", "reviewed-controls", "components"),
    *("control-id", "id", "props", "name", "value", "ns", "description", "source", "href"),
    *("imports", "include-controls", "exclude-controls", "with-ids", "modify"),
    *("set-parameters", "param-id", "back-matter", "resources", "rlinks", "parts"),
    *("metric_key", "threshold", "operator", "enforcement_mode", "severity", "threshold_param"),
    *("input.target", "input:target", "input.prediction", "input.dimension", "input.score"),
    *("min_samples", "missing", "positive_label", "num_classes", "ci", "decision", "<<"),
]
VALUES = [
    *("demographic_parity_diff", "accuracy_diff", "auc_gap", "multiclass_demographic_parity"),
    *("<", "<=", "lt", "between", "=<", "less_than", "0.1", "0.1,0.2", "-1", "1e309", "nan"),
    *("y_true", "y_pred", "sex", "sex,race", "block", "warn", "monitor", "drop", "error"),
    *("catalog.json", "profile.json", "#uuid", "file:///dev/null", "http://x", "/dev/zero"),
    "0b3a0c52-2d8b-4a5c-9a0e-1f6a2b3c4d5e",
]

keys = st.one_of(st.sampled_from(VOCABULARY), st.text(max_size=12))
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(VALUES),
    st.text(max_size=20),
    st.dates(),
)
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=5),
        st.dictionaries(keys, children, max_size=6),
        # props as OSCAL writes them
        st.lists(
            st.fixed_dictionaries(
                {"name": st.sampled_from(VOCABULARY), "value": children},
                optional={"ns": st.sampled_from(["", "http://other.example/ns"])},
            ),
            max_size=6,
        ),
    ),
    max_leaves=30,
)


def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _paths(v, (*prefix, i))
    return out


def _get(obj: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        obj = obj[p]
    return obj


@st.composite
def mutated_policies(draw: st.DrawFn, max_mutations: int = 4) -> tuple[Any, Path]:
    """A corpus policy (and its directory) with a few structural mutations."""
    doc, base = draw(st.sampled_from(CORPUS))
    doc = copy.deepcopy(doc)
    for _ in range(draw(st.integers(1, max_mutations))):
        paths = _paths(doc)
        path = draw(st.sampled_from(paths))
        kind = draw(st.sampled_from(["replace", "delete", "insert", "duplicate", "retype"]))
        if not path:
            if kind == "replace":
                doc = draw(json_values)
            continue
        parent, last = _get(doc, path[:-1]), path[-1]
        if kind == "replace":
            parent[last] = draw(json_values)
        elif kind == "delete":
            del parent[last]
        elif kind == "insert" and isinstance(parent, dict):
            parent[draw(keys)] = draw(json_values)
        elif kind == "duplicate" and isinstance(parent, list):
            parent.insert(last, copy.deepcopy(parent[last]))
        elif kind == "retype":
            value = parent[last]
            parent[last] = (
                [value]
                if not isinstance(value, list)
                else (dict(enumerate(value)) if value else str(value))
            )
    return doc, base


def _dump(doc: Any, as_json: bool) -> str:
    if as_json:
        return json.dumps(doc, default=str, indent=1)
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)


SYNTAX = [":", "-", " ", "\t", "\n", "&a", "*a", "!", "!!python/object:os.system", "{", "}"]
SYNTAX += ["[", "]", '"', "'", "#", "|", ">", "%", "@", "`", "\ufeff", "\x00", "<<: *a", "---"]


@st.composite
def policy_texts(draw: st.DrawFn) -> tuple[str, str, Path]:
    """(text, suffix, base directory): a mutated policy dumped as YAML or JSON, with a
    few character-level edits."""
    doc, base = draw(mutated_policies(max_mutations=2))
    as_json = draw(st.booleans())
    text = _dump(doc, as_json)
    for _ in range(draw(st.integers(0, 4))):
        i = draw(st.integers(0, len(text)))
        op = draw(st.sampled_from(["insert", "delete", "duplicate-line"]))
        if op == "insert":
            text = (
                text[:i] + draw(st.one_of(st.sampled_from(SYNTAX), st.text(max_size=3))) + text[i:]
            )
        elif op == "delete":
            text = text[:i] + text[i + draw(st.integers(1, 20)) :]
        else:
            lines = text.splitlines(keepends=True)
            if lines:
                j = draw(st.integers(0, len(lines) - 1))
                lines.insert(j, lines[j])
                text = "".join(lines)
    return text, ".json" if as_json else ".yaml", base


# ---------------------------------------------------------------- datasets


@st.composite
def frames(draw: st.DrawFn, k: int) -> pd.DataFrame:
    """Random valid data with the columns of the registry's common test (see there)."""
    n_groups = draw(st.integers(2, 4))
    sizes = draw(st.lists(st.integers(1, 70), min_size=n_groups, max_size=n_groups))
    seed = draw(st.integers(0, 2**32 - 1))
    skew = draw(st.floats(0.05, 0.95))
    missing = draw(st.integers(0, 5))
    rng = np.random.default_rng(seed)
    frames = []
    for g, n in zip(["A", "B", "C", "tiny"], sizes, strict=False):
        first = rng.random(n) < skew  # class 0 with probability skew (label imbalance)
        y_t = np.where(first, 0, rng.integers(1, k, n) if k > 2 else 1)
        logits = rng.normal(size=(n, k)) + rng.uniform(0, 3) * np.eye(k)[y_t]
        prob = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
        frame = pd.DataFrame({"y_true": y_t, "y_pred": prob.argmax(axis=1), "grp": [g] * n})
        if k == 2:
            frame["y_score"] = prob[:, 1].round(2)  # ties on purpose
        else:
            for j in range(k):
                frame[f"y_score_{j}"] = prob[:, j]
        frame["y_num"] = rng.normal(50, 10, n)
        frame["yhat_num"] = frame["y_num"] + rng.normal(0, 5, n)
        frame["site"] = rng.choice(["S1", "S2"], n)
        frames.append(frame)
    df = pd.concat(frames, ignore_index=True)
    df["rank"] = rng.permutation(len(df)) + 1
    df["grp"] = df["grp"].astype(object)
    if missing:  # rows without a group value, taken from the largest group (which keeps one)
        largest = df.index[df["grp"] == df["grp"].mode()[0]]
        take = min(missing, len(largest) - 1)
        df.loc[rng.choice(largest, size=take, replace=False), "grp"] = None
    return df


CSV_SYNTAX = [",", '"', '""', "\n", "\r\n", "\r", "\t", ";", "\x00", "\ufeff", "\xe9", "nan"]
CSV_SYNTAX += ["inf", "-", "1.5", " ", "y_true", "sex", "NA", "\u202e", "=cmd", "1e400"]


@st.composite
def csv_bytes(draw: st.DrawFn) -> bytes:
    """A small valid predictions CSV (binary labels, a score, two or three groups) with a
    few character- and byte-level edits: quotes, delimiters, line endings, NULs, BOMs,
    invalid UTF-8, numbers a column does not expect."""
    n = draw(st.integers(1, 80))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    groups = draw(st.sampled_from([["F", "M"], ["F", "M", "X"], ["a,b", 'q"t', "n\nl"]]))
    lines = ["y_true,y_pred,sex,y_score"]
    for _ in range(n):
        g = groups[int(rng.integers(len(groups)))]
        g = '"' + g.replace('"', '""') + '"' if any(c in g for c in ',"\n') else g
        lines.append(f"{rng.integers(2)},{rng.integers(2)},{g},{rng.random():.3f}")
    text = "\n".join(lines) + draw(st.sampled_from(["\n", "", "\n\n"]))
    for _ in range(draw(st.integers(0, 4))):
        i = draw(st.integers(0, len(text)))
        op = draw(st.sampled_from(["insert", "delete", "replace"]))
        piece = draw(st.one_of(st.sampled_from(CSV_SYNTAX), st.text(max_size=3)))
        if op == "insert":
            text = text[:i] + piece + text[i:]
        elif op == "delete":
            text = text[:i] + text[i + draw(st.integers(1, 10)) :]
        else:
            text = text[:i] + piece + text[i + len(piece) :]
    data = text.encode("utf-8", "surrogatepass")
    if draw(st.booleans()):  # a stray byte that is not UTF-8
        i = draw(st.integers(0, len(data)))
        data = data[:i] + draw(st.sampled_from([b"\xff", b"\xe9", b"\xc3", b"\x80"])) + data[i:]
    return data

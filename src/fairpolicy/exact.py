"""Exact decisions at the threshold, and printed values that never contradict them.

Count-based metrics are ratios of integers (weighted counts on an engine are integers
too), so their verdict can be decided exactly: the metric returns the exact rational
beside its float (:class:`ExactFloat`), and :func:`compare` checks it against the exact
decimal the policy wrote ("0.1" is exactly 1/10, not the double nearest to it). A
metric that is not a ratio of integers (scores, regression) is compared as a float.

:func:`shown` writes a value with as many digits as it takes for the written number to
satisfy the threshold exactly when the value does: ``0.09999 < 0.1`` never prints as
``0.1000 < 0.1 PASS``.

This module imports nothing else from fairpolicy: metrics, the decision and the
formatters all use it.
"""

from __future__ import annotations

import math
from decimal import Context, Decimal
from fractions import Fraction
from typing import Literal

Op = Literal["<", "<=", ">", ">=", "==", "!=", "between"]

#: a threshold: the exact decimal the policy wrote (a Fraction), or a float standing for
#: the shortest decimal that reads back as it (:func:`decimal_fraction`)
Bound = float | Fraction


class ExactFloat(float):
    """A float that also carries the exact rational it rounds (``.exact``).

    ``float(exact)`` is the correctly rounded value; arithmetic on it gives plain
    floats, so only the decision (which looks for ``.exact``) sees the difference.
    """

    exact: Fraction

    def __new__(cls, exact: Fraction) -> ExactFloat:
        self = super().__new__(cls, float(exact))
        self.exact = exact
        return self

    def __reduce__(self) -> tuple[type[ExactFloat], tuple[Fraction]]:
        return (ExactFloat, (self.exact,))


def exact_of(value: float) -> Fraction | None:
    """The exact rational behind ``value`` if it carries one, else None."""
    return value.exact if isinstance(value, ExactFloat) else None


def with_exact(value: float | None, exact: Fraction | None) -> float | None:
    """``value`` as an :class:`ExactFloat` when its exact rational is known."""
    if value is None or exact is None:
        return value
    return ExactFloat(exact)


def decimal_fraction(t: float) -> Fraction:
    """The exact decimal a threshold float stands for: the shortest decimal that reads
    back as the same double (``0.1`` → 1/10), which is what the policy wrote whenever
    it wrote at most 15 significant digits."""
    return Fraction(repr(float(t)))


#: the largest decimal exponent a written threshold may have: ``1e-99999999`` is a short
#: text for a 10^8-digit integer, and no metric value is closer to 0 than ~1e-650 (ratios of
#: weight sums in units of 2**-1074 up to 1e300), so no threshold needs more
MAX_EXPONENT = 1000


def exact_decimal(text: str) -> Fraction:
    """A written decimal as an exact Fraction; ValueError for text that is not a decimal
    or whose exponent is beyond ±:data:`MAX_EXPONENT` (never a huge integer built)."""
    t = text.strip()
    _, _, exponent = t.replace("E", "e").partition("e")
    digits = exponent.lstrip("+-").lstrip("0")
    if exponent and (len(digits) > 6 or abs(int(exponent)) > MAX_EXPONENT):
        raise ValueError(f"'{t}' has an exponent beyond ±{MAX_EXPONENT}")
    if len(t) > 10_000:
        raise ValueError(f"'{t[:20]}…' has more than 10000 characters")
    return Fraction(t)


def written_number(text: str, value: float) -> float | str:
    """An unquoted number as the policy wrote it: the float when its shortest decimal *is*
    the decimal written (``0.1``, ``0.10``), else the text (``0.09999999999999999999``,
    ``1e-400``), so a threshold is decided on the decimal written (fairpolicy.exact) in
    YAML and JSON as when quoted — the float would be another threshold."""
    if not math.isfinite(value):
        return value
    t = text.strip()
    _, _, exponent = t.replace("E", "e").partition("e")
    try:
        if exponent and abs(int(exponent)) > 1000:
            return t  # no double holds it; the number grammar refuses it by name
        same = Fraction(t) == Fraction(repr(value))
    except (ValueError, ZeroDivisionError):
        return t
    return value if same else t


def exact_number(x: float | str) -> Fraction:
    """A parameter's exact decimal: its text as written (a policy keeps the text when the
    double says another decimal, ``0.019999999999999999999``), else a float's shortest
    decimal."""
    return exact_decimal(x) if isinstance(x, str) else decimal_fraction(float(x))


def written_bounds(text: str) -> list[Fraction]:
    """The exact decimals of a threshold as written (``"0.1"``, ``"1e-400"``, or
    ``"low,high"`` for ``between``): never rounded to a double first, so
    ``0.09999999999999999999`` stays below 1/10 and ``1e-400`` above 0."""
    return [exact_decimal(part) for part in text.split(",")]


def exact_bound(t: Bound) -> Fraction:
    """The exact decimal of a threshold: itself when written exactly, else the shortest
    decimal of its double."""
    return t if isinstance(t, Fraction) else decimal_fraction(t)


def float_bound(t: Bound) -> float | Fraction:
    """What a plain float value (a metric without an exact value) is compared with: the
    threshold's double, except a written threshold that no double can hold without
    becoming 0 (``1e-400``) stays exact (comparing a float with a Fraction is exact), so
    it never turns into a different threshold."""
    if isinstance(t, Fraction):
        f = float(t)
        return t if f == 0 and t != 0 else f
    return float(t)


def _holds(v: Fraction | float, op: Op, low: Fraction | float, high: Fraction | float) -> bool:
    if op == "between":
        return low <= v <= high
    return {
        "<": v < low,
        "<=": v <= low,
        ">": v > low,
        ">=": v >= low,
        "==": v == low,
        "!=": v != low,
    }[op]


def compare(value: float, op: Op, low: Bound, high: Bound | None = None) -> bool:
    """Whether ``value <op> low`` (``between``: ``low <= value <= high``, inclusive).

    A value carrying its exact rational (:class:`ExactFloat`) is compared exactly against
    the exact decimal thresholds (a Fraction: the decimal as written; a float: its
    shortest decimal); any other value as a float against the thresholds' floats (a
    metric that is not a ratio of integers has no exact value to offer;
    :func:`float_bound`).
    """
    hi = low if high is None else high
    exact = exact_of(value)
    if exact is not None:
        return _holds(exact, op, exact_bound(low), exact_bound(hi))
    return _holds(float(value), op, float_bound(low), float_bound(hi))


def _fixed(x: Fraction, digits: int) -> str:
    """``x`` rounded half-even to ``digits`` decimals, written out (no exponent)."""
    ctx = Context(prec=max(60, digits + 40))
    d = ctx.divide(Decimal(x.numerator), Decimal(x.denominator))
    return f"{d.quantize(Decimal(1).scaleb(-digits), context=ctx):f}"


def _sci(x: Fraction, digits: int) -> str:
    """``x`` with ``digits`` significant digits in exponent form."""
    ctx = Context(prec=max(digits, 1))
    d = ctx.divide(Decimal(x.numerator), Decimal(x.denominator))
    return f"{d:e}"


def _general(value: float, x: Fraction, exact: bool, d: int) -> str:
    """``d`` significant digits, ``g`` style (trailing zeros dropped)."""
    if not exact:
        return f"{value:.{min(d, 17)}g}"
    ctx = Context(prec=d)
    dec = ctx.divide(Decimal(x.numerator), Decimal(x.denominator))
    if d <= 15:
        return f"{float(dec):.{d}g}"  # d digits read back exactly from the double
    return format(dec.normalize(ctx), "f" if -20 < dec.adjusted() < 20 else "e")


_OPS = frozenset({"<", "<=", ">", ">=", "==", "!=", "between"})


def shown(
    value: float,
    op: str | None = None,
    low: Bound | None = None,
    high: Bound | None = None,
    digits: int = 4,
    style: Literal["f", "g"] = "f",
) -> str:
    """``value`` with ``digits`` decimals, or more when fewer would contradict the verdict.

    The written decimal is read back (exactly for a value carrying its exact rational,
    as a float otherwise) and compared with the threshold the way :func:`compare`
    compares the value; digits are added until both agree (for a float at most until
    the shortest spelling that reads back as the same double). Without an operator and
    threshold the value is written with ``digits`` decimals. Magnitudes below
    10^-digits or from 10^15 up are written in exponent form with the same rule.
    ``style="g"``: ``digits`` significant digits (Python's ``g``) instead of decimals.
    """
    if not math.isfinite(value):
        return str(value)
    exact = exact_of(value)
    x = exact if exact is not None else Fraction(value)
    sci = (value != 0 and abs(value) < 10.0**-digits) or abs(value) >= 1e15

    def text(d: int) -> str:
        if style == "g":
            return _general(value, x, exact is not None, d)
        return _sci(x, d) if sci else _fixed(x, d)

    if op is None or low is None or op not in _OPS:
        return text(digits)
    operator: Op = op  # type: ignore[assignment]
    hi = low if high is None else high
    truth = compare(value, operator, low, high)
    for d in range(digits, 100):
        s = text(d)
        if exact is not None:
            agrees = _holds(Fraction(s), operator, exact_bound(low), exact_bound(hi))
        else:
            agrees = _holds(float(s), operator, float_bound(low), float_bound(hi))
        if agrees == truth:
            return s
    return repr(float(value))


def threshold_text(t: float | str) -> str:
    """A threshold as written: the policy's own text when known (``"0.09999999999999999999"``,
    ``"1e-400"``); for a float, ``g`` formatting when it reads back exactly, else the
    shortest exact spelling (``0.1234567`` rather than ``0.123457``)."""
    if isinstance(t, str):
        return t.strip()
    g = f"{t:g}"
    return g if float(g) == t else repr(float(t))


def written_text(text: str) -> str:
    """One threshold bound as printed: the policy's decimal, spelled as its double is
    (``0.10`` → ``0.1``) when that double's shortest decimal *is* the decimal written, else
    exactly as written (``0.09999999999999999999``, ``1e-400``: no double says them)."""
    t = text.strip()
    x = exact_decimal(t)
    f = float(x)
    if math.isfinite(f) and decimal_fraction(f) == x:
        return threshold_text(f)
    d = Decimal(t).normalize(Context(prec=max(28, len(t))))  # no digit dropped
    return str(d).replace("E", "e")


def written_threshold(texts: list[str], floats: list[float]) -> str | None:
    """What a threshold keeps of its text (``Threshold.text``): None when every bound's
    double already says the decimal written (``0.1``, ``0.10``), else the bounds' exact
    decimals, canonical (:func:`written_text`), joined by commas — so two thresholds
    are equal exactly when they say the same decimals."""
    if all(decimal_fraction(f) == exact_decimal(t) for t, f in zip(texts, floats, strict=True)):
        return None
    return ",".join(written_text(t) for t in texts)


def written_parts(
    threshold: float | list[float] | None, written: str | None
) -> tuple[list[str], list[Bound]]:
    """(printed bounds, decision bounds) of a result's threshold: the decimals the policy
    wrote (``written``, "low,high" for between) when they match the floats' shape, else
    the floats' own shortest decimals."""
    if threshold is None:
        return [], []
    floats = threshold if isinstance(threshold, list) else [threshold]
    if written is not None:
        parts = [p.strip() for p in written.split(",")]
        if len(parts) == len(floats):
            try:
                return [written_text(p) for p in parts], [exact_decimal(p) for p in parts]
            except (ValueError, ZeroDivisionError):
                pass
    return [threshold_text(x) for x in floats], list(floats)


def fraction_text(x: Fraction | None) -> str | None:
    """``"3/10"`` (or ``"0"``, ``"1"``), for the results' details."""
    if x is None:
        return None
    return str(x)


def level_percent(level: float) -> str:
    """A confidence level as a percentage without the ``%`` sign, with as many decimals as
    its distance from 100 % needs: 0.95 → ``95``, 0.975 → ``97.5``, a monitoring window's
    0.999155844 → ``99.916``; never ``100`` for a level below 1 (``:.0%`` printed a
    window's 99.92 % interval as a "100% CI")."""
    x = level * 100.0
    if not math.isfinite(x) or x >= 100.0:
        return f"{x:g}"
    decimals = min(12, max(0, 1 - math.floor(math.log10(100.0 - x))))
    text = f"{x:.{decimals}f}"
    if float(text) >= 100.0:  # within 1e-12 of 100 %: round down instead
        text = "99." + "9" * decimals
    return text.rstrip("0").rstrip(".") if "." in text else text

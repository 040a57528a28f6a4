"""The one number grammar of policies and the command line.

Python's ``float()`` and ``int()`` read far more than a policy author means: ``"0_10"``
is 10, ``"١٠"`` (Arabic-Indic digits) is 10, ``"inf"``, ``"nan"`` and ``" 1 "`` are
numbers. A threshold read that loosely can make a control pass that should fail, so
every numeric value a policy or the command line gives (thresholds, the bounds of
``between``, set-parameters values, ``ci``, ``ci_level``, ``p_value``, ``min_samples``,
``min_share``, ``num_classes``, ``bins``, …) goes through :func:`parse_float` or
:func:`parse_int`, which accept only plain ASCII decimal or scientific notation:

    number  ::= sign? ( digits ( "." digits? )? | "." digits ) exponent?
    integer ::= sign? digits            (for whole-number settings; no exponent)
    sign    ::= "+" | "-"
    digits  ::= [0-9]+
    exponent::= ( "e" | "E" ) sign? digits

Leading and trailing white space is trimmed by the callers; nothing else (underscores,
thousands separators, Unicode digits, ``inf``, ``nan``, hexadecimal, YAML's base-60
``1:30``) is a number.
"""

from __future__ import annotations

import math
import re
from typing import Any

__all__ = ["NUMBER_HINT", "cli_float", "cli_int", "parse_float", "parse_int"]

_FLOAT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)
_NONFINITE = re.compile(r"[+-]?\.?(?:nan|inf|infinity)", re.ASCII | re.IGNORECASE)
_INT = re.compile(r"[+-]?[0-9]+", re.ASCII)

#: what the error messages suggest
NUMBER_HINT = "write a plain decimal number such as 0.1, 10 or 1e-3 (ASCII digits only)"


def parse_float(text: str) -> float:
    """``text`` as a finite float; ValueError (with a reason) unless it is plain ASCII
    decimal or scientific notation."""
    if isinstance(text, str) and _NONFINITE.fullmatch(text):
        raise ValueError(f"'{text}' is not a finite number")
    if not isinstance(text, str) or _FLOAT.fullmatch(text) is None:
        raise ValueError(f"'{text}' is not a number")
    value = float(text)
    if not math.isfinite(value):  # 1e999
        raise ValueError(f"'{text}' is not a finite number")
    return value


def parse_int(text: str) -> int:
    """``text`` as an int; ValueError unless it is plain ASCII digits (optionally signed).
    ``"10.0"`` and ``"1e3"`` are not whole numbers as written."""
    if not isinstance(text, str) or _INT.fullmatch(text) is None:
        raise ValueError(f"'{text}' is not a whole number")
    if len(text) > 18:
        raise ValueError(f"'{text}' has too many digits")
    return int(text)


def option_number(value: Any, whole: bool) -> int | float:
    """An option given to the API, the command line or a configuration file, as a number
    or as text, read with this grammar: an int (or a finite float unless ``whole``), or its
    plain ASCII text. ValueError (with a reason) for anything else: a bool, another type,
    ``1_000``, other scripts' digits, ``5e2`` for a whole number, NaN or infinity."""
    import numbers

    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a number")
    if isinstance(value, numbers.Integral):
        return int(value)
    if not whole and isinstance(value, numbers.Real):
        if not math.isfinite(value):
            raise ValueError(f"{value!r} is not a finite number")
        return float(value)
    if isinstance(value, str):
        return parse_int(value.strip()) if whole else parse_float(value.strip())
    raise ValueError(f"{value!r} is not a number")


def cli_int(text: str) -> int:
    """``argparse`` type for whole-number options (the strict grammar, not ``int()``)."""
    return parse_int(text.strip())


def cli_float(text: str) -> float:
    """``argparse`` type for numeric options (the strict grammar, not ``float()``)."""
    return parse_float(text.strip())


cli_int.__name__ = "int"  # argparse's message: "invalid int value: '1_0'"
cli_float.__name__ = "float"

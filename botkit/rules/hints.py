"""Words for expression problems: what to call a type, a did-you-mean, an example to follow.

Pure helpers shared by the expression compiler and the file checks, so every message reads
the same way.
"""

from __future__ import annotations

import ast
import difflib

from botkit.rules.context import BOOL, NUM, Method, View
from botkit.rules.functions import FUNCTIONS

__all__ = [
    "KIND_WORD",
    "SUBSCRIPT_HINT",
    "TEXT",
    "did_you_mean",
    "examples",
    "fix_hint",
    "functions_hint",
    "offset_of",
    "op_word",
    "syntax_hint",
]

TEXT = "text"
KIND_WORD = {NUM: "a number", BOOL: "true/false", TEXT: "text"}
SUBSCRIPT_HINT = "use a dot: account.ccy.USDT.avail, not brackets"
MAX_SHOWN = 12


def did_you_mean(word: str, options: list[str]) -> str:
    """``did you mean 'x'?`` for a close option, else the options (at most a dozen)."""
    close = difflib.get_close_matches(word, options, n=1, cutoff=0.6)
    if close:
        return f"did you mean '{close[0]}'?"
    more = ", ..." if len(options) > MAX_SHOWN else ""
    return "use one of: " + ", ".join(options[:MAX_SHOWN]) + more


def offset_of(text: str, node: ast.AST, attr: str | None = None) -> int:
    """Character offset of a node (ast offsets are UTF-8 bytes)."""
    if attr is not None:
        end = getattr(node, "end_col_offset", None)
        if end is not None:
            raw = text.encode("utf-8")
            return len(raw[:end].decode("utf-8", "replace")) - len(attr)
    col = getattr(node, "col_offset", 0)
    return len(text.encode("utf-8")[:col].decode("utf-8", "replace"))


def examples(view: type[View], path: str) -> str:
    methods: list[str] = []
    views: list[str] = []
    others: list[str] = []
    record = getattr(view, "RECORD", None)
    first_field = next(iter(getattr(record, "NUMS", {})), "...")
    for name, field in view.FIELDS.items():
        kind = field.kind
        if isinstance(kind, Method):
            args = ", ".join("'1h'" if a == "window" else f"'{first_field}'" for a in kind.args)
            methods.append(f"{path}.{name}({args})")
        elif kind in (NUM, BOOL):
            others.append(f"{path}.{name}")
        elif isinstance(kind, type) and issubclass(kind, View):
            leaf = next((f for f, leaf_field in kind.FIELDS.items() if leaf_field.kind == NUM), "")
            if leaf:
                views.append(f"{path}.{name}.{leaf}")
    return ", ".join([*methods[:2], *views, *others][:3])


def op_word(op: ast.AST) -> str:
    words = {
        "BitAnd": "&", "BitOr": "|", "BitXor": "^", "LShift": "<<", "RShift": ">>",
        "MatMult": "@", "Invert": "~", "In": "in", "NotIn": "not in", "Is": "is", "IsNot": "is not",
        "Lt": "<", "LtE": "<=", "Gt": ">", "GtE": ">=", "Eq": "==", "NotEq": "!=",
    }  # fmt: skip
    return f"'{words.get(type(op).__name__, type(op).__name__)}'"


def fix_hint(kind: str) -> str:
    if kind == BOOL:
        return "write a comparison, e.g. position.qty > 0"
    return "write a number or a numeric field, e.g. price.mark * 0.99"


def functions_hint() -> str:
    return "functions: " + ", ".join(FUNCTIONS)


def syntax_hint(text: str, offset: int) -> str:
    if "=" in text and "==" not in text and not any(op in text for op in ("<=", ">=", "!=")):
        return "compare with '==', not '='"
    if text.count("(") != text.count(")"):
        return "check the parentheses"
    if "&&" in text or "||" in text:
        return "write 'and' / 'or'"
    return "write a Python-like expression, e.g. position.qty > 0 and price.mark < 100"

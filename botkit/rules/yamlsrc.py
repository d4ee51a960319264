"""YAML text → plain values plus a map of where every key and value sits in the file.

ruamel.yaml composes the node graph (with marks); this module turns it into dicts, lists, str,
int, :class:`~decimal.Decimal` (from the scalar's source text, never via float), bool and None,
and records each value's position so that any later problem can be reported as
``file:line:column``. Duplicate keys, merge keys and alias bombs are refused here with a located
message. Pure: text in, values out (no file I/O).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml.reader import ReaderError

from botkit.errors import ConfigError, Location

__all__ = ["MAX_LINE_CHARS", "Path", "Pos", "Scalar", "SourceMap", "parse_yaml"]

Path = tuple[str | int, ...]
"""Where a value sits in the document: mapping keys and list indices from the root."""

_MAX_NODES = 20_000
_SURROGATE = re.compile("[\ud800-\udfff]")
_TAG = "tag:yaml.org,2002:"


@dataclass(frozen=True, slots=True)
class Pos:
    """A position in the text: 1-based line and column, and the 0-based character index."""

    line: int
    column: int
    index: int


@dataclass(frozen=True, slots=True)
class Scalar:
    """A scalar as written: its value text (after YAML unquoting), style and start."""

    text: str
    style: str | None
    start: Pos


@dataclass(slots=True)
class SourceMap:
    """Positions of keys and values by :data:`Path`, and the raw text for in-value positions."""

    file: str
    text: str
    values: dict[Path, Pos] = field(default_factory=dict)
    keys: dict[Path, Pos] = field(default_factory=dict)
    scalars: dict[Path, Scalar] = field(default_factory=dict)

    def location(self, pos: Pos | None) -> Location:
        if pos is None:
            return Location(file=self.file)
        return Location(file=self.file, line=pos.line, column=pos.column)

    def value_at(self, path: Path) -> Location:
        """The position of the value at ``path`` (or of its closest ancestor)."""
        return self.location(self._nearest(self.values, path))

    def key_at(self, path: Path) -> Location:
        """The position of the key that ends ``path`` (falls back to the value's position)."""
        pos = self.keys.get(path)
        return self.location(pos) if pos is not None else self.value_at(path)

    def _nearest(self, table: dict[Path, Pos], path: Path) -> Pos | None:
        for cut in range(len(path), -1, -1):
            pos = table.get(path[:cut])
            if pos is not None:
                return pos
        return None

    def inside(self, path: Path, offset: int) -> Location:
        """The file position of character ``offset`` of the scalar at ``path``.

        Walks the raw text from the scalar's start, matching the value's characters one by one,
        so quotes, escapes and folded or literal block lines are accounted for.
        """
        scalar = self.scalars.get(path)
        if scalar is None:
            return self.value_at(path)
        raw = self.text
        p = scalar.start.index
        if scalar.style in ('"', "'"):
            p += 1
        elif scalar.style in ("|", ">"):
            newline = raw.find("\n", p)
            p = len(raw) if newline < 0 else newline + 1
        value = scalar.text
        end = len(raw)
        for k in range(min(offset, len(value))):
            c = value[k]
            if c.isspace():
                if p < end and raw[p] in " \t":
                    p += 1
                elif p < end and raw[p] in "\r\n":
                    while p < end and raw[p] in " \t\r\n":
                        p += 1
                continue
            while p < end and raw[p] != c:
                p += 1
            p += 1
        if offset < len(value) and not value[offset].isspace():
            while p < end and raw[p] != value[offset]:
                p += 1
        p = min(p, end)
        line = raw.count("\n", 0, p) + 1
        column = p - (raw.rfind("\n", 0, p) + 1) + 1
        return Location(file=self.file, line=line, column=column)


def _pos(node: Node) -> Pos:
    mark = node.start_mark
    return Pos(mark.line + 1, mark.column + 1, mark.index)


class _Builder:
    def __init__(self, smap: SourceMap) -> None:
        self.smap = smap
        self.count = 0
        self.problems: list[ConfigError] = []

    def error(self, node: Node, message: str, hint: str = "") -> None:
        self.problems.append(ConfigError(message, where=self.smap.location(_pos(node)), hint=hint))

    def build(self, node: Node, path: Path, stack: tuple[int, ...] = ()) -> Any:
        self.count += 1
        if self.count > _MAX_NODES:
            raise ConfigError(
                f"the document has more than {_MAX_NODES} values (alias expansion?)",
                where=self.smap.location(_pos(node)),
                hint="write a strategy without deeply nested aliases",
            )
        if id(node) in stack:
            self.error(node, "an alias refers to itself", "remove the recursive alias")
            return None
        stack = (*stack, id(node))
        self.smap.values.setdefault(path, _pos(node))
        if isinstance(node, MappingNode):
            return self._mapping(node, path, stack)
        if isinstance(node, SequenceNode):
            return [self.build(item, (*path, i), stack) for i, item in enumerate(node.value)]
        assert isinstance(node, ScalarNode)
        return self._scalar(node, path)

    def _mapping(self, node: MappingNode, path: Path, stack: tuple[int, ...]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if str(key_node.tag) == _TAG + "merge":
                self.error(key_node, "merge keys (<<) are not supported", "write the keys out")
                continue
            if not isinstance(key_node, ScalarNode):
                self.error(key_node, "a key must be a plain word", "write 'name: value'")
                continue
            key = self._text(key_node, str(key_node.value))
            if key in out:
                first = self.smap.keys[(*path, key)]
                self.error(
                    key_node,
                    f"duplicate key '{key}' (first at line {first.line})",
                    "keep one of them",
                )
                continue
            self.smap.keys[(*path, key)] = _pos(key_node)
            out[key] = self.build(value_node, (*path, key), stack)
        return out

    def _text(self, node: Node, text: str) -> str:
        """``text``, with a lone surrogate (only a YAML escape such as ``\\ud800`` makes one:
        it is no character, cannot be printed or stored) reported and replaced by U+FFFD."""
        if _SURROGATE.search(text) is None:
            return text
        self.error(
            node,
            "the text holds an escape that is no character (a lone surrogate, \\ud800-\\udfff)",
            "write the character itself (or \\U0001F600 for one above U+FFFF)",
        )
        return _SURROGATE.sub("\ufffd", text)

    def _scalar(self, node: ScalarNode, path: Path) -> Any:
        text = self._text(node, str(node.value).replace("\a", ""))
        self.smap.scalars[path] = Scalar(text, node.style, _pos(node))
        tag = str(node.tag)
        if node.style is not None or not tag.startswith(_TAG):
            return text
        kind = tag[len(_TAG) :]
        if kind == "null":
            return None
        if kind == "bool":
            return text.lower() in {"true", "yes", "on", "y"}
        if kind == "int":
            try:
                return int(text.replace("_", ""), 0)
            except ValueError:
                return text
        if kind == "float":
            try:
                return Decimal(text.replace("_", ""))
            except InvalidOperation:
                return text
        return text


def parse_yaml(text: str, file: str) -> tuple[Any, SourceMap]:
    """Parse one YAML document. Raises :class:`ConfigError` (located) on a syntax problem and
    :class:`~botkit.errors.StrategyFileError` listing every duplicate or merge key."""
    from botkit.errors import StrategyFileError

    smap = SourceMap(file=file, text=text)
    _refuse_long_lines(text, file)
    _refuse_deep_flow(text, file)
    try:
        # the safe (not round-trip) scanner: the round-trip one keeps comments, building each
        # one a character at a time (a 1 MB comment, or a comment followed by 1 MB of blank
        # lines, took 16 s); nothing here needs comments, and this one skips them
        root = YAML(typ="safe", pure=True).compose(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = (
            Location(file=file, line=mark.line + 1, column=mark.column + 1)
            if mark is not None
            else Location(file=file)
        )
        problem = exc.problem or exc.context or "invalid YAML"
        if "single document" in str(exc):
            problem = "more than one YAML document ('---')"
        raise ConfigError(
            f"YAML syntax: {problem}", where=where, hint="fix the indentation or punctuation here"
        ) from None
    except ReaderError as exc:  # a character YAML does not allow (control codes, U+FFFE)
        before = text[: max(0, exc.position)]
        line = before.count("\n") + 1
        column = len(before) - (before.rfind("\n") + 1) + 1
        code = exc.character if isinstance(exc.character, int) else ord(str(exc.character)[:1])
        raise ConfigError(
            f"YAML does not allow the character U+{code:04X} here",
            where=Location(file=file, line=line, column=column),
            hint="delete it (an invisible control character, often pasted by accident)",
        ) from None
    except (YAMLError, RecursionError) as exc:
        raise ConfigError(
            f"YAML cannot be read ({type(exc).__name__})",
            where=Location(file=file, line=1, column=1),
            hint="a strategy file is a plain mapping of keys: start with 'strategy: NAME'",
        ) from None
    if root is None:
        raise ConfigError(
            "the file is empty", where=Location(file=file, line=1, column=1), hint=_START_HINT
        )
    builder = _Builder(smap)
    data = builder.build(root, ())
    if builder.problems:
        raise StrategyFileError(builder.problems)
    return data, smap


MAX_LINE_CHARS = 10_000
"""No line of a strategy needs more (an expression is at most 1000 characters)."""


def _refuse_long_lines(text: str, file: str) -> None:
    """Refuse a line longer than :data:`MAX_LINE_CHARS` before the parser reads it."""
    for number, line in enumerate(text.split("\n"), 1):
        if len(line) > MAX_LINE_CHARS:
            raise ConfigError(
                f"line {number} is {len(line):,} characters long (at most {MAX_LINE_CHARS:,})",
                where=Location(file=file, line=number, column=MAX_LINE_CHARS + 1),
                hint="break it up: a strategy line holds a key and a short value or expression",
            )


_MAX_FLOW_DEPTH = 64


def _refuse_deep_flow(text: str, file: str) -> None:
    """Refuse ``[`` / ``{`` nested deeper than any strategy needs before ruamel recurses into
    them (thousands of ``{`` took seconds to fail). Quoted text and comments are skipped."""
    depth, quote, line, column = 0, "", 1, 0
    previous = "\n"
    for char in text:
        column += 1
        if char == "\n":
            line, column, quote = line + 1, 0, "" if quote == "#" else quote
        elif quote:
            if char == quote or (quote == "#" and char == "\n"):
                quote = ""
        elif char in "'\"" or (char == "#" and previous in " \t\n"):
            quote = char
        elif char in "[{":
            depth += 1
            if depth > _MAX_FLOW_DEPTH:
                raise ConfigError(
                    f"brackets nested more than {_MAX_FLOW_DEPTH} levels deep",
                    where=Location(file=file, line=line, column=column),
                    hint="a strategy needs a few levels at most: close the brackets",
                )
        elif char in "]}":
            depth = max(0, depth - 1)
        previous = char


_START_HINT = "start with 'strategy: NAME', 'symbol: SYMBOL', 'every: 1m' and a list of 'rules:'"

"""Go's RE2 regexes (as gitleaks writes them) in Python's ``re``: what ``re`` spells differently is
translated, what it lacks is refused (``RegexProblem``) naming what. Standard library only: this
module is on the hook path."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

MAX_DEPTH = 100
"""Groups nested deeper than this are refused: no real rule needs them, and rendering stays bounded."""


class RegexProblem(ValueError):
    """A regex loopx cannot use as written: the message says what and why."""


class GroupProblem(RegexProblem):
    """The secret group named is not a group of the regex."""


_POSIX = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "ascii": "\\x00-\\x7f",
    "blank": "\\t ",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": "\\t\\n\\v\\f\\r ",
    "upper": "A-Z",
    "word": "0-9A-Za-z_",
    "xdigit": "0-9A-Fa-f",
}


_GROUP_NAME = re.compile(r"\(\?P?<([A-Za-z_][A-Za-z0-9_]*)>")


_FLAGS = re.compile(r"\(\?([imsU]*(?:-[imsU]*)?)([:)])")


@dataclass
class _Group:
    opener: str
    """``(``, ``(?:``, ``(?i:``, ``(?=``…; ``""`` for the whole pattern."""
    name: str | None = None
    capturing: bool = False
    alts: list | None = None

    def __post_init__(self) -> None:
        self.alts = [[]]


@dataclass(frozen=True)
class _Flags:
    flags: str


def _escape(regex: str, i: int, in_class: bool) -> tuple[str, int]:
    """The escape at ``regex[i]`` (a backslash) in Python's spelling, and where the next token starts."""
    if i + 1 >= len(regex):
        raise RegexProblem("it ends with a lone backslash")
    ch = regex[i + 1]
    if ch == "Q":  # \Q...\E: a literal
        end = regex.find("\\E", i + 2)
        literal = regex[i + 2 :] if end < 0 else regex[i + 2 : end]
        return re.escape(literal), len(regex) if end < 0 else end + 2
    if ch == "z" and not in_class:
        return "\\Z", i + 2
    if ch == "x" and regex.startswith("{", i + 2):
        end = regex.find("}", i + 3)
        digits = regex[i + 3 : end] if end > 0 else ""
        if not re.fullmatch(r"[0-9A-Fa-f]{1,6}", digits) or int(digits, 16) > 0x10FFFF:
            raise RegexProblem("\\x{…} does not hold a hexadecimal code point")
        return f"\\U{int(digits, 16):08x}", end + 1
    if ch in "pP":
        raise RegexProblem(
            f"\\{ch} (a Unicode character class) has no equivalent in Python's re; use a character class"
        )
    if ch == "C":
        raise RegexProblem("\\C (any byte) has no equivalent in Python's re")
    return regex[i : i + 2], i + 2


def _char_class(regex: str, i: int) -> tuple[str, int]:
    """The class starting at ``regex[i]`` (``[``) in Python's spelling, and where the next token starts."""
    out = ["["]
    j = i + 1
    if regex.startswith("^", j):
        out.append("^")
        j += 1
    if regex.startswith("]", j):  # a leading ] is a literal
        out.append("\\]")
        j += 1
    while j < len(regex):
        ch = regex[j]
        if ch == "]":
            return "".join(out) + "]", j + 1
        if ch == "\\":
            text, j = _escape(regex, j, in_class=True)
            out.append(text)
            continue
        if ch == "[" and regex.startswith(":", j + 1):
            end = regex.find(":]", j + 2)
            name = regex[j + 2 : end] if end > 0 else ""
            if name.startswith("^"):
                raise RegexProblem(f"the negated POSIX class [:{name}:] has no equivalent in Python's re")
            if name not in _POSIX:
                raise RegexProblem(f"[:{name}:] is not a POSIX character class")
            out.append(_POSIX[name])
            j = end + 2
            continue
        # Python warns that these may one day mean set operations; escaped, they are the literals RE2 reads
        out.append("\\" + ch if ch in "[&~|" else ch)
        j += 1
    raise RegexProblem("a character class '[' is never closed")


def _parse(regex: str) -> _Group:
    root = _Group("")
    stack = [root]
    i = 0
    while i < len(regex):
        ch = regex[i]
        seq = stack[-1].alts[-1]  # type: ignore[index]
        if ch == "\\":
            text, i = _escape(regex, i, in_class=False)
            seq.append(text)
        elif ch == "[":
            text, i = _char_class(regex, i)
            seq.append(text)
        elif ch == "|":
            stack[-1].alts.append([])  # type: ignore[union-attr]
            i += 1
        elif ch == ")":
            if len(stack) == 1:
                raise RegexProblem(f"the ')' at position {i} closes no group")
            stack.pop()
            i += 1
        elif regex.startswith(("(?#", "(?P="), i):  # a comment or a back-reference: Python's, kept whole
            end = regex.find(")", i)
            if end < 0:
                raise RegexProblem("a '(?' group is never closed")
            seq.append(regex[i : end + 1])
            i = end + 1
        elif ch == "(":
            group, i = _open(regex, i)
            if isinstance(group, _Flags):
                seq.append(group)
                continue
            seq.append(group)
            stack.append(group)
            if len(stack) > MAX_DEPTH:
                raise RegexProblem(f"groups nest more than {MAX_DEPTH} deep")
        else:
            seq.append(ch)
            i += 1
    if len(stack) > 1:
        raise RegexProblem("a '(' is never closed")
    return root


def _open(regex: str, i: int) -> tuple[_Group | _Flags, int]:
    """The group opening at ``regex[i]``, and where its body starts."""
    if not regex.startswith("(?", i):
        return _Group("(", capturing=True), i + 1
    named = _GROUP_NAME.match(regex, i)
    if named:
        return _Group("(", name=named.group(1), capturing=True), named.end()
    for opener in ("(?:", "(?=", "(?!", "(?<=", "(?<!"):
        if regex.startswith(opener, i):
            return _Group(opener), i + len(opener)
    flags = _FLAGS.match(regex, i)
    if flags and flags.group(1).strip("-"):
        if "U" in flags.group(1):
            raise RegexProblem("the flag U (ungreedy) has no equivalent in Python's re; write lazy quantifiers (*?)")
        if flags.group(2) == ")":
            return _Flags(flags.group(1)), flags.end()
        return _Group(f"(?{flags.group(1)}:"), flags.end()
    raise RegexProblem(f"the group syntax at position {i} is not one RE2 or Python knows")


def _merge(flags: list[str]) -> str:
    """Leading flag groups as one global ``(?…)``: only the flags left on count."""
    on: set[str] = set()
    for group in flags:
        plus, _, minus = group.partition("-")
        on |= set(plus)
        on -= set(minus)
    return f"(?{''.join(sorted(on))})" if on else ""


def translate(regex: str, secret_group: int | str | None = None) -> str:
    """``regex`` (RE2 or Python syntax) as a Python regex whose group ``s`` is the secret part:
    the group numbered or named ``secret_group``, else a group already named ``s``, else the first
    group, else the whole match. Raises ``RegexProblem``."""
    root = _parse(regex)
    leading: list[str] = []
    first = root.alts[0]  # type: ignore[index]
    while first and isinstance(first[0], _Flags):
        leading.append(first.pop(0).flags)
    groups = _capturing(root)
    names = [g.name for g in groups]
    if secret_group is None:
        secret_group = "s" if "s" in names else (1 if groups else 0)
    if isinstance(secret_group, str):
        if secret_group not in names:
            raise GroupProblem(f"the regex has no group named {secret_group!r}")
        secret: _Group | None = groups[names.index(secret_group)]
    elif secret_group == 0:
        secret = None
    elif secret_group > len(groups):
        raise GroupProblem(f"the regex has {len(groups)} capturing group(s), so it has no group {secret_group}")
    else:
        secret = groups[secret_group - 1]
    for group in groups:  # RE2 has no back-references: names can change
        group.name = "s" if group is secret else (None if group.name == "s" else group.name)
    body = _render_alts(root.alts)  # type: ignore[arg-type]
    return _merge(leading) + (body if secret is not None else f"(?P<s>{body})")


def _capturing(root: _Group) -> list[_Group]:
    """The capturing groups in the order their ``(`` appears (group 1, 2, …)."""
    out: list[_Group] = []
    stack: list[Any] = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, _Group):
            if node.capturing:
                out.append(node)
            children = [item for seq in node.alts for item in seq]  # type: ignore[union-attr]
            stack.extend(reversed(children))
    return out


def _render_alts(alts: list[list]) -> str:
    """Alternatives of one group. A flag group in mid-sequence (RE2 lets it change the flags for the
    rest of the group, later alternatives included) becomes a scoped ``(?i:…)`` around what follows."""
    out = []
    carried: list[str] = []
    for seq in alts:
        text = _render_seq(seq, carried)
        for flags in reversed(carried[: len(carried) - _count_flags(seq)]):
            text = f"(?{flags}:{text})"
        out.append(text)
    return "|".join(out)


def _count_flags(seq: list) -> int:
    return sum(1 for item in seq if isinstance(item, _Flags))


def _render_seq(seq: list, carried: list[str]) -> str:
    parts: list[str] = []
    for k, item in enumerate(seq):
        if isinstance(item, _Flags):
            carried.append(item.flags)
            rest = _render_seq(seq[k + 1 :], carried)
            return "".join(parts) + f"(?{item.flags}:{rest})"
        if isinstance(item, _Group):
            opener = f"(?P<{item.name}>" if item.capturing and item.name else item.opener
            parts.append(opener + _render_alts(item.alts) + ")")  # type: ignore[arg-type]
        else:
            parts.append(item)
    return "".join(parts)


def compile_regex(regex: str, secret_group: int | str | None) -> str:
    """The translated source, compiled once to be sure it compiles; ``RegexProblem`` otherwise."""
    import warnings

    source = translate(regex, secret_group)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a FutureWarning about a nested set is a regex Python reads otherwise
        try:
            re.compile(source)
        except (re.error, FutureWarning, RecursionError, OverflowError) as exc:
            problem = exc.msg if isinstance(exc, re.error) else str(exc) or type(exc).__name__
            raise RegexProblem(f"it does not compile in Python's re ({problem})") from None
    return source

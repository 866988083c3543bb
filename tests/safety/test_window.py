"""A window over the end of a long stream keeps whole lines only, so redaction sees every secret in it
whole: the line the window starts inside goes, a key body whose header went goes, and so does a last
line still being written."""

from __future__ import annotations

import random

from loopx_git.safety.scan import redact
from loopx_git.safety.window import whole_lines
from tests.safety.corpus import SHAPES
from tests.safety.parts import B64, cat, rand

TOKEN = SHAPES["github-token"][0](random.Random(3))  # assembled at run time: no literal in this file


def key(rng: random.Random, lines: int) -> list[str]:
    body = [rand(rng, 64, B64) for _ in range(lines)]
    return [cat("-----BEGIN ", "EC PRIVATE KEY-----"), *body, cat("-----END ", "EC PRIVATE KEY-----")]


def test_a_whole_stream_is_kept_as_it_is():
    assert whole_lines(b"one\ntwo") == "one\ntwo"
    assert whole_lines(b"one\ntwo\n", limit=100) == "one\ntwo\n"


def test_the_line_the_window_starts_inside_is_dropped_and_the_cut_counted():
    data = f"{'x' * 50}{TOKEN}\nnext line\nlast\n".encode()
    start = len(data) - 30  # inside the token
    text = whole_lines(data, limit=30)
    assert text == f"[cut: {50 + len(TOKEN) + 1} bytes]\nnext line\nlast\n"
    assert TOKEN[-8:] not in text
    assert whole_lines(data[start:], dropped=start) == text  # bytes already dropped by the caller count the same


def test_a_window_without_a_line_start_keeps_only_the_marker():
    assert whole_lines(b"y" * 100, limit=10) == "[cut: 100 bytes]"
    assert whole_lines(b"y" * 99 + b"\n", limit=10) == "[cut: 100 bytes]\n"


def test_a_key_body_whose_header_was_cut_off_goes_with_it():
    lines = key(random.Random(1), 12)
    for shown in (lines, lines[:-1]):  # with its end line, and without
        data = "\n".join(["before", *shown, "after the key", ""]).encode()
        text = whole_lines(data, limit=len(data) - 100)  # inside the body: no header in the window
        assert text.endswith("\nafter the key\n") and text.startswith("[cut: ")
        assert not any(line[:16] in text for line in lines[1:-1])


def test_a_key_whose_header_is_in_the_window_is_kept_for_redaction():
    lines = key(random.Random(2), 6)
    data = ("x" * 30 + "\n" + "\n".join(lines) + "\nafter\n").encode()
    text = whole_lines(data, limit=len(data) - 10)
    assert "-----BEGIN" in text and "[REDACTED:private-key]" in redact(text)[0]


def test_a_stream_still_being_written_leaves_its_last_line_out():
    assert whole_lines(f"done\n{TOKEN[:20]}".encode(), complete=False) == "done\n"
    assert whole_lines(b"partial", complete=False) == ""
    assert whole_lines(b"a" * 20 + b"\nb.\npartial", limit=12, complete=False) == "[cut: 21 bytes]\nb.\n"


def test_after_a_cut_a_line_that_could_be_key_body_goes_too():
    # the price of never showing a key's headerless body: a short word alone on a line, at the window's start
    assert whole_lines(b"x" * 20 + b"\nDone\nall good.\n", limit=18) == "[cut: 26 bytes]\nall good.\n"

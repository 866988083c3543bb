"""The pre-commit path's reader (the git binary): blobs read in one stream come back in order and
whole, past one chunk of ids; a stream left half read does not leave stale answers behind."""

from __future__ import annotations

import subprocess

import pytest

from loopx_git.errors import StoreError
from loopx_git.store.plumbing import _CHUNK, IndexReader


def _blob(repo, data: bytes) -> str:
    return (
        subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=repo, input=data, capture_output=True, check=True)
        .stdout.decode()
        .strip()
    )


def test_blobs_come_back_in_order_across_chunks(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    contents = [f"file {i}\n".encode() * (i % 7 + 1) for i in range(2 * _CHUNK + 5)]
    contents.append(b"\0binary\n" * 20_000)  # larger than a pipe buffer
    oids = [_blob(tmp_path, data) for data in contents]
    reader = IndexReader.discover(tmp_path)
    try:
        assert list(reader.read_blobs(oids)) == contents
        assert reader.read_blob(oids[3]) == contents[3]
    finally:
        reader.close()


def test_a_stream_left_half_read_does_not_answer_the_next_read(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    contents = [f"blob {i}\n".encode() for i in range(10)]
    oids = [_blob(tmp_path, data) for data in contents]
    reader = IndexReader.discover(tmp_path)
    try:
        stream = reader.read_blobs(oids)
        assert next(stream) == contents[0]
        stream.close()  # nine answers unread
        assert reader.read_blob(oids[7]) == contents[7]
        assert [reader.read_blob(oid) for oid in oids[:3]] == contents[:3]
    finally:
        reader.close()


def test_a_read_started_while_a_stream_is_open_gets_its_own_answers(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    contents = [f"blob {i}\n".encode() for i in range(4)]
    oids = [_blob(tmp_path, data) for data in contents]
    reader = IndexReader.discover(tmp_path)
    try:
        stream = reader.read_blobs(oids[:2])
        assert next(stream) == contents[0]
        assert reader.read_blob(oids[3]) == contents[3]  # not the stream's second answer
        assert next(stream) == contents[1]
        assert [reader.read_blob(oid) for oid in oids] == contents
    finally:
        reader.close()


def test_ids_that_are_not_object_ids_are_refused_and_nothing_is_started_for_none(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    oid = _blob(tmp_path, b"x\n")
    reader = IndexReader.discover(tmp_path)
    try:
        for bad in (oid + "\n" + oid, "missing object", ""):
            with pytest.raises(StoreError):
                reader.read_blob(bad)
        assert list(reader.read_blobs([])) == [] and reader._cat is None
        assert reader.read_blob(oid) == b"x\n"
    finally:
        reader.close()

"""Documents render the same from many threads at once (the demo's claim race does this)."""

from __future__ import annotations

import threading

from loopx_git.store.yaml_doc import render


def test_render_is_safe_across_threads():
    expected = {i: render({"todo_id": f"t{i}", "evidence": ["a", "b"], "reason": None}) for i in range(8)}
    errors, start = [], threading.Barrier(8)

    def work(i: int) -> None:
        start.wait()
        for _ in range(200):
            try:
                if render({"todo_id": f"t{i}", "evidence": ["a", "b"], "reason": None}) != expected[i]:
                    errors.append(f"thread {i}: wrong output")
            except Exception as exc:  # a thread's exception would otherwise only be a warning
                errors.append(f"thread {i}: {exc}")
                return

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert expected[0].decode() == "todo_id: t0\nevidence:\n  - a\n  - b\nreason: null\n"

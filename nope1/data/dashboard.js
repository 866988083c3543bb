window.LOOPX_DASHBOARD = {"goal_id": "g1", "tip": "b9db589cd5d23ec02746ba93e257301acc54fad0", "todo_count": 6, "todo_chunks": 1, "history_chunks": 64, "commit_url": null};

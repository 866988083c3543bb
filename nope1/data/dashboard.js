window.LOOPX_DASHBOARD = {"goal_id": "g1", "tip": "b685c8b9ad946d4f523c7673fabb17f8029302ed", "todo_count": 6, "todo_chunks": 1, "history_chunks": 64, "commit_url": null};

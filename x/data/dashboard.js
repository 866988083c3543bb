window.LOOPX_DASHBOARD = {"goal_id": "nope1", "tip": "5869fddd0bfc8a1c81d5ad80337bfab7dcf10cf9", "todo_count": 1, "todo_chunks": 1, "history_chunks": 64, "commit_url": null};

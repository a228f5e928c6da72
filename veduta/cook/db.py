"""doit's dependency database for cook: sqlite3, read in one query.

doit's own ``sqlite3`` backend is crash-safe (writes go in one transaction at
the end of a run) but runs one SELECT per task; with 10,000 tasks that is a
large share of a no-op cook.  This backend reads every row at open and
decodes a row's JSON only when that task is asked for.  Registered as the doit
backend ``veduta`` (entry point ``doit.BACKEND``).
"""

from __future__ import annotations

from doit.dependency import SqliteDB


class CookDB(SqliteDB):
    desc = "sqlite3, preloaded in one query (veduta cook)"

    def __init__(self, name, codec, *, module_name=None):
        super().__init__(name, codec, module_name=module_name)
        self._raw: dict[str, str] = {}
        try:
            cur = self._conn.execute("select task_id, cast(task_data as text) as d from doit")
            self._raw = {row["task_id"]: row["d"] for row in cur}
        except Exception:  # an unreadable DB behaves like an empty one (doit rebuilds)
            self._raw = {}

    def _get_task_data(self, task_id):
        raw = self._raw.pop(task_id, None)
        return self.codec.decode(raw) if raw else {}

    def in_(self, task_id):
        return task_id in self._cache or task_id in self._raw

    def remove(self, task_id):
        self._raw.pop(task_id, None)
        super().remove(task_id)

    def remove_all(self):
        self._raw.clear()
        super().remove_all()

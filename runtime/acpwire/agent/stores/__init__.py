"""Durable session stores for `serve_turns` / `turn_agents`: `SqliteSessionStore` (a file,
standard library only: the embedded default for one machine) and `RedisSessionStore` (a
Redis server shared by several server processes). Both write history from a thread of their
own in batches (`HistoryWriter`), so recording stays cheap on the send path of every update.
"""

from .redis_store import RedisSessionStore
from .sqlite import SqliteSessionStore

__all__ = ["RedisSessionStore", "SqliteSessionStore"]

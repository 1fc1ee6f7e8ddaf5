"""The request recorder's request side, compiled (``alertstation.traffic.recorder.PyTap``'s twin).

Product code gets it through ``alertstation.traffic.recorder.Tap``, which is this class when it
is built and ``PyTap`` otherwise.
"""

from collections.abc import Callable
from typing import Any

class Tap:
    """Decide whether a request is recorded and queue its fields (see ``PyTap``)."""

    def __init__(
        self,
        cache: Any,
        monotonic: Callable[[], float],
        now: Callable[[], float],
        recorder: Any,
        pending: Any,
        internal: dict[str, bool],
        is_internal: Callable[[str], bool],
        is_bot: Callable[[str], bool],
        mask: Callable[[str], str],
        body_length: Callable[[Any], int | None],
        perf_counter: Callable[[], float],
        on_error: Callable[[Exception], None],
        plain_request: type | None = None,
        plain_response: type | None = None,
    ) -> None: ...
    def follow(self, state: tuple[float, Any, Any]) -> None:
        """Take the settings cache's ``state`` (the cache hands each new one to its taps)."""
    def process_response(self, req: Any, resp: Any, resource: Any, req_succeeded: bool) -> None:
        """Falcon's response hook: queue the request's fields when the settings record it."""

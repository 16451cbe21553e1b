"""A Streamlit client without a browser, for tests that need many sessions at once: it opens the app's
websocket and sends recorded ``BackMsg`` frames (what a browser sent), one script run at a time.

Run in child processes by ``test_two_servers.py`` (importable by name, as multiprocessing needs).
"""

from __future__ import annotations

import asyncio
from typing import Any

#: How a script run may end and still count as done (a run interrupted by a rerun is followed by another).
_DONE = ("FINISHED_SUCCESSFULLY", "FINISHED_FRAGMENT_RUN_SUCCESSFULLY")


async def replay(
    url: str, frames: list[bytes], before_last: Any = None, timeout_s: float = 180.0
) -> list[bytes]:
    """Open a new session on the server at ``url``, send each recorded ``rerun_script`` frame and wait for
    its run to finish; ``before_last`` (a callable) runs before the last frame is sent. Returns every
    ``ForwardMsg`` the server sent during the last frame's run, as bytes."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from websockets.asyncio.client import connect

    runs = [f for f in frames if BackMsg.FromString(f).WhichOneof("type") == "rerun_script"]
    received: list[bytes] = []
    stream = url.replace("http://", "ws://") + "/_stcore/stream"
    async with connect(stream, subprotocols=["streamlit"], max_size=None) as ws:  # type: ignore[list-item]
        for i, frame in enumerate(runs):
            if i == len(runs) - 1 and before_last is not None:
                await asyncio.get_running_loop().run_in_executor(None, before_last)
            received = []
            await ws.send(frame)
            while True:
                raw = await asyncio.wait_for(ws.recv(), timeout_s)
                if isinstance(raw, str):
                    continue
                received.append(raw)
                msg = ForwardMsg.FromString(raw)
                finished = msg.WhichOneof("type") == "script_finished"
                if finished and ForwardMsg.ScriptFinishedStatus.Name(msg.script_finished) in _DONE:
                    break
    return received


def release_through(url: str, frames: list[bytes], ready: Any, start: Any, results: Any) -> None:
    """In a child process: replay ``frames`` (a release) on the server at ``url``, all but the last before
    the start signal; report what the last run showed: ("released" | "not released", whether an exception
    was shown, a sample of its text)."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    def wait() -> None:
        ready.put(("ready", url))
        start.wait()

    received = asyncio.run(replay(url, frames, before_last=wait))
    shown = b"\n".join(received)
    crashed = any(
        m.WhichOneof("type") == "delta" and m.delta.new_element.WhichOneof("type") == "exception"
        for m in map(ForwardMsg.FromString, received)
    )
    outcome = "released" if "Released ·".encode() in shown else "not released"
    results.put((outcome, crashed, shown.decode("utf-8", "replace")[-2000:]))

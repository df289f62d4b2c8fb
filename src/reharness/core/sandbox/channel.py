"""Deadline-bounded I/O on a worker's pipes, in a blocking and an asyncio flavour (part of L5).

Both directions are non-blocking and share one monotonic deadline per call: a worker that stops reading while
the parent sends a large ``ctx`` cannot block the parent (REFERENCE.md §6 §4 item 6), and a worker that never
answers is detected at the deadline, not later. The blocking flavour waits with ``poll``; the asyncio flavour
registers the fd with the running loop, so many workers can be driven concurrently from one thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import select
import time

from reharness.core.sandbox.frames import FrameReader

#: A pipe holds 64 KiB; asking os.read for more makes it malloc (mmap) a huge buffer on every call (~40 µs).
_READ_CHUNK = 1 << 16


class Expired(Exception):
    """The deadline passed before the transfer completed."""


class Closed(Exception):
    """The worker's end of a pipe is gone (it exited or crashed)."""


class Pipes:
    """The parent's ends of a worker's two pipes (non-blocking) and the reader of its frames."""

    def __init__(self, rfd: int, wfd: int, max_frame: int) -> None:
        self.rfd, self.wfd = rfd, wfd
        os.set_blocking(rfd, False)
        os.set_blocking(wfd, False)
        self.reader = FrameReader(max_frame)
        self.rpoll = select.poll()
        self.rpoll.register(rfd, select.POLLIN)
        self.wpoll = select.poll()
        self.wpoll.register(wfd, select.POLLOUT)

    def close(self) -> None:
        for fd in (self.rfd, self.wfd):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.rfd = self.wfd = -1


def _ms(deadline: float) -> int:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise Expired
    return max(1, math.ceil(remaining * 1000))


def send(pipes: Pipes, data: bytes, deadline: float) -> None:
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(pipes.wfd, view) :]
            continue
        except BlockingIOError:
            pass
        except OSError:
            raise Closed from None
        pipes.wpoll.poll(_ms(deadline))


def recv(pipes: Pipes, deadline: float) -> bytes:
    reader = pipes.reader
    while True:
        body = reader.next_frame()
        if body is not None:
            return body
        if not pipes.rpoll.poll(_ms(deadline)):
            continue
        try:
            data = os.read(pipes.rfd, _READ_CHUNK)
        except BlockingIOError:
            continue
        except OSError:
            raise Closed from None
        if not data:
            raise Closed
        reader.feed(data)


async def _ready(fd: int, deadline: float, write: bool) -> None:
    """Wait until ``fd`` is ready or the deadline passes (then the caller's next attempt raises)."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise Expired
    loop = asyncio.get_running_loop()
    future: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        if not future.done():
            future.set_result(None)

    (loop.add_writer if write else loop.add_reader)(fd, wake)
    timer = loop.call_later(remaining, wake)
    try:
        await future
    finally:
        timer.cancel()
        (loop.remove_writer if write else loop.remove_reader)(fd)


async def asend(pipes: Pipes, data: bytes, deadline: float) -> None:
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(pipes.wfd, view) :]
            continue
        except BlockingIOError:
            pass
        except OSError:
            raise Closed from None
        await _ready(pipes.wfd, deadline, write=True)


async def arecv(pipes: Pipes, deadline: float) -> bytes:
    reader = pipes.reader
    while True:
        body = reader.next_frame()
        if body is not None:
            return body
        try:
            data = os.read(pipes.rfd, _READ_CHUNK)
        except BlockingIOError:
            await _ready(pipes.rfd, deadline, write=False)
            continue
        except OSError:
            raise Closed from None
        if not data:
            raise Closed
        reader.feed(data)

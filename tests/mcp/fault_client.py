"""A real MCP client (the official Python SDK) for the proxy's fault tests; prints JSON.

Usage:
  fault_client.py STEPS_JSON stdio COMMAND [ARGS...]
  fault_client.py STEPS_JSON http URL

Steps (a JSON list), each {"op": ...}:
  {"op": "call_tool", "name": N, "arguments": {...}, "timeout": SECONDS?}
  {"op": "list_tools"}
  {"op": "set_level", "level": L}           logging/setLevel
  {"op": "subscribe", "uri": U}             resources/subscribe
  {"op": "unsubscribe", "uri": U}           resources/unsubscribe
  {"op": "sleep", "seconds": S}
  {"op": "touch", "path": P}                creates the file P (tells the test a point is reached)
  {"op": "wait_for_file", "path": P}        waits until the test creates P
  {"op": "parallel", "steps": [...]}        runs the steps concurrently, results in order
  {"op": "cancel", "after": S, "step": {call_tool step}}
                                            sends notifications/cancelled for the call after S
                                            seconds and stops waiting for it

Output: {"server_info": ..., "steps": [...], "notifications": [method, ...]}, or
{"initialize_error": message} when the handshake fails. Each step result is the SDK's model
dumped as JSON or {"error": message}, with "elapsed_ms" added.
"""

import asyncio
import json
import os
import sys
import time
from contextlib import AsyncExitStack
from datetime import timedelta

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def run_step(session, step):
    started = time.monotonic()
    try:
        result = await run_op(session, step)
    except Exception as error:  # noqa: BLE001 - reported to the test as data
        result = {"error": str(error)}
    result["elapsed_ms"] = int((time.monotonic() - started) * 1000)
    return result


async def run_op(session, step):
    op = step["op"]
    if op == "call_tool":
        timeout = step.get("timeout")
        return dump(await session.call_tool(
            step["name"],
            step.get("arguments", {}),
            read_timeout_seconds=timedelta(seconds=timeout) if timeout else None,
        ))
    if op == "list_tools":
        return dump(await session.list_tools())
    if op == "set_level":
        return dump(await session.set_logging_level(step["level"]))
    if op == "subscribe":
        return dump(await session.subscribe_resource(step["uri"]))
    if op == "unsubscribe":
        return dump(await session.unsubscribe_resource(step["uri"]))
    if op == "sleep":
        await anyio.sleep(step["seconds"])
        return {}
    if op == "touch":
        open(step["path"], "w").close()
        return {}
    if op == "wait_for_file":
        while not os.path.exists(step["path"]):
            await anyio.sleep(0.02)
        return {}
    if op == "parallel":
        results = [None] * len(step["steps"])

        async def one(index, inner):
            results[index] = await run_step(session, inner)

        async with anyio.create_task_group() as group:
            for index, inner in enumerate(step["steps"]):
                group.start_soon(one, index, inner)
        return {"results": results}
    if op == "cancel":
        # The SDK numbers requests in order and has no public way to cancel one; the next
        # request it sends gets this id.
        request_id = session._request_id
        async with anyio.create_task_group() as group:
            group.start_soon(run_step, session, step["step"])
            await anyio.sleep(step["after"])
            await session.send_notification(types.ClientNotification(types.CancelledNotification(
                params=types.CancelledNotificationParams(requestId=request_id, reason="test"),
            )))
            group.cancel_scope.cancel()
        return {"cancelled": request_id}
    raise ValueError(f"unknown op {op}")


async def run(steps, mode, target):
    notifications = []

    async def on_message(message):
        if isinstance(message, types.ServerNotification):
            notifications.append(message.root.method)

    report = {}
    try:
        async with AsyncExitStack() as stack:
            if mode == "stdio":
                params = StdioServerParameters(command=target[0], args=target[1:])
                read, write = await stack.enter_async_context(stdio_client(params))
            else:
                read, write, _ = await stack.enter_async_context(streamablehttp_client(target[0]))
            session = await stack.enter_async_context(
                ClientSession(read, write, message_handler=on_message)
            )
            try:
                init = await session.initialize()
            except Exception as error:  # noqa: BLE001
                report["initialize_error"] = str(error)
                return report
            results = [await run_step(session, step) for step in steps]
            report.update(
                {"server_info": dump(init), "steps": results, "notifications": notifications}
            )
    except BaseException:  # noqa: BLE001
        # The SDK may fail while closing a session whose server went away; what the steps
        # returned is complete by then.
        if "steps" not in report and "initialize_error" not in report:
            raise
    return report


def main():
    steps = json.loads(sys.argv[1])
    report = asyncio.run(run(steps, sys.argv[2], sys.argv[3:]))
    json.dump(report, sys.stdout)


if __name__ == "__main__":
    main()

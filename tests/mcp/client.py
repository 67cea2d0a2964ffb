"""A real MCP client (the official Python SDK) that runs steps against a server and prints JSON.

Usage:
  client.py STEPS_JSON stdio COMMAND [ARGS...]
  client.py STEPS_JSON http URL

STEPS_JSON is a JSON list of steps, each {"op": ..., ...}; a call_tool step may set "timeout"
(seconds) to fail instead of waiting forever; a call_tool_as_task step runs a tool as an MCP task
(see run_task); an argument "$ref_of_step:N" is replaced by the ref named in step N's result
("original kept as cx_…"), since refs are keyed and cannot be known in advance. The output is one
JSON object:
{"server_info": ..., "steps": [result, ...], "progress": [...], "logs": [...], "elicitations": [...],
"task_statuses": [...]} (the parameters of each elicitation request the server sent, declined;
of each task status notification), where each result
is the SDK's model dumped as JSON (by alias, without nulls) or {"error": message}.
"""

import asyncio
import json
import sys
import warnings
from contextlib import AsyncExitStack
from datetime import timedelta

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def sampling_callback(context, params):
    # A canned model: answers with the prompt's first text, so tests can see the round trip.
    first = params.messages[0].content
    text = getattr(first, "text", "")
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text=f"sampled: {text}"),
        model="test-model",
        stopReason="endTurn",
    )


async def elicitation_callback(context, params):
    # Records what the server asked, exactly as it arrived, and declines.
    ELICITATIONS.append(dump(params))
    return types.ElicitResult(action="decline")


ELICITATIONS = []
TASK_STATUSES = []


async def message_handler(message):
    # Task status notifications (2025-11-25), in the order they came.
    if isinstance(message, types.ServerNotification) and isinstance(
        message.root, types.TaskStatusNotification
    ):
        TASK_STATUSES.append(dump(message.root.params))


async def list_roots_callback(context):
    return types.ListRootsResult(roots=[types.Root(uri="file:///test-root", name="test-root")])


async def run_task(session, step):
    """A tool called as a task (2025-11-25): created, polled to the end, listed, its result
    fetched; or, with "cancel", cancelled once created."""
    with warnings.catch_warnings():
        # The SDK marks 2025-11-25 tasks deprecated; they are what the proxy must relay.
        warnings.simplefilter("ignore", DeprecationWarning)
        tasks = session.experimental
    created = await tasks.call_tool_as_task(step["name"], step.get("arguments", {}), ttl=60000)
    task_id = created.task.taskId
    if step.get("cancel"):
        cancelled = await tasks.cancel_task(task_id)
        return {"created": dump(created), "cancelled": dump(cancelled)}
    statuses = [status.status async for status in tasks.poll_task(task_id)]
    listed = await tasks.list_tasks()
    final = await tasks.get_task_result(task_id, types.CallToolResult)
    return {
        "created": dump(created),
        "statuses": statuses,
        "listed": [task.taskId for task in listed.tasks],
        "result": dump(final),
    }


def resolve_refs(arguments, results):
    def ref_of(index):
        text = json.dumps(results[index])
        start = text.find("cx_")
        end = start + 3
        while end < len(text) and text[end] in "0123456789abcdef":
            end += 1
        return text[start:end] if start >= 0 else ""

    return {
        key: ref_of(int(value.split(":", 1)[1]))
        if isinstance(value, str) and value.startswith("$ref_of_step:")
        else value
        for key, value in arguments.items()
    }


async def run(steps, mode, target):
    report = {}
    try:
        await run_into(report, steps, mode, target)
    except BaseException:  # noqa: BLE001
        # The SDK may fail while closing (a notification racing the shutdown); what the steps
        # returned is complete by then.
        if "steps" not in report:
            raise
    return report


async def run_into(report, steps, mode, target):
    progress = []
    logs = []

    async def logging_callback(params):
        logs.append(dump(params))

    async with AsyncExitStack() as stack:
        if mode == "stdio":
            params = StdioServerParameters(command=target[0], args=target[1:])
            read, write = await stack.enter_async_context(stdio_client(params))
        else:
            read, write, _ = await stack.enter_async_context(streamablehttp_client(target[0]))
        session = await stack.enter_async_context(
            ClientSession(
                read,
                write,
                sampling_callback=sampling_callback,
                list_roots_callback=list_roots_callback,
                elicitation_callback=elicitation_callback,
                logging_callback=logging_callback,
                message_handler=message_handler,
            )
        )
        init = await session.initialize()
        results = []
        for step in steps:
            op = step["op"]
            try:
                if op == "list_tools":
                    result = await session.list_tools()
                elif op == "call_tool":
                    async def on_progress(value, total, message, name=step["name"]):
                        progress.append({"tool": name, "progress": value, "total": total})

                    timeout = step.get("timeout")
                    result = await session.call_tool(
                        step["name"],
                        resolve_refs(step.get("arguments", {}), results),
                        read_timeout_seconds=timedelta(seconds=timeout) if timeout else None,
                        progress_callback=on_progress,
                    )
                elif op == "call_tool_as_task":
                    result = await run_task(session, step)
                elif op == "list_resources":
                    result = await session.list_resources()
                elif op == "list_resource_templates":
                    result = await session.list_resource_templates()
                elif op == "read_resource":
                    result = await session.read_resource(step["uri"])
                elif op == "list_prompts":
                    result = await session.list_prompts()
                elif op == "get_prompt":
                    result = await session.get_prompt(step["name"], step.get("arguments", {}))
                elif op == "complete":
                    result = await session.complete(
                        types.PromptReference(type="ref/prompt", name=step["prompt"]),
                        argument={"name": step["argument"], "value": step["value"]},
                    )
                elif op == "set_level":
                    result = await session.set_logging_level(step["level"])
                elif op == "ping":
                    result = await session.send_ping()
                else:
                    raise ValueError(f"unknown op {op}")
                results.append(result if isinstance(result, dict) else dump(result))
            except Exception as error:  # noqa: BLE001 - reported to the test as data
                results.append({"error": str(error)})
        report.update(
            {
                "server_info": dump(init),
                "steps": results,
                "progress": progress,
                "logs": logs,
                "elicitations": ELICITATIONS,
                "task_statuses": TASK_STATUSES,
            }
        )


def main():
    steps = json.loads(sys.argv[1])
    mode = sys.argv[2]
    report = asyncio.run(run(steps, mode, sys.argv[3:]))
    json.dump(report, sys.stdout)


if __name__ == "__main__":
    main()

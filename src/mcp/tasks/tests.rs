use rmcp::RoleServer;
use rmcp::model::{ClientRequest, JsonRpcMessage, RequestId, ServerResult};
use rmcp::service::RxJsonRpcMessage;
use serde_json::json;

use super::{Asked, Pending, from_client, from_upstream, raw_result, to_client};

fn parse_from_client(mut message: serde_json::Value) -> ClientRequest {
    from_client(&mut message);
    match serde_json::from_value::<RxJsonRpcMessage<RoleServer>>(message).expect("parses") {
        JsonRpcMessage::Request(request) => request.request,
        other => panic!("not a request: {other:?}"),
    }
}

#[test]
fn task_requests_reach_the_proxy_whole_as_custom_requests() {
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "slow", "arguments": {"a": 1}, "task": {"ttl": 60000}}});
    let ClientRequest::CustomRequest(custom) = parse_from_client(call) else {
        panic!("a task-augmented call is relayed whole");
    };
    assert_eq!(custom.method, "condense-raw/tools/call");
    assert_eq!(custom.params.unwrap()["task"]["ttl"], 60000);
    for method in ["tasks/get", "tasks/list", "tasks/cancel", "tasks/result"] {
        let request =
            json!({"jsonrpc": "2.0", "id": 2, "method": method, "params": {"taskId": "t1"}});
        let ClientRequest::CustomRequest(custom) = parse_from_client(request) else {
            panic!("{method} is relayed whole");
        };
        assert_eq!(custom.method, format!("condense-raw/{method}"));
    }
    // A call without a task stays rmcp's own.
    let plain = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "x"}});
    assert!(matches!(
        parse_from_client(plain),
        ClientRequest::CallToolRequest(_)
    ));
}

#[test]
fn the_tasks_capability_and_tool_execution_survive_both_ways() {
    // The upstream's initialize answer: `tasks` rides in `experimental` through rmcp.
    let tasks = json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}});
    let mut answer = json!({"jsonrpc": "2.0", "id": 0, "result": {
        "protocolVersion": "2025-11-25", "serverInfo": {"name": "s", "version": "1"},
        "capabilities": {"tools": {}, "tasks": tasks}}});
    from_upstream(Asked::Initialize, &mut answer);
    let parsed: rmcp::service::RxJsonRpcMessage<rmcp::RoleClient> =
        serde_json::from_value(answer).expect("parses");
    let mut back = serde_json::to_value(&parsed).unwrap();
    to_client(&mut back);
    assert_eq!(back["result"]["capabilities"]["tasks"], tasks);
    assert!(
        back["result"]["capabilities"].get("experimental").is_none(),
        "{back}"
    );

    let mut listed = json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [
        {"name": "slow", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "required"}},
        {"name": "fast", "inputSchema": {"type": "object"}, "_meta": {"k": 1}}]}});
    from_upstream(Asked::ListTools, &mut listed);
    let parsed: rmcp::service::RxJsonRpcMessage<rmcp::RoleClient> =
        serde_json::from_value(listed).expect("parses");
    let mut back = serde_json::to_value(&parsed).unwrap();
    to_client(&mut back);
    assert_eq!(
        back["result"]["tools"][0]["execution"]["taskSupport"],
        "required"
    );
    assert!(back["result"]["tools"][0].get("_meta").is_none(), "{back}");
    assert_eq!(back["result"]["tools"][1]["_meta"], json!({"k": 1}));

    // The client's capability goes to the upstream as the client sent it.
    let mut init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "clientInfo": {"name": "c", "version": "1"},
        "capabilities": {"tasks": {"list": {}}}}});
    from_client(&mut init);
    let parsed: RxJsonRpcMessage<RoleServer> = serde_json::from_value(init).expect("parses");
    let mut sent = serde_json::to_value(&parsed).unwrap();
    let mut pending = Pending::default();
    pending.sent_upstream(RequestId::Number(0), Asked::Initialize, &mut sent);
    assert_eq!(sent["params"]["capabilities"]["tasks"], json!({"list": {}}));
    assert_eq!(pending.take(&RequestId::Number(0)), Some(Asked::Initialize));
    assert!(pending.is_empty());
}

#[test]
fn a_custom_answer_comes_through_rmcp_unchanged() {
    let task = json!({"task": {"taskId": "t1", "status": "working", "createdAt": "2025-11-25T00:00:00Z",
        "lastUpdatedAt": "2025-11-25T00:00:00Z", "ttl": 60000, "pollInterval": 1000}});
    let mut answer = json!({"jsonrpc": "2.0", "id": 4, "result": task});
    from_upstream(Asked::Custom, &mut answer);
    let parsed: rmcp::service::RxJsonRpcMessage<rmcp::RoleClient> =
        serde_json::from_value(answer).expect("parses");
    let JsonRpcMessage::Response(response) = parsed else {
        panic!("a response");
    };
    let ServerResult::CustomResult(custom) = response.result else {
        panic!("kept as a custom result: {:?}", response.result);
    };
    assert_eq!(raw_result(custom.0), task);
}

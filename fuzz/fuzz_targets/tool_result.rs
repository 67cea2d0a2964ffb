//! The MCP tool-result JSON: anything that parses reads into a ToolResult and writes back to
//! JSON that reads into the same ToolResult.
#![no_main]

use condense::ToolResult;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let result = ToolResult::from_mcp_json(&value);
    let written = result.to_mcp_json();
    let again = ToolResult::from_mcp_json(&written);
    assert!(again == result, "the round trip changed the result");
    assert!(again.to_mcp_json() == written);
});

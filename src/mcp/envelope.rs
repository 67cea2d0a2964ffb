//! What a JSON-RPC message says about itself at its top level — its `id`, and whether it has a
//! `method` — read without parsing the rest, from bytes that may arrive in pieces.
//!
//! A message the transport cannot parse (too large to buffer, nested too deep, or not the shape
//! it should have) must still fail the request it answers: otherwise that request waits
//! forever. Node's MCP SDK writes `id` after `result`, so the scan reads the whole message.

use rmcp::model::RequestId;

/// The longest key or `id` value kept while scanning: longer ones are no ids worth matching.
const MAX_CAPTURE: usize = 256;

/// Where the scan is inside the top-level object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Part {
    /// Before the top-level object opens.
    #[default]
    Outside,
    /// After `{` or `,` at the top level: a key comes next.
    BeforeKey,
    /// Inside a top-level key's string.
    Key,
    /// After a key, before its `:`.
    AfterKey,
    /// Inside the value of the top-level `id`.
    IdValue,
    /// Inside any other top-level value.
    Value,
}

/// A streaming scan of one JSON-RPC message's top level.
#[derive(Debug, Default)]
pub(crate) struct Envelope {
    depth: usize,
    deepest: usize,
    in_string: bool,
    escaped: bool,
    part: Part,
    key: Vec<u8>,
    id_bytes: Vec<u8>,
    id: Option<RequestId>,
    has_method: bool,
}

impl Envelope {
    /// A scan of a whole message.
    pub(crate) fn of(message: &[u8]) -> Self {
        let mut envelope = Envelope::default();
        envelope.feed(message);
        envelope
    }

    /// The message's `id`, once the scan has passed it.
    pub(crate) fn id(&self) -> Option<&RequestId> {
        self.id.as_ref()
    }

    /// Whether the message has a top-level `method`: a request or a notification, not an answer.
    pub(crate) fn has_method(&self) -> bool {
        self.has_method
    }

    /// The deepest nesting seen: the top-level object is 1.
    pub(crate) fn deepest(&self) -> usize {
        self.deepest
    }

    /// Scans the next piece of the message.
    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            if self.in_string {
                self.string_byte(byte);
            } else {
                self.structural_byte(byte);
            }
        }
    }

    fn string_byte(&mut self, byte: u8) {
        let closes = if self.escaped {
            self.escaped = false;
            false
        } else if byte == b'\\' {
            self.escaped = true;
            false
        } else {
            byte == b'"'
        };
        match self.part {
            Part::Key if closes => self.part = Part::AfterKey,
            Part::Key => capture(&mut self.key, byte),
            Part::IdValue => capture(&mut self.id_bytes, byte),
            _ => {}
        }
        if closes {
            self.in_string = false;
        }
    }

    fn structural_byte(&mut self, byte: u8) {
        match byte {
            b'"' => {
                self.in_string = true;
                match self.part {
                    Part::BeforeKey if self.depth == 1 => {
                        self.key.clear();
                        self.part = Part::Key;
                    }
                    Part::IdValue => capture(&mut self.id_bytes, byte),
                    _ => {}
                }
            }
            b'{' | b'[' => {
                self.depth += 1;
                self.deepest = self.deepest.max(self.depth);
                if self.depth == 1 && byte == b'{' {
                    self.part = Part::BeforeKey;
                } else if self.part == Part::IdValue {
                    // An object or array is no id; the capture will not parse as one.
                    capture(&mut self.id_bytes, byte);
                }
            }
            b'}' | b']' => {
                if self.depth == 1 {
                    self.end_value();
                    self.part = Part::Outside;
                }
                self.depth = self.depth.saturating_sub(1);
            }
            b':' if self.depth == 1 && self.part == Part::AfterKey => {
                self.part = match self.key.as_slice() {
                    b"id" => {
                        self.id_bytes.clear();
                        Part::IdValue
                    }
                    b"method" => {
                        self.has_method = true;
                        Part::Value
                    }
                    _ => Part::Value,
                };
            }
            b',' if self.depth == 1 => {
                self.end_value();
                self.part = Part::BeforeKey;
            }
            byte if self.part == Part::IdValue && !byte.is_ascii_whitespace() => {
                capture(&mut self.id_bytes, byte);
            }
            _ => {}
        }
    }

    fn end_value(&mut self) {
        if self.part == Part::IdValue {
            self.id = serde_json::from_slice(&self.id_bytes).ok();
        }
    }
}

fn capture(into: &mut Vec<u8>, byte: u8) {
    if into.len() < MAX_CAPTURE {
        into.push(byte);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::NumberOrString;

    #[test]
    fn finds_a_numeric_id_after_the_result() {
        let envelope = Envelope::of(
            br#"{"result":{"content":[{"id":9,"text":"a\"}"}]},"jsonrpc":"2.0","id":42}"#,
        );
        assert_eq!(envelope.id(), Some(&NumberOrString::Number(42)));
        assert!(!envelope.has_method());
        assert_eq!(envelope.deepest(), 4);
    }

    #[test]
    fn finds_a_string_id_before_the_result_in_pieces() {
        let message = br#"{ "jsonrpc" : "2.0", "id" : "req-\"7", "result" : [[[{"id": 1}]]] }"#;
        let mut envelope = Envelope::default();
        for piece in message.chunks(3) {
            envelope.feed(piece);
        }
        assert_eq!(
            envelope.id(),
            Some(&NumberOrString::String("req-\"7".into()))
        );
    }

    #[test]
    fn a_request_has_a_method_and_a_notification_no_id() {
        let request = Envelope::of(br#"{"jsonrpc":"2.0","id":3,"method":"roots/list"}"#);
        assert!(request.has_method());
        assert_eq!(request.id(), Some(&NumberOrString::Number(3)));
        let notification = Envelope::of(
            br#"{"jsonrpc":"2.0","method":"notifications/message","params":{"id":5}}"#,
        );
        assert!(notification.has_method());
        assert_eq!(notification.id(), None);
    }

    #[test]
    fn ids_nested_deeper_are_not_the_messages() {
        let envelope = Envelope::of(br#"{"result":{"id":1},"error":{"id":2}}"#);
        assert_eq!(envelope.id(), None);
    }

    #[test]
    fn a_cut_message_still_gives_an_id_seen_before_the_cut() {
        let envelope =
            Envelope::of(br#"{"jsonrpc":"2.0","id":12,"result":{"content":[{"text":"abc"#);
        assert_eq!(envelope.id(), Some(&NumberOrString::Number(12)));
    }
}

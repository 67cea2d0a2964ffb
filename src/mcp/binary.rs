//! Images, audio and binary resources in a `tools/call` result, under the tool's
//! [`BinaryPolicy`]: kept, or swapped for a one-line description with a ref.
//!
//! Most agents receive an MCP image as base64 text (and `structuredContent` often repeats it),
//! about one token per three bytes that tells the model nothing. Under
//! [`BinaryPolicy::Replace`] an item over the size limit becomes a text block such as
//! `[image/png, 274,012 bytes, 800x600 px: ref cx_… — condense_retrieve returns it]`; its
//! copy in `structuredContent` keeps its place and keys, only the base64 string becomes that
//! description (so the value keeps the shape the tool's `outputSchema` describes). The item is
//! kept in the engine's store as the JSON of a content block, and `condense_retrieve` with the
//! ref answers with that very block.

use rmcp::model::{CallToolResult, ContentBlock, EmbeddedResource, JsonObject, ResourceContents};
use serde_json::Value;

use crate::Condenser;
use crate::config::{BinaryPolicy, Rule};
use crate::methods::truncate::group;

/// One binary item as it is kept: the content block a retrieval answers with.
fn kept_block(block: &ContentBlock) -> Option<ContentBlock> {
    match block {
        ContentBlock::Image(image) => Some(ContentBlock::image(&image.data, &image.mime_type)),
        ContentBlock::Audio(audio) => Some(ContentBlock::audio(&audio.data, &audio.mime_type)),
        ContentBlock::Resource(embedded) => match &embedded.resource {
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => {
                let mut contents = ResourceContents::blob(blob, uri);
                if let Some(mime) = mime_type {
                    contents = contents.with_mime_type(mime);
                }
                Some(ContentBlock::Resource(EmbeddedResource::new(contents)))
            }
            _ => None,
        },
        _ => None,
    }
}

/// The content block an object of `structuredContent` copies: `{type, data, mimeType}` for
/// images and audio, `{uri, blob, mimeType}` for resources.
fn block_of_object(object: &JsonObject) -> Option<ContentBlock> {
    let mime = object.get("mimeType").and_then(Value::as_str);
    if let Some(blob) = object.get("blob").and_then(Value::as_str) {
        let uri = object
            .get("uri")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let mut contents = ResourceContents::blob(blob, uri);
        if let Some(mime) = mime {
            contents = contents.with_mime_type(mime);
        }
        return Some(ContentBlock::Resource(EmbeddedResource::new(contents)));
    }
    let data = object.get("data").and_then(Value::as_str)?;
    let mime = mime?;
    let audio =
        object.get("type").and_then(Value::as_str) == Some("audio") || mime.starts_with("audio/");
    Some(if audio {
        ContentBlock::audio(data, mime)
    } else {
        ContentBlock::image(data, mime)
    })
}

/// The base64 payload and MIME type of a kept block.
fn payload(block: &ContentBlock) -> Option<(&str, &str)> {
    match block {
        ContentBlock::Image(image) => Some((&image.data, &image.mime_type)),
        ContentBlock::Audio(audio) => Some((&audio.data, &audio.mime_type)),
        ContentBlock::Resource(embedded) => match &embedded.resource {
            ResourceContents::BlobResourceContents {
                blob, mime_type, ..
            } => Some((
                blob,
                mime_type.as_deref().unwrap_or("application/octet-stream"),
            )),
            _ => None,
        },
        _ => None,
    }
}

/// The decoded size of base64 `data` (padding and line breaks not counted).
fn decoded_len(data: &str) -> usize {
    let symbols = data
        .bytes()
        .filter(|b| {
            b.is_ascii_alphanumeric() || *b == b'+' || *b == b'/' || *b == b'-' || *b == b'_'
        })
        .count();
    symbols * 3 / 4
}

/// Decodes the first `bytes` bytes of base64 `data` (enough for an image header).
fn decode_prefix(data: &str, bytes: usize) -> Vec<u8> {
    fn value(symbol: u8) -> Option<u32> {
        match symbol {
            b'A'..=b'Z' => Some(u32::from(symbol - b'A')),
            b'a'..=b'z' => Some(u32::from(symbol - b'a') + 26),
            b'0'..=b'9' => Some(u32::from(symbol - b'0') + 52),
            b'+' | b'-' => Some(62),
            b'/' | b'_' => Some(63),
            _ => None,
        }
    }
    let mut out = Vec::with_capacity(bytes + 2);
    let (mut acc, mut bits) = (0u32, 0u32);
    for value in data.bytes().filter_map(value) {
        acc = (acc << 6) | value;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(((acc >> bits) & 0xff) as u8);
            if out.len() >= bytes {
                break;
            }
        }
    }
    out
}

/// Width and height from a PNG or GIF header, the formats whose size sits at a fixed offset.
fn dimensions(data: &str, mime: &str) -> Option<(u32, u32)> {
    let header = decode_prefix(data, 24);
    let be = |at: usize| Some(u32::from_be_bytes(header.get(at..at + 4)?.try_into().ok()?));
    let le16 = |at: usize| {
        Some(u32::from(u16::from_le_bytes(
            header.get(at..at + 2)?.try_into().ok()?,
        )))
    };
    match mime {
        "image/png" if header.starts_with(b"\x89PNG\r\n\x1a\n") => Some((be(16)?, be(20)?)),
        "image/gif" if header.starts_with(b"GIF8") => Some((le16(6)?, le16(8)?)),
        _ => None,
    }
}

/// The one-line description that replaces an item.
fn describe(data: &str, mime: &str, reference: &str) -> String {
    let size = match dimensions(data, mime) {
        Some((width, height)) => format!("{} bytes, {width}x{height} px", group(decoded_len(data))),
        None => format!("{} bytes", group(decoded_len(data))),
    };
    format!("[{mime}, {size}: not shown; condense_retrieve with ref {reference} returns it]")
}

/// What one result's binary items became.
#[derive(Debug, Default)]
pub(crate) struct Replaced {
    /// The refs handed out, for `condense_retrieve` to answer with blocks.
    pub(crate) refs: Vec<String>,
}

/// Applies `rule`'s binary policy to `result`, keeping replaced items in `engine`'s store.
pub(crate) async fn apply(
    engine: &Condenser,
    owner: Option<&str>,
    rule: &Rule,
    result: &mut CallToolResult,
) -> Replaced {
    let mut replaced = Replaced::default();
    if rule.binary == BinaryPolicy::Keep {
        return replaced;
    }
    for block in &mut result.content {
        let Some(kept) = kept_block(block) else {
            continue;
        };
        let Some((data, mime)) = payload(&kept) else {
            continue;
        };
        if decoded_len(data) <= rule.binary_max_bytes {
            continue;
        }
        let reference = keep(engine, owner, &kept).await;
        *block = ContentBlock::text(describe(data, mime, &reference));
        replaced.refs.push(reference);
    }
    if let Some(structured) = &mut result.structured_content {
        replace_in_value(
            engine,
            owner,
            rule.binary_max_bytes,
            structured,
            &mut replaced,
        )
        .await;
    }
    replaced
}

async fn keep(engine: &Condenser, owner: Option<&str>, block: &ContentBlock) -> String {
    let json = serde_json::to_string(block).unwrap_or_default();
    engine.keep_binary(json, owner).await
}

/// Walks `structuredContent`, swapping the base64 string of every binary object over `max`.
async fn replace_in_value(
    engine: &Condenser,
    owner: Option<&str>,
    max: usize,
    value: &mut Value,
    replaced: &mut Replaced,
) {
    // Iterative: a deep value must not grow the stack (the input limits bound its size only).
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        match value {
            Value::Array(items) => pending.extend(items.iter_mut()),
            Value::Object(object) => {
                if let Some(block) = block_of_object(object)
                    && let Some((data, mime)) = payload(&block)
                    && decoded_len(data) > max
                {
                    let reference = keep(engine, owner, &block).await;
                    let description = describe(data, mime, &reference);
                    let key = if object.contains_key("blob") {
                        "blob"
                    } else {
                        "data"
                    };
                    object.insert(key.to_owned(), Value::String(description));
                    if !replaced.refs.contains(&reference) {
                        replaced.refs.push(reference);
                    }
                    continue;
                }
                pending.extend(object.values_mut());
            }
            _ => {}
        }
    }
}

/// The block kept under `reference`, a ref this module handed out: `condense_retrieve`
/// answers with it whole instead of a page of its JSON.
pub(crate) async fn retrieve(
    engines: &[&Condenser],
    owner: Option<&str>,
    reference: &str,
) -> Option<ContentBlock> {
    for engine in engines {
        if let Ok(json) = engine
            .retrieve_as(owner, reference, crate::Selection::All)
            .await
        {
            return serde_json::from_str(&json).ok();
        }
    }
    None
}

#[cfg(test)]
mod tests;

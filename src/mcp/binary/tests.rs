use rmcp::model::{CallToolResult, ContentBlock, EmbeddedResource, ResourceContents};
use serde_json::json;

use super::{apply, decode_prefix, describe, retrieve};
use crate::config::{BinaryPolicy, Rule};
use crate::{Condenser, Config};

/// Standard base64 of `bytes` (the tests' own encoder, independent of the decoder under test).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
        }
        out.push_str(&"=".repeat(3 - chunk.len()));
    }
    out
}

/// A PNG header of `width` x `height` followed by `bytes` of filler.
fn png(width: u32, height: u32, bytes: usize) -> String {
    let mut data = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    data.extend(width.to_be_bytes());
    data.extend(height.to_be_bytes());
    data.resize(bytes, 7);
    base64(&data)
}

fn rule(max: usize) -> Rule {
    Rule {
        binary_max_bytes: max,
        ..Rule::default()
    }
}

fn engine() -> Condenser {
    Condenser::new(Config::default()).expect("the default config builds")
}

#[test]
fn the_decoder_reads_what_the_encoder_wrote() {
    let bytes: Vec<u8> = (0..=255).collect();
    assert_eq!(decode_prefix(&base64(&bytes), 256), bytes);
    assert_eq!(decode_prefix(&base64(&bytes), 5), bytes[..5]);
}

#[test]
fn a_png_is_described_with_its_size_and_pixels() {
    let text = describe(&png(800, 600, 30_000), "image/png", "cx_1");
    assert_eq!(
        text,
        "[image/png, 30,000 bytes, 800x600 px: not shown; condense_retrieve with ref cx_1 returns it]"
    );
    // A MIME type that lies about the bytes gets no pixel size.
    assert!(!describe(&base64(&[1; 40]), "image/png", "cx_2").contains(" px"));
}

#[tokio::test]
async fn audio_and_blob_resources_over_the_limit_are_replaced_and_retrievable() {
    let engine = engine();
    let audio = base64(&[3; 5000]);
    let blob = base64(&[9; 6000]);
    let resource = ResourceContents::blob(&blob, "file:///x.bin").with_mime_type("application/zip");
    let mut result = CallToolResult::success(vec![
        ContentBlock::text("before"),
        ContentBlock::audio(&audio, "audio/wav"),
        ContentBlock::Resource(EmbeddedResource::new(resource)),
    ]);
    let replaced = apply(&engine, None, &rule(1000), &mut result).await;
    assert_eq!(replaced.refs.len(), 2);
    let texts: Vec<String> = result
        .content
        .iter()
        .map(|block| {
            block
                .as_text()
                .expect("every block is text now")
                .text
                .clone()
        })
        .collect();
    assert_eq!(texts[0], "before");
    assert!(
        texts[1].starts_with("[audio/wav, 5,000 bytes: "),
        "{}",
        texts[1]
    );
    assert!(
        texts[2].starts_with("[application/zip, 6,000 bytes: "),
        "{}",
        texts[2]
    );
    for (text, reference) in texts[1..].iter().zip(&replaced.refs) {
        assert!(text.contains(reference.as_str()));
    }
    let back = retrieve(&[&engine], None, &replaced.refs[1])
        .await
        .expect("kept");
    let back = serde_json::to_value(back).unwrap();
    assert_eq!(back["resource"]["blob"], blob);
    assert_eq!(back["resource"]["uri"], "file:///x.bin");
    let back =
        serde_json::to_value(retrieve(&[&engine], None, &replaced.refs[0]).await.unwrap()).unwrap();
    assert_eq!(
        back,
        json!({"type": "audio", "data": audio, "mimeType": "audio/wav"})
    );
}

#[tokio::test]
async fn structured_copies_keep_their_shape_and_share_the_ref() {
    let engine = engine();
    let image = png(10, 20, 4000);
    let mut result = CallToolResult::success(vec![ContentBlock::image(&image, "image/png")]);
    result.structured_content = Some(json!({
        "content": [{"type": "image", "data": image, "mimeType": "image/png"}],
        "files": [{"uri": "file:///a", "blob": base64(&[1; 3000]), "mimeType": "font/woff2"}],
        "note": "small",
    }));
    let replaced = apply(&engine, None, &rule(1000), &mut result).await;
    assert_eq!(replaced.refs.len(), 2, "the image once, the blob once");
    let text = &result.content[0].as_text().unwrap().text;
    let structured = result.structured_content.unwrap();
    assert_eq!(structured["content"][0]["data"], text.as_str());
    assert_eq!(structured["content"][0]["type"], "image");
    assert!(
        structured["files"][0]["blob"]
            .as_str()
            .unwrap()
            .starts_with("[font/woff2")
    );
    assert_eq!(structured["note"], "small");
}

#[tokio::test]
async fn small_items_and_the_keep_policy_pass_through() {
    let engine = engine();
    let small = CallToolResult::success(vec![ContentBlock::image(png(1, 1, 900), "image/png")]);
    let mut result = small.clone();
    assert!(
        apply(&engine, None, &rule(1000), &mut result)
            .await
            .refs
            .is_empty()
    );
    assert_eq!(result, small);
    let large = CallToolResult::success(vec![ContentBlock::image(png(1, 1, 9000), "image/png")]);
    let mut result = large.clone();
    let mut keep = rule(1000);
    keep.binary = BinaryPolicy::Keep;
    assert!(
        apply(&engine, None, &keep, &mut result)
            .await
            .refs
            .is_empty()
    );
    assert_eq!(result, large);
}

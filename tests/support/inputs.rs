//! Test inputs: the tool-output corpus beside the repository, and a generated log.

use std::path::PathBuf;

/// Every input of the tool-output corpus in `../shared/corpus`: `("split/case", text)`, sorted.
/// Empty when the corpus is not there.
pub(crate) fn corpus_inputs() -> Vec<(String, String)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    let mut inputs = Vec::new();
    for split in ["dev", "holdout"] {
        let Ok(cases) = std::fs::read_dir(root.join(split)) else {
            continue;
        };
        for case in cases.flatten() {
            for name in ["input.txt", "input.json"] {
                if let Ok(text) = std::fs::read_to_string(case.path().join(name)) {
                    inputs.push((
                        format!("{split}/{}", case.file_name().to_string_lossy()),
                        text,
                    ));
                }
            }
        }
    }
    inputs.sort();
    inputs
}

/// `lines` INFO lines of a storage service (about 20 tokens each), then one ERROR line about
/// segment 777 that queries can ask for.
pub(crate) fn shard_log(lines: usize) -> String {
    let mut text: String = (0..lines)
        .map(|i| {
            format!(
                "2024-05-01 10:00:{:02} INFO shard-{} compacted segment {i}\n",
                i % 60,
                i % 5
            )
        })
        .collect();
    text.push_str("2024-05-01 10:01:00 ERROR shard-2 segment 777 checksum mismatch\n");
    text
}

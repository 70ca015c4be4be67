//! The decoder against other encoders: stories of the hpack-test-case corpus
//! (<https://github.com/http2jp/hpack-test-case>, MIT licence, kept beside them), a sample of it
//! in `tests/data/hpack-test-case/`. Each story is a sequence of header blocks, requests or
//! responses, encoded by one implementation (nghttp2, Go's, Python's, Swift NIO's, Haskell's)
//! with its dynamic table, Huffman coding and table size changes; decoded in order on one
//! decoder, each must give the story's fields exactly.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use super::decoder::Decoder;

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/hpack-test-case")
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap()).collect()
}

#[test]
fn every_story_of_the_corpus_decodes_to_its_fields() {
    let mut stories = 0;
    let mut blocks = 0;
    for entry in std::fs::read_dir(corpus()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let story: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let mut decoder = Decoder::new();
        for case in story["cases"].as_array().unwrap() {
            let wire = hex(case["wire"].as_str().unwrap());
            let want: Vec<(String, String)> = case["headers"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|field| field.as_object().unwrap().iter())
                .map(|(name, value)| (name.clone(), value.as_str().unwrap().to_owned()))
                .collect();
            let mut got = Vec::new();
            decoder
                .decode(&wire, |name, value| {
                    got.push((String::from_utf8_lossy(name).into_owned(), String::from_utf8_lossy(value).into_owned()));
                })
                .unwrap_or_else(|_| panic!("{}: case {} does not decode", path.display(), case["seqno"]));
            assert_eq!(got, want, "{}: case {}", path.display(), case["seqno"]);
            blocks += 1;
        }
        stories += 1;
    }
    // The sample kept (its README): eight stories, 140 blocks.
    assert_eq!((stories, blocks), (8, 140));
}

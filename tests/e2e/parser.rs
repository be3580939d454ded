//! The assistant-message parser: every case of parse_assistant_message.jsonl, including every
//! streaming prefix; the incremental parser against the one-shot parse for every prefix; the
//! partial updates of a session bounded on long blocks.

use std::sync::Arc;

use serde_json::Value;
use toolhost::{Block, StreamParser, XmlParser};

/// Cline's parser, with write_to_file's `content` read raw as the write_to_file plugin's spec
/// declares it (the host learns it from the loaded specs).
fn cline_parser() -> XmlParser {
    XmlParser::cline().with_raw_params("write_to_file", ["content"])
}

fn parse_assistant_message(text: &str) -> Vec<Block> {
    cline_parser().parse(text)
}
use toolhost_tests::cases;

fn parsed(text: &str) -> Value {
    serde_json::to_value(parse_assistant_message(text)).unwrap()
}

#[test]
fn conformance_cases() {
    let mut prefixes = 0;
    for case in cases("parse_assistant_message") {
        let text = case.input["text"].as_str().unwrap();
        if let Some(expected) = case.expect.get("blocks") {
            assert_eq!(&parsed(text), expected, "case {}", case.id);
        }
        for prefix in case.expect["prefixes"].as_array().into_iter().flatten() {
            let length = prefix["length"].as_u64().unwrap() as usize;
            // The streaming texts are BMP-only: UTF-16 units and chars coincide.
            let cut: String = text.chars().take(length).collect();
            assert_eq!(
                parsed(&cut),
                prefix["blocks"],
                "case {} at length {length}",
                case.id
            );
            prefixes += 1;
        }
    }
    assert!(prefixes > 50, "only {prefixes} streaming prefixes checked");
}

#[test]
fn long_text_without_tags_parses_in_linear_time() {
    let text = "a > b ".repeat(200_000);
    let blocks = parse_assistant_message(&text);
    assert_eq!(blocks.len(), 1);
}

/// Streams `text` in chunks of `size` characters; after every chunk the incremental blocks must
/// be the one-shot parse of the text so far.
fn check_streamed(parser: &Arc<XmlParser>, text: &str, size: usize, label: &str) {
    let mut stream = StreamParser::new(parser.clone());
    let chars: Vec<char> = text.chars().collect();
    for chunk in chars.chunks(size) {
        stream.push(&chunk.iter().collect::<String>());
        let expected = parser.parse(stream.text());
        assert_eq!(
            stream.blocks(),
            expected,
            "{label}, chunks of {size}, at {:?}",
            stream.text()
        );
        let closed = expected.len() - usize::from(stream.open_block().is_some());
        assert_eq!(stream.closed_blocks(), &expected[..closed], "{label}");
    }
    assert_eq!(stream.text(), text);
}

#[test]
fn streaming_gives_the_one_shot_blocks_for_every_prefix() {
    let parser = Arc::new(cline_parser());
    let mut texts: Vec<(String, String)> = cases("parse_assistant_message")
        .into_iter()
        .map(|case| {
            (
                case.id.clone(),
                case.input["text"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    // Tags cut at every place, values holding tags, `>` everywhere, multi-byte characters.
    texts.push((
        "mixed".into(),
        "Zuerst » lesen.<read_file><path>ä/ö.rs</path></read_file> a>b <write_to_file>\n<path>x</path>\n<content><p>hi</p></content> </content>\n</write_to_file><unknown>t</unknown>\n<execute_command><command>ls >> out</command></execute_command>trailing <".into(),
    ));
    for (label, text) in &texts {
        for size in [1, 2, 3, 5, 8, 64] {
            check_streamed(&parser, text, size, label);
        }
    }
}

#[test]
fn a_session_shows_a_long_open_block_a_bounded_number_of_times() {
    use toolhost::{
        ApprovalMode, CommandPermissions, Conversation, HeadlessUi, Host, HostConfig, Placement,
        SessionEvent, Settings, Workspace,
    };
    let ws = toolhost_tests::workdir();
    let host = Host::new(HostConfig {
        plugin_dirs: Vec::new(),
        workspace: Workspace::new(ws.path()).unwrap(),
        settings: Settings::default(),
        approval: ApprovalMode::DenyUnlessAuto,
        command_permissions: CommandPermissions::default(),
        ui: Box::new(HeadlessUi),
        task_id: "stream".into(),
        placement: Placement::default(),
    });
    let content = "line of the file\n".repeat(1 << 16); // 1 MiB
    let message = format!(
        "Writing it.\n<write_to_file>\n<path>big.txt</path>\n<content>\n{content}</content>\n</write_to_file>"
    );
    let mut conversation = Conversation::new(host);
    let mut run = conversation.message();
    let (mut streaming, mut longest, mut last_len) = (0, 0, 0);
    let mut sink = |event: SessionEvent| {
        if let SessionEvent::ToolStreaming { params, .. } = event {
            streaming += 1;
            let len = params
                .get("content")
                .and_then(Value::as_str)
                .map_or(0, str::len);
            assert!(len >= last_len, "partial content shrank");
            last_len = len;
            longest = longest.max(len);
        }
    };
    for chunk in message.as_bytes().chunks(64) {
        run.push(std::str::from_utf8(chunk).unwrap(), &mut sink);
    }
    run.finish(&mut sink);
    // Every chunk while the block is short (16 KiB, 64 bytes at a time), then once per eighth
    // of growth (about 36 times up to 1 MiB), and a few more by the clock at most: not the
    // 16,000 updates of one per chunk.
    assert!(
        (250..450).contains(&streaming),
        "{streaming} partial updates"
    );
    assert!(
        longest > content.len() * 7 / 8,
        "the last partial update had {longest} bytes"
    );
}

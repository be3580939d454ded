//! The benches' generated source tree: 20,000 source-like files with known lines planted for
//! the search regexes, generated once under `target/bench/search-tree`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::util::target_dir;

/// Bump when the generator changes, so an old tree is not reused.
const TREE_VERSION: u64 = 1;

/// Visible files in the tree: 40 crates x 10 modules x 50 files.
const FILES: usize = 20_000;

/// Files in each directory that both tools must skip (a hidden one and a gitignored one).
const SKIPPED_FILES: usize = 100;

/// The generated tree and what the generator planted in its searched files.
pub(super) struct Tree {
    pub(super) dir: PathBuf,
    pub(super) files: usize,
    pub(super) bytes: u64,
    pub(super) planted: BTreeMap<String, usize>,
}

/// The tree under `target/bench/search-tree`, generated unless a tree of this version exists.
pub(super) fn ensure_tree() -> Result<Tree, String> {
    let dir = target_dir().join("bench/search-tree");
    let manifest = target_dir().join("bench/search-tree.json");
    if let Ok(text) = std::fs::read_to_string(&manifest) {
        let value: Value = serde_json::from_str(&text).unwrap_or_default();
        if value["version"] == TREE_VERSION && dir.is_dir() {
            return Ok(Tree {
                dir,
                files: value["files"].as_u64().unwrap_or_default() as usize,
                bytes: value["bytes"].as_u64().unwrap_or_default(),
                planted: serde_json::from_value(value["planted"].clone()).unwrap_or_default(),
            });
        }
    }
    println!("generating {} (once)", dir.display());
    let tree = generate(&dir)?;
    let record = json!({
        "version": TREE_VERSION, "files": tree.files, "bytes": tree.bytes, "planted": tree.planted,
    });
    std::fs::write(&manifest, record.to_string()).map_err(|e| e.to_string())?;
    Ok(tree)
}

/// Writes the tree: source-like files of 50 to 900 lines, with known lines planted for the
/// regexes; plus a hidden and a gitignored directory that carry every plant (any hit there means
/// a tool ignored the rules). The `.git` directory makes the tree a repository of its own, so
/// its `.gitignore` applies and no parent's does.
fn generate(dir: &Path) -> Result<Tree, String> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| e.to_string())?;
    }
    let io = |e: std::io::Error| e.to_string();
    std::fs::create_dir_all(dir.join(".git")).map_err(io)?;
    std::fs::write(dir.join(".gitignore"), "generated/\n").map_err(io)?;
    let mut rng = Rng(0x5eed_u64 ^ TREE_VERSION);
    let mut planted = BTreeMap::new();
    let mut bytes = 0;
    let extensions = ["rs", "ts", "py", "go", "md"];
    for index in 0..FILES {
        let (krate, module, file) = (index / 500, index / 50 % 10, index % 50);
        let path = dir.join(format!(
            "crate{krate:02}/src/mod{module}/file{file:03}.{}",
            extensions[index % extensions.len()]
        ));
        let plants = plants_for(index);
        for kind in &plants {
            *planted.entry(kind.to_string()).or_insert(0) += 1;
        }
        bytes += write_file(&path, &mut rng, &plants)?;
    }
    for skipped in [".cache/hidden", "generated"] {
        for index in 0..SKIPPED_FILES {
            let path = dir.join(format!("{skipped}/file{index:03}.rs"));
            write_file(
                &path,
                &mut rng,
                &["literal", "alternation", "class", "rare"],
            )?;
        }
    }
    Ok(Tree {
        dir: dir.to_path_buf(),
        files: FILES,
        bytes,
        planted,
    })
}

/// Which plants file `index` carries: fixed strides, so every count is known and under 300.
fn plants_for(index: usize) -> Vec<&'static str> {
    let mut plants = Vec::new();
    if index % 100 == 7 {
        plants.push("literal");
    }
    if index % 97 == 3 {
        plants.push("alternation");
    }
    if index % 89 == 5 {
        plants.push("class");
    }
    if [1234, 9876, 15000].contains(&index) {
        plants.push("rare");
    }
    plants
}

/// Writes one file with `plants` each on a line of its own; returns its size.
fn write_file(path: &Path, rng: &mut Rng, plants: &[&str]) -> Result<u64, String> {
    let lines = 50 + rng.below(850);
    let mut text = Vec::with_capacity(lines * 40);
    let mut plant_at: Vec<(usize, &str)> = plants.iter().map(|p| (rng.below(lines), *p)).collect();
    plant_at.sort();
    let mut next = plant_at.iter().peekable();
    for line in 0..lines {
        while let Some((_, kind)) = next.next_if(|(at, _)| *at == line) {
            planted_line(kind, rng, &mut text);
        }
        source_line(rng, &mut text);
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
    }
    std::fs::write(path, &text).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(text.len() as u64)
}

/// Words of the generated code; none is part of a planted token.
const WORDS: [&str; 48] = [
    "alpha", "buffer", "config", "data", "entry", "field", "handle", "index", "key", "length",
    "map", "node", "offset", "parse", "query", "record", "state", "token", "value", "window",
    "writer", "reader", "cache", "client", "server", "request", "event", "item", "list", "path",
    "count", "flag", "scope", "frame", "batch", "chunk", "limit", "queue", "stream", "table",
    "input", "output", "result", "option", "params", "header", "parser", "worker",
];

const TYPES: [&str; 8] = [
    "u32",
    "usize",
    "String",
    "Vec<u8>",
    "Config",
    "State",
    "Option<Node>",
    "Result<(), Error>",
];

fn source_line(rng: &mut Rng, out: &mut Vec<u8>) {
    let indent = rng.below(4) * 4;
    out.extend(std::iter::repeat_n(b' ', indent));
    let ident = |rng: &mut Rng, out: &mut Vec<u8>| {
        for part in 0..1 + rng.below(3) {
            if part > 0 {
                out.push(b'_');
            }
            out.extend_from_slice(WORDS[rng.below(WORDS.len())].as_bytes());
        }
    };
    match rng.below(10) {
        0 => {
            out.extend_from_slice(b"//");
            for _ in 0..3 + rng.below(8) {
                out.push(b' ');
                out.extend_from_slice(WORDS[rng.below(WORDS.len())].as_bytes());
            }
        }
        1 => {
            out.extend_from_slice(b"fn ");
            ident(rng, out);
            out.push(b'(');
            ident(rng, out);
            out.extend_from_slice(b": ");
            out.extend_from_slice(TYPES[rng.below(TYPES.len())].as_bytes());
            out.extend_from_slice(b") -> ");
            out.extend_from_slice(TYPES[rng.below(TYPES.len())].as_bytes());
            out.extend_from_slice(b" {");
        }
        2 => {
            out.extend_from_slice(b"return ");
            ident(rng, out);
            out.push(b';');
        }
        3..=5 => {
            out.extend_from_slice(b"let ");
            ident(rng, out);
            out.extend_from_slice(b" = ");
            ident(rng, out);
            out.push(b'.');
            ident(rng, out);
            out.push(b'(');
            ident(rng, out);
            out.extend_from_slice(format!(", {});", rng.below(10_000)).as_bytes());
        }
        6 => {
            out.extend_from_slice(b"if ");
            ident(rng, out);
            out.extend_from_slice(format!(" > {} {{", rng.below(1000)).as_bytes());
        }
        7 => out.push(b'}'),
        8 => {
            ident(rng, out);
            out.extend_from_slice(b".");
            ident(rng, out);
            out.extend_from_slice(b" = \"");
            ident(rng, out);
            out.extend_from_slice(b"\";");
        }
        _ => {}
    }
    out.push(b'\n');
}

fn planted_line(kind: &str, rng: &mut Rng, out: &mut Vec<u8>) {
    let line = match kind {
        "literal" => "    let x = quux_frobnicate(state);".to_string(),
        "alternation" => {
            let names = ["zeta_handler", "omega_dispatch", "sigma_reducer"];
            format!("    register({});", names[rng.below(3)])
        }
        "class" => {
            let mut code = String::from("ERR_");
            for _ in 0..3 {
                code.push(char::from(b'A' + rng.below(26) as u8));
            }
            code.push_str(&format!("{:04}", rng.below(10_000)));
            format!("    return Err(\"{code}\");")
        }
        _ => "    // see xyzzy_marker for details".to_string(),
    };
    out.extend_from_slice(line.as_bytes());
    out.push(b'\n');
}

/// SplitMix64. Written here rather than taken from `rand`: xtask stays dependency-light, and
/// a generator fixed in this file keeps the tree the same whatever crate versions change.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n`.
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

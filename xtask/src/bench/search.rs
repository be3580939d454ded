//! `bench search`: search_files through the real plugin against `rg -n` on a generated tree.
//!
//! Both run as processes on the same tree, with the same file rules (ripgrep's defaults: hidden
//! files and what `.gitignore` excludes are skipped), one after the other, several times; the
//! median wall time of each is reported (the ratio the target applies to), with the mean CPU
//! time (user + system), which other work on a shared machine disturbs less. toolhost is the
//! release `toolhost call search_files` with every release plugin loaded: spawning it, rather than loading the plugin into this process, counts
//! what an agent actually pays (process start, plugin loading, approval, the search, the
//! formatted text) against what ripgrep pays for the same (process start, the search, printing).
//! The same call with the search_files library alone is timed too, which separates the plugin's
//! cost from the host's cost of loading every other plugin at startup.
//!
//! Same work: search_files stops at 300 results, ripgrep does not. So the regexes that decide the
//! target have fewer than 300 hits in the whole tree: both must read every file, and both must
//! report every hit, which the bench checks (the same files with the same number of hits each,
//! and the number planted by the generator). The common regex (many thousands of hits) is shown
//! for information only: there search_files may skip files once it holds the first 300 hits in
//! path order, while ripgrep prints every hit; its check is that the 300 hits shown are the first
//! 300 of `rg --sort path`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::bench::startup::ms;
use crate::bench::tree::{ensure_tree, Tree};
use crate::build;
use crate::util::{library_file_name, target_dir};

/// Timed runs per tool and regex; the median is reported.
const RUNS: usize = 11;

/// The ratio toolhost/rg the full-scan regexes should stay under.
const TARGET_RATIO: f64 = 1.1;

/// One regex of the comparison.
struct Case {
    name: &'static str,
    regex: &'static str,
    /// The generator's plant this regex finds (its hit count is known), if any.
    planted: Option<&'static str>,
    /// More than 300 hits: not like-for-like, shown for information.
    capped: bool,
}

const CASES: [Case; 6] = [
    Case {
        name: "literal",
        regex: "quux_frobnicate",
        planted: Some("literal"),
        capped: false,
    },
    Case {
        name: "alternation",
        regex: "zeta_handler|omega_dispatch|sigma_reducer",
        planted: Some("alternation"),
        capped: false,
    },
    Case {
        name: "character class",
        regex: r"ERR_[A-Z]{3}[0-9]{4}",
        planted: Some("class"),
        capped: false,
    },
    Case {
        name: "case-insensitive",
        regex: r"(?i)QUUX_frobnicate",
        planted: Some("literal"),
        capped: false,
    },
    Case {
        name: "rare, word-bounded",
        regex: r"\bxyzzy_marker\b",
        planted: Some("rare"),
        capped: false,
    },
    Case {
        name: "common (capped at 300)",
        regex: r"\breturn\b",
        planted: None,
        capped: true,
    },
];

/// Runs the benchmark and returns its JSON record.
pub fn search() -> Result<Value, String> {
    let tree = ensure_tree()?;
    let rg = ensure_rg()?;
    let dist = build::dist()?;
    // The same library alone, to tell the plugin's own cost from the host's cost of loading
    // every other plugin at startup.
    let alone = target_dir().join("bench/search-plugin");
    std::fs::create_dir_all(&alone).map_err(|e| e.to_string())?;
    let library = library_file_name("search_files");
    std::fs::copy(dist.join("plugins").join(&library), alone.join(&library))
        .map_err(|e| format!("cannot copy {library}: {e}"))?;
    let tools = Tools {
        toolhost: dist.join("bin/toolhost"),
        plugins: [dist.join("plugins"), alone],
        rg,
        config_home: target_dir().join("bench/search-config"),
    };
    std::fs::create_dir_all(&tools.config_home).map_err(|e| e.to_string())?;
    let rg_version = output_of(Command::new(&tools.rg).arg("--version"))?;
    let rg_version = rg_version.lines().next().unwrap_or("").to_string();
    println!(
        "search: `toolhost call search_files` (release; all plugins, and the plugin alone) vs `{rg_version} -n`\n  tree {} ({} files searched, {:.0} MB); wall: median of {RUNS} runs, cpu: mean user+system",
        tree.dir.display(),
        tree.files,
        tree.bytes as f64 / 1e6
    );
    println!(
        "  {:<24} {:>7} {:>8} {:>11} {:>7} {:>10} {:>7} {:>9}",
        "regex", "hits", "rg ms", "toolhost ms", "ratio", "alone ms", "ratio", "cpu ratio"
    );
    let empty = target_dir().join("bench/search-empty");
    std::fs::create_dir_all(&empty).map_err(|e| e.to_string())?;
    let floor = measure(&tools, &empty, "x")?;
    print_row("floor: empty directory", 0, &floor, "");
    let mut rows = vec![row_json("floor: empty directory", "x", 0, &floor, false)];
    let mut full_scan = Vec::new();
    for case in &CASES {
        let timing = measure(&tools, &tree.dir, case.regex)?;
        let hits = check(&tools, &tree, case, &timing)?;
        let note = if case.capped {
            "  (not like-for-like)"
        } else {
            ""
        };
        print_row(case.name, hits, &timing, note);
        if !case.capped {
            full_scan.push([timing.ratio(TOOLHOST), timing.ratio(ALONE)]);
        }
        rows.push(row_json(case.name, case.regex, hits, &timing, case.capped));
    }
    let summary = |tool: usize| {
        let ratios: Vec<f64> = full_scan.iter().map(|r| r[tool - 1]).collect();
        let worst = ratios.iter().copied().fold(0.0, f64::max);
        let geomean = (ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64).exp();
        (geomean, worst)
    };
    let (geomean, worst) = summary(TOOLHOST);
    let (alone_geomean, alone_worst) = summary(ALONE);
    println!(
        "  full-scan regexes, all plugins: geometric mean ratio {geomean:.3}x, worst {worst:.3}x (target <= {TARGET_RATIO}x: {})",
        if worst <= TARGET_RATIO { "met" } else { "NOT met" }
    );
    println!(
        "  full-scan regexes, plugin alone: geometric mean ratio {alone_geomean:.3}x, worst {alone_worst:.3}x"
    );
    Ok(json!({
        "bench": "search",
        "rg": rg_version,
        "runs": RUNS,
        "tree": {"path": tree.dir, "files": tree.files, "bytes": tree.bytes},
        "rows": rows,
        "full_scan_geomean_ratio": geomean,
        "full_scan_worst_ratio": worst,
        "plugin_alone_geomean_ratio": alone_geomean,
        "plugin_alone_worst_ratio": alone_worst,
        "target_ratio": TARGET_RATIO,
        "target_met": worst <= TARGET_RATIO,
    }))
}

/// Indices of the timed commands.
const RG: usize = 0;
/// `toolhost` with every release plugin.
const TOOLHOST: usize = 1;
/// `toolhost` with the search_files plugin only.
const ALONE: usize = 2;

/// The programs compared.
struct Tools {
    toolhost: PathBuf,
    /// Every release plugin, and search_files alone.
    plugins: [PathBuf; 2],
    rg: PathBuf,
    /// An empty configuration home, so no user settings apply.
    config_home: PathBuf,
}

impl Tools {
    /// The command `tool` ([`RG`], [`TOOLHOST`] or [`ALONE`]) for `regex` over `dir`.
    fn command(&self, tool: usize, dir: &Path, regex: &str) -> Command {
        if tool == RG {
            return self.rg(dir, regex, false);
        }
        let mut command = Command::new(&self.toolhost);
        command
            .arg("--plugins")
            .arg(&self.plugins[tool - 1])
            .args(["call", "search_files"])
            .arg(json!({"path": ".", "regex": regex}).to_string())
            .arg("--cwd")
            .arg(dir)
            .env("XDG_CONFIG_HOME", &self.config_home)
            .env_remove("TOOLHOST_SETTINGS")
            .env_remove("TOOLHOST_PLUGIN_PATH");
        command
    }

    /// `rg -n REGEX .` in `dir`; stdout must be a pipe (ripgrep stops at the first match when
    /// it writes to /dev/null).
    fn rg(&self, dir: &Path, regex: &str, sorted: bool) -> Command {
        let mut command = Command::new(&self.rg);
        command.current_dir(dir).arg("-n");
        if sorted {
            command.args(["--sort", "path"]);
        }
        command
            .arg("-e")
            .arg(regex)
            .arg(".")
            .env_remove("RIPGREP_CONFIG_PATH");
        command
    }
}

/// For each command: the median wall time, the mean CPU time (user + system, when the platform
/// reports it: less disturbed than wall time when other work shares the machine), and the
/// output of the last run.
struct Timing {
    wall: [Duration; 3],
    cpu: [Option<Duration>; 3],
    out: [String; 3],
}

impl Timing {
    /// Wall time of `tool` over ripgrep's.
    fn ratio(&self, tool: usize) -> f64 {
        ms(self.wall[tool]) / ms(self.wall[RG])
    }

    /// CPU time of `tool` over ripgrep's.
    fn cpu_ratio(&self, tool: usize) -> Option<f64> {
        Some(ms(self.cpu[tool]?) / ms(self.cpu[RG]?))
    }
}

/// One warm-up run each (page cache), then [`RUNS`] rounds, each starting with another command.
fn measure(tools: &Tools, dir: &Path, regex: &str) -> Result<Timing, String> {
    let mut out: [String; 3] = Default::default();
    for (tool, out) in out.iter_mut().enumerate() {
        *out = timed(&mut tools.command(tool, dir, regex))?.1;
    }
    let mut times: [Vec<Duration>; 3] = Default::default();
    let mut cpu = [Some(Duration::ZERO); 3];
    for round in 0..RUNS {
        for step in 0..3 {
            let tool = (round + step) % 3;
            let before = children_cpu();
            let (time, output) = timed(&mut tools.command(tool, dir, regex))?;
            cpu[tool] = match (cpu[tool], before, children_cpu()) {
                (Some(sum), Some(before), Some(after)) => Some(sum + (after - before)),
                _ => None,
            };
            times[tool].push(time);
            out[tool] = output;
        }
    }
    Ok(Timing {
        wall: times.map(median),
        cpu: cpu.map(|c| c.map(|c| c / RUNS as u32)),
        out,
    })
}

/// The user + system time of this process's finished children (Linux: `/proc/self/stat`, in
/// 1/100 s; summed over many runs, the rounding is negligible).
fn children_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name, which is in parentheses; cutime and cstime are fields 16
    // and 17 of the line, 14 and 15 of this rest.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = fields.get(13)?.parse::<u64>().ok()? + fields.get(14)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// Runs a command with stdout captured; exit codes 0 and 1 (ripgrep's "no match") are fine.
fn timed(command: &mut Command) -> Result<(Duration, String), String> {
    command.stdin(Stdio::null()).stderr(Stdio::null());
    let start = Instant::now();
    let output = command.output().map_err(|e| format!("{command:?}: {e}"))?;
    let time = start.elapsed();
    if !matches!(output.status.code(), Some(0 | 1)) {
        return Err(format!("{command:?} failed ({})", output.status));
    }
    Ok((time, String::from_utf8_lossy(&output.stdout).into_owned()))
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// Checks that both tools found the same hits; returns the number of hits.
fn check(tools: &Tools, tree: &Tree, case: &Case, timing: &Timing) -> Result<usize, String> {
    let ours = toolhost_hits(&timing.out[TOOLHOST]);
    if toolhost_hits(&timing.out[ALONE]) != ours {
        return Err(format!(
            "search '{}': the plugin alone found other hits",
            case.regex
        ));
    }
    let fail = |what: String| Err(format!("search '{}': {what}", case.regex));
    if case.capped {
        // The first 300 hits in path order, from a sorted (single-threaded, untimed) rg run.
        let sorted = output_of(&mut tools.rg(&tree.dir, case.regex, true))?;
        let theirs = rg_hits(sorted.lines().take(300));
        if ours != theirs {
            return fail(format!("the 300 hits shown differ from rg --sort path's first 300:\nrg: {theirs:?}\ntoolhost: {ours:?}"));
        }
        return Ok(rg_hits(timing.out[RG].lines()).values().sum());
    }
    let theirs = rg_hits(timing.out[RG].lines());
    if ours != theirs {
        return fail(format!(
            "different hits:\nrg: {theirs:?}\ntoolhost: {ours:?}"
        ));
    }
    let hits: usize = theirs.values().sum();
    let planted = case.planted.and_then(|p| tree.planted.get(p)).copied();
    if planted.is_some_and(|p| p != hits) {
        return fail(format!("{hits} hits, {planted:?} planted"));
    }
    Ok(hits)
}

/// Hits per file from `rg -n` output lines (`./path:line:text`).
fn rg_hits<'a>(lines: impl Iterator<Item = &'a str>) -> BTreeMap<String, usize> {
    let mut hits = BTreeMap::new();
    for line in lines {
        let path = line.split(':').next().unwrap_or("");
        *hits
            .entry(path.trim_start_matches("./").to_string())
            .or_insert(0) += 1;
    }
    hits
}

/// Hits per file from search_files' text: each file's block has one `│----` more than results.
fn toolhost_hits(text: &str) -> BTreeMap<String, usize> {
    let mut separators: BTreeMap<String, usize> = BTreeMap::new();
    let mut current = None;
    for line in text.lines().skip(2) {
        if line == "│----" {
            if let Some(file) = &current {
                *separators.entry(String::clone(file)).or_insert(0) += 1;
            }
        } else if !line.is_empty() && !line.starts_with('│') {
            current = Some(line.to_string());
        }
    }
    separators
        .into_iter()
        .map(|(file, count)| (file, count.saturating_sub(1)))
        .collect()
}

fn print_row(name: &str, hits: usize, t: &Timing, note: &str) {
    let cpu_ratio = t
        .cpu_ratio(TOOLHOST)
        .map_or("-".to_string(), |r| format!("{r:.3}x"));
    println!(
        "  {name:<24} {hits:>7} {:>8.1} {:>11.1} {:>6.3}x {:>10.1} {:>6.3}x {cpu_ratio:>9}{note}",
        ms(t.wall[RG]),
        ms(t.wall[TOOLHOST]),
        t.ratio(TOOLHOST),
        ms(t.wall[ALONE]),
        t.ratio(ALONE),
    );
}

fn row_json(name: &str, regex: &str, hits: usize, t: &Timing, capped: bool) -> Value {
    json!({
        "case": name,
        "regex": regex,
        "hits": hits,
        "rg_ms": ms(t.wall[RG]),
        "toolhost_ms": ms(t.wall[TOOLHOST]),
        "ratio": t.ratio(TOOLHOST),
        "plugin_alone_ms": ms(t.wall[ALONE]),
        "plugin_alone_ratio": t.ratio(ALONE),
        "rg_cpu_ms": t.cpu[RG].map(ms),
        "toolhost_cpu_ms": t.cpu[TOOLHOST].map(ms),
        "plugin_alone_cpu_ms": t.cpu[ALONE].map(ms),
        "cpu_ratio": t.cpu_ratio(TOOLHOST),
        "like_for_like": !capped,
    })
}

fn output_of(command: &mut Command) -> Result<String, String> {
    timed(command).map(|(_, out)| out)
}

/// `rg`, installed from Debian's packages when it is missing.
pub(super) fn ensure_rg() -> Result<PathBuf, String> {
    let found = Command::new("rg")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        println!("installing ripgrep (apt-get)");
        for args in [&["update"][..], &["install", "-y", "ripgrep"][..]] {
            let status = Command::new("apt-get")
                .args(args)
                .status()
                .map_err(|e| format!("cannot run apt-get: {e}"))?;
            if !status.success() {
                return Err(format!("apt-get {} failed ({status})", args.join(" ")));
            }
        }
    }
    Ok(PathBuf::from("rg"))
}

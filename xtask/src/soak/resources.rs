//! The server's resources, sampled from `/proc`, and their slopes over a run.

/// One resource sample: calls answered so far, then the server's resources.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    pub calls: usize,
    pub rss_kib: f64,
    pub fds: f64,
    pub threads: f64,
    pub children: f64,
}

/// The server's resources now: resident memory, descriptors, threads, and every process
/// below it.
pub fn sample(pid: u32, calls: usize) -> Result<Sample, String> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .map_err(|e| format!("cannot read the server's status: {e}"))?;
    let field = |name: &str| -> f64 {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(f64::NAN)
    };
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count())
        .unwrap_or(0);
    Ok(Sample {
        calls,
        rss_kib: field("VmRSS:"),
        fds: fds as f64,
        threads: field("Threads:"),
        children: descendants(pid) as f64,
    })
}

/// The processes below `pid` (children of any of its threads, and theirs).
fn descendants(pid: u32) -> usize {
    let mut count = 0;
    let mut pending = vec![pid];
    while let Some(parent) = pending.pop() {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{parent}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let children =
                std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            for child in children.split_whitespace().filter_map(|c| c.parse().ok()) {
                count += 1;
                pending.push(child);
            }
        }
    }
    count
}

/// Least-squares slope of `value` over the calls, per 10,000 calls.
pub fn slope(samples: &[Sample], value: impl Fn(&Sample) -> f64) -> f64 {
    let n = samples.len() as f64;
    let (sx, sy) = samples.iter().fold((0.0, 0.0), |(sx, sy), s| {
        (sx + s.calls as f64, sy + value(s))
    });
    let (mx, my) = (sx / n, sy / n);
    let (num, den) = samples.iter().fold((0.0, 0.0), |(num, den), s| {
        let dx = s.calls as f64 - mx;
        (num + dx * (value(s) - my), den + dx * dx)
    });
    if den == 0.0 {
        0.0
    } else {
        num / den * 10_000.0
    }
}

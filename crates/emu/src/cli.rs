//! The command line of one emulated run, `multiconn-emu SCENARIO --out DIR [--set KEY=VALUE]...
//! [--seed N] [--python PATH] [--time-limit SECONDS] [--budget-us N] [--max-rate-mbps N]
//! [--realtime] [--base-dir DIR] [-q]`: parsed, run, and answered with the exit code (0 after
//! a run, 2 on bad input or when this machine cannot emulate, with one line saying why, 1
//! when a run fails). Two programs share it: the `multiconn-emu` binary of this crate and the
//! `multiconn-emu` entry point a Python install provides (`multiconn._core.emu_main`), so
//! that `pip install` gives `multiconn emulate` without a second build.

use std::path::PathBuf;
use std::time::Duration;

use crate::{emulate, EmuError, Options};
use multiconn_core::Dur;
use multiconn_scenario::{load, Origin};

const USAGE: &str = "usage: multiconn-emu SCENARIO --out DIR [--set KEY=VALUE]... [--seed N] [--python PATH] [--time-limit SECONDS] [--budget-us N] [--max-rate-mbps N] [--realtime] [--base-dir DIR] [-q]";

/// What the command line asks for: the scenario, its `--set` overrides, the run's options.
struct Request {
    scenario: PathBuf,
    sets: Vec<(String, String)>,
    opts: Options,
    /// The folder trace paths are relative to (default: the scenario's).
    base_dir: Option<PathBuf>,
}

fn parse(args: impl IntoIterator<Item = String>) -> Result<Request, String> {
    let mut args = args.into_iter();
    let mut scenario = None;
    let mut sets = Vec::new();
    let mut opts = Options { progress: true, ..Options::default() };
    let mut out = None;
    let mut base_dir = None;
    while let Some(a) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value\n{USAGE}"));
        let number = |name: &str, v: String| v.parse::<f64>().ok().filter(|x| x.is_finite() && *x > 0.0).ok_or_else(|| format!("{name}: \"{v}\" is not a positive number"));
        match a.as_str() {
            "--out" => out = Some(PathBuf::from(value("--out")?)),
            "--base-dir" => base_dir = Some(PathBuf::from(value("--base-dir")?)),
            "--set" => {
                let kv = value("--set")?;
                let (k, v) = kv.split_once('=').ok_or_else(|| format!("--set {kv}: write KEY=VALUE"))?;
                sets.push((k.to_string(), v.to_string()));
            }
            "--seed" => {
                let v = value("--seed")?;
                opts.seed = Some(v.parse().map_err(|_| format!("--seed: \"{v}\" is not a non-negative integer"))?);
            }
            "--python" => opts.python = value("--python")?,
            "--time-limit" => opts.time_limit = Duration::from_secs_f64(number("--time-limit", value("--time-limit")?)?),
            "--budget-us" => opts.budget = Dur::from_secs_f64(number("--budget-us", value("--budget-us")?)? / 1e6),
            "--max-rate-mbps" => opts.max_rate_bps = number("--max-rate-mbps", value("--max-rate-mbps")?)? * 1e6,
            "-q" | "--quiet" => opts.progress = false,
            "--realtime" => opts.realtime = true,
            "-h" | "--help" => return Err(USAGE.into()),
            s if s.starts_with('-') => return Err(format!("unknown option {s}\n{USAGE}")),
            s if scenario.is_none() => scenario = Some(PathBuf::from(s)),
            s => return Err(format!("one scenario at a time (got {s} too)\n{USAGE}")),
        }
    }
    let scenario = scenario.ok_or_else(|| USAGE.to_string())?;
    opts.out = out.ok_or_else(|| format!("--out DIR is required\n{USAGE}"))?;
    Ok(Request { scenario, sets, opts, base_dir })
}

/// Runs the command line `args` (the program's name left out); returns the exit code.
pub fn main(args: impl IntoIterator<Item = String>) -> u8 {
    let Request { scenario: path, sets, opts, base_dir } = match parse(args) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {}: {e}", path.display());
            return 2;
        }
    };
    let origin = Origin { name: path.display().to_string(), base_dir: base_dir.unwrap_or_else(|| path.parent().map(PathBuf::from).unwrap_or_default()) };
    let scenario = match load(&text, &origin, &sets) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    match emulate(&scenario, &opts) {
        Ok(summary) => {
            let timing = &summary["timing"];
            if timing["verdict"] == "over budget" {
                eprintln!(
                    "warning: packets left {} µs late at p99 (budget {} µs): this machine did not keep up, treat the numbers with care",
                    timing["p99_us"], timing["budget_us"]
                );
            }
            println!("{}", opts.out.join("summary.json").display());
            0
        }
        Err(e) => {
            eprintln!("error: {e}");
            if matches!(e, EmuError::Refused(_)) {
                2
            } else {
                1
            }
        }
    }
}

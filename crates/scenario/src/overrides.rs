//! `--set KEY=VALUE` overrides, applied to the TOML document before it is validated.
//!
//! Keys are dotted paths. Arrays of tables are addressed by the `name` of the element:
//! `link.bottleneck.rate` is the `rate` of the `[[link]]` whose `name` is `bottleneck`.
//! Missing intermediate tables (`run`, `link.x.reverse`) are created; a missing array element
//! is an error naming the ones that exist. The value is read as a TOML value when it is one
//! (`0.01`, `true`, `{ model = "normal", ... }`) and as a string otherwise (`30Mbit/s`).
//! Formatting of untouched lines is preserved, so line numbers in later errors still match
//! the user's file.

use std::str::FromStr;
use toml_edit::{DocumentMut, Item, Table, Value};

/// Top-level keys that hold arrays of named tables.
const ARRAYS_OF_TABLES: [&str; 3] = ["link", "flow", "split"];

/// Applies one override; the error says which key and why.
pub fn apply(doc: &mut DocumentMut, key: &str, raw_value: &str) -> Result<(), String> {
    let segments: Vec<&str> = key.split('.').map(str::trim).collect();
    if key.trim().is_empty() || segments.iter().any(|s| s.is_empty()) {
        return Err(format!("--set {key}: the key must be a dotted path such as link.bottleneck.rate"));
    }
    let value = parse_value(raw_value);
    let mut table: &mut Table = doc.as_table_mut();
    let mut walked: Vec<&str> = Vec::new();
    let mut i = 0;
    while i + 1 < segments.len() {
        let seg = segments[i];
        if walked.is_empty() && ARRAYS_OF_TABLES.contains(&seg) && !table.contains_key(seg) {
            return Err(format!("--set {key}: there is no {seg} named \"{}\" (the scenario has no [[{seg}]])", segments[i + 1]));
        }
        walked.push(seg);
        let item = table.entry(seg).or_insert_with(|| {
            let mut t = Table::new();
            t.set_implicit(true);
            Item::Table(t)
        });
        // Arrays of tables: the next segment names the element.
        if let Item::ArrayOfTables(array) = item {
            let name = segments[i + 1];
            let names: Vec<String> =
                array.iter().filter_map(|t| t.get("name").and_then(|n| n.as_str()).map(String::from)).collect();
            let found = array.iter_mut().find(|t| t.get("name").and_then(|n| n.as_str()) == Some(name));
            match found {
                Some(t) => {
                    table = t;
                    walked.push(name);
                    i += 2;
                    if i >= segments.len() {
                        return Err(format!("--set {key}: names a whole [[{seg}]] entry; name one of its fields, e.g. {key}.rate"));
                    }
                    continue;
                }
                None => {
                    return Err(format!(
                        "--set {key}: there is no {seg} named \"{name}\" (the [[{seg}]] names: {})",
                        if names.is_empty() { "none".to_string() } else { names.join(", ") }
                    ))
                }
            }
        }
        if let Some(inline) = item.as_inline_table_mut() {
            // An inline table (e.g. `delay = { model = "normal", ... }`): descend into it.
            let t = std::mem::take(inline).into_table();
            *item = Item::Table(t);
        }
        match item {
            Item::Table(t) => table = t,
            _ => return Err(format!("--set {key}: {} is a value, not a table", walked.join("."))),
        }
        i += 1;
    }
    let leaf = segments[segments.len() - 1];
    if let Some(existing) = table.get(leaf) {
        if existing.is_array_of_tables() {
            return Err(format!("--set {key}: cannot replace the whole [[{leaf}]] array"));
        }
    }
    table.insert(leaf, Item::Value(value));
    Ok(())
}

fn parse_value(raw: &str) -> Value {
    let trimmed = raw.trim();
    match Value::from_str(trimmed) {
        Ok(v) => v.decorated(" ", ""),
        Err(_) => Value::from(trimmed).decorated(" ", ""),
    }
}

/// Splits `KEY=VALUE` at the first `=`.
pub fn split_assignment(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
        _ => Err(format!("--set {}: expected KEY=VALUE, e.g. link.bottleneck.rate=30Mbit/s", one_line(s))),
    }
}

/// `s` with its control characters escaped (`\n`), so that an error quoting it is one line.
fn one_line(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = r#"
[run]
duration = "10 s"

[[link]]
name = "a"
between = ["x", "y"]
rate = "10 Mbit/s"

[[link]]
name = "b"
between = ["y", "z"]
rate = "20 Mbit/s"
delay = { model = "normal", mean = "10 ms", cv = 0.1 }
"#;

    fn doc() -> DocumentMut {
        DOC.parse().unwrap()
    }

    #[test]
    fn addresses_array_elements_by_name() {
        let mut d = doc();
        apply(&mut d, "link.b.rate", "30Mbit/s").unwrap();
        assert_eq!(d["link"][1]["rate"].as_str(), Some("30Mbit/s"));
        assert_eq!(d["link"][0]["rate"].as_str(), Some("10 Mbit/s"));
    }

    #[test]
    fn values_are_toml_when_they_parse() {
        let mut d = doc();
        apply(&mut d, "link.a.loss", "0.01").unwrap();
        apply(&mut d, "run.seed", "7").unwrap();
        apply(&mut d, "link.a.delay", r#"{ model = "normal", mean = "5 ms", cv = 0.2 }"#).unwrap();
        assert_eq!(d["link"][0]["loss"].as_float(), Some(0.01));
        assert_eq!(d["run"]["seed"].as_integer(), Some(7));
        assert_eq!(d["link"][0]["delay"]["cv"].as_float(), Some(0.2));
    }

    #[test]
    fn creates_missing_tables_and_descends_into_inline_ones() {
        let mut d = doc();
        apply(&mut d, "link.a.reverse.rate", "1 Mbit/s").unwrap();
        apply(&mut d, "link.b.delay.cv", "0.3").unwrap();
        apply(&mut d, "name", "renamed").unwrap();
        assert_eq!(d["link"][0]["reverse"]["rate"].as_str(), Some("1 Mbit/s"));
        assert_eq!(d["link"][1]["delay"]["cv"].as_float(), Some(0.3));
        assert_eq!(d["link"][1]["delay"]["mean"].as_str(), Some("10 ms"));
        let text = d.to_string();
        assert!(text.contains("name = \"renamed\""), "{text}");
    }

    #[test]
    fn unknown_elements_and_bad_paths_are_errors() {
        let mut d = doc();
        let e = apply(&mut d, "link.nosuch.rate", "1Mbit/s").unwrap_err();
        assert!(e.contains("no link named \"nosuch\"") && e.contains("a, b"), "{e}");
        assert!(apply(&mut d, "link.a.rate.x", "1").unwrap_err().contains("not a table"));
        assert!(apply(&mut d, "link.a", "1").unwrap_err().contains("whole [[link]]"));
        assert!(apply(&mut d, "link", "1").unwrap_err().contains("whole [[link]] array"));
        assert!(apply(&mut d, "a..b", "1").is_err());
        assert!(split_assignment("novalue").is_err());
        assert_eq!(split_assignment("=\n[run]").unwrap_err(), "--set =\\n[run]: expected KEY=VALUE, e.g. link.bottleneck.rate=30Mbit/s");
        assert_eq!(split_assignment("a.b= x=y").unwrap(), ("a.b".into(), " x=y".into()));
    }

    #[test]
    fn untouched_lines_keep_their_numbers() {
        let mut d = doc();
        apply(&mut d, "link.b.rate", "1 Mbit/s").unwrap();
        let before: Vec<&str> = DOC.lines().collect();
        let text = d.to_string();
        let after: Vec<&str> = text.lines().collect();
        let line = before.iter().position(|l| l.starts_with("delay")).unwrap();
        assert_eq!(after[line], before[line]);
    }
}

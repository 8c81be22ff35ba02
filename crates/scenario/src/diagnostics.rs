//! Turns parse and validation failures into one-line messages:
//! `FILE:LINE: field.path: what is wrong and what is allowed`.
//!
//! Paths name elements of arrays of tables by their `name` (`link.bottleneck.rate`, not
//! `link[0].rate`), the way users write them in `--set`.

use toml_edit::{ImDocument, InlineTable, Item, Table, Value};

/// 1-based line of a byte offset.
pub fn line_of_offset(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())].iter().filter(|&&b| b == b'\n').count() + 1
}

/// Finds the line where the value at `path` (user-style segments) is written; when the path
/// goes deeper than the file does, the line of the deepest part that exists.
pub fn line_of_path(text: &str, path: &[String]) -> Option<usize> {
    let doc = ImDocument::parse(text.to_string()).ok()?;
    let span = span_in_table(doc.as_table(), path)?;
    Some(line_of_offset(text, span.start))
}

type Span = std::ops::Range<usize>;

fn span_in_table(t: &Table, path: &[String]) -> Option<Span> {
    let (first, rest) = path.split_first()?;
    if let Some((name, index)) = indexed(first) {
        // `key[i]`: element i of an array of inline tables (`schedule[1].path`).
        let (key, item) = t.get_key_value(name)?;
        let element = item.as_array().and_then(|a| a.get(index));
        return element.and_then(|v| span_in_value(v, rest)).or(key.span());
    }
    let (key, item) = t.get_key_value(first)?;
    let deeper = if rest.is_empty() {
        None
    } else {
        match item {
            Item::Table(inner) => span_in_table(inner, rest),
            Item::Value(Value::InlineTable(inner)) => span_in_inline(inner, rest),
            Item::ArrayOfTables(array) => {
                let (name, rest) = rest.split_first()?;
                let element = array.iter().find(|e| e.get("name").and_then(|n| n.as_str()) == Some(name.as_str()))?;
                let name_span = element.get_key_value("name").and_then(|(k, _)| k.span());
                span_in_table(element, rest).or(name_span)
            }
            _ => None,
        }
    };
    deeper.or(key.span())
}

/// `name[3]` → (`name`, 3).
fn indexed(segment: &str) -> Option<(&str, usize)> {
    let (name, rest) = segment.split_once('[')?;
    Some((name, rest.strip_suffix(']')?.parse().ok()?))
}

/// The span of `path` inside an array element (the element's own when `path` is empty).
fn span_in_value(v: &Value, path: &[String]) -> Option<Span> {
    match v {
        Value::InlineTable(t) if !path.is_empty() => span_in_inline(t, path).or(v.span()),
        _ => v.span(),
    }
}

fn span_in_inline(t: &InlineTable, path: &[String]) -> Option<Span> {
    let (first, rest) = path.split_first()?;
    if let Some((name, index)) = indexed(first) {
        let (key, value) = t.get_key_value(name)?;
        let element = value.as_array().and_then(|a| a.get(index));
        return element.and_then(|v| span_in_value(v, rest)).or(key.span());
    }
    let (key, value) = t.get_key_value(first)?;
    let deeper = match value {
        Item::Value(Value::InlineTable(inner)) if !rest.is_empty() => span_in_inline(inner, rest),
        _ => None,
    };
    deeper.or(key.span())
}

/// Renders a serde path (`link[0].rate`) in user style (`link.bottleneck.rate`), using the
/// element names found in `names` (`link` → names of the links in order, same for `flow`).
/// `arrays` gives, per array of named tables (`link`, `flow`, `split`), its elements' names.
pub fn user_path(segments: &[PathSegment], arrays: &[(&str, Vec<Option<String>>)]) -> Vec<String> {
    let mut out = Vec::new();
    let mut last_key: Option<&str> = None;
    for seg in segments {
        match seg {
            PathSegment::Key(k) => {
                out.push(k.clone());
                last_key = Some(k);
            }
            PathSegment::Index(i) => {
                let names: &[Option<String>] = arrays.iter().find(|(k, _)| Some(*k) == last_key).map_or(&[], |(_, n)| n);
                match names.get(*i).cloned().flatten() {
                    Some(n) => out.push(n),
                    None => {
                        let prev = out.pop().unwrap_or_default();
                        out.push(format!("{prev}[{i}]"));
                    }
                }
                last_key = None;
            }
        }
    }
    out
}

/// One step of a serde path: a key, or an index into an array.
#[derive(Debug, Clone, PartialEq)]
pub enum PathSegment {
    /// A table key.
    Key(String),
    /// An array index, 0-based.
    Index(usize),
}

/// serde's words for a value outside a typed choice (`unknown variant `x`, expected one of
/// `a`, `b``, or `expected `a` or `b``) in the words every named choice of the schema uses
/// (`resolve`'s `choose`): `unknown <field> "x"; known: a, b`, `field` being the last key of
/// the path (`_` read as a space). `None` for any other message.
pub fn choice_words(field: &str, message: &str) -> Option<String> {
    let rest = message.strip_prefix("unknown variant `")?;
    let (given, rest) = rest.split_once('`')?;
    let expected = rest.strip_prefix(", expected ")?;
    let known: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    if known.is_empty() {
        return None;
    }
    Some(format!("unknown {} \"{given}\"; known: {}", field.replace('_', " "), known.join(", ")))
}

/// Marks the start and the end of a field path carried inside an error message ([`inside`]).
const INSIDE: char = '\u{1f}';

/// `message` about the field at `path` below the value being read: serde's errors from
/// inside a table it read whole (a table tagged by `model`) carry no path of their own, so
/// the path travels in the message, and [`split_inside`] takes it out again.
pub fn inside(path: &[String], message: &str) -> String {
    if path.is_empty() {
        return message.to_string();
    }
    format!("{INSIDE}{}{INSIDE}{message}", path.join("."))
}

/// The field path [`inside`] put in `message` (empty when none) and the message without it.
pub fn split_inside(message: &str) -> (Vec<String>, String) {
    let mut fields = Vec::new();
    let mut rest = message;
    // A table inside a tagged table adds its own part in front.
    while let Some((path, after)) = rest.strip_prefix(INSIDE).and_then(|r| r.split_once(INSIDE)) {
        fields.extend(path.split('.').map(String::from));
        rest = after;
    }
    (fields, rest.to_string())
}

/// A number as a message shows it: `1e30`, not `1000000000000000000000000000000`.
pub fn show_number(v: f64) -> String {
    if v.is_finite() && v.abs() >= 1e16 {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// A whole number from `min` to `max` read from `d` (an integer of the file, or a float with
/// no fraction), refused otherwise as `<what> must be a whole number ≥ <min>, got <value>`
/// (or `at most <max>`).
pub fn whole_number<'de, D: serde::Deserializer<'de>>(d: D, min: u64, max: u64, what: &'static str) -> Result<u64, D::Error> {
    use serde::de::{Error, Visitor};
    struct V {
        min: u64,
        max: u64,
        what: &'static str,
    }
    impl V {
        fn refuse<E: Error>(&self, shown: String) -> E {
            E::custom(format!("{} must be a whole number ≥ {}, got {shown}", self.what, self.min))
        }
    }
    impl<'de> Visitor<'de> for V {
        type Value = u64;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "a whole number ≥ {}", self.min)
        }
        fn visit_u64<E: Error>(self, v: u64) -> Result<u64, E> {
            if v < self.min {
                return Err(self.refuse(v.to_string()));
            }
            if v > self.max {
                return Err(E::custom(format!("{} must be at most {}, got {v}", self.what, self.max)));
            }
            Ok(v)
        }
        fn visit_i64<E: Error>(self, v: i64) -> Result<u64, E> {
            match u64::try_from(v) {
                Ok(v) => self.visit_u64(v),
                Err(_) => Err(self.refuse(v.to_string())),
            }
        }
        fn visit_f64<E: Error>(self, v: f64) -> Result<u64, E> {
            if v.fract() == 0.0 && v >= 0.0 && v <= self.max as f64 {
                return self.visit_u64(v as u64);
            }
            if v.fract() == 0.0 && v > self.max as f64 {
                return Err(E::custom(format!("{} must be at most {}, got {}", self.what, self.max, show_number(v))));
            }
            Err(self.refuse(show_number(v)))
        }
        fn visit_str<E: Error>(self, v: &str) -> Result<u64, E> {
            Err(self.refuse(format!("\"{v}\"")))
        }
    }
    d.deserialize_any(V { min, max, what })
}

/// serde's words for a number that does not fit an unsigned integer field (`invalid value:
/// integer `-1`, expected u32`, `invalid type: floating point `2.5`, expected u64`) in the
/// schema's: `must be a whole number ≥ 0, got -1` (`from 0 to 4294967295` for a field with a
/// smaller range); a whole number beyond TOML's integers, which an override passes on as a
/// string, is said to be one. `None` for any other message.
pub fn number_words(message: &str) -> Option<String> {
    if let Some(rest) = message.strip_prefix("invalid type: string \"") {
        // A whole number too large for TOML (an override keeps it as a string).
        let (given, rest) = rest.split_once('"')?;
        let big = given.parse::<u128>().ok().filter(|&n| n > i64::MAX as u128)?;
        return matches!(rest, ", expected u64" | ", expected usize").then(|| format!("TOML integers stop at 2^63−1 (9223372036854775807), got {big}"));
    }
    let (kind, rest) = ["invalid value: integer `", "invalid type: floating point `", "invalid type: integer `"]
        .iter()
        .find_map(|p| message.strip_prefix(p).map(|r| (p.contains("floating"), r)))?;
    let (given, rest) = rest.split_once('`')?;
    let max = match rest.strip_prefix(", expected ")? {
        "u8" => u64::from(u8::MAX),
        "u16" => u64::from(u16::MAX),
        "u32" => u64::from(u32::MAX),
        "u64" | "usize" => u64::MAX,
        _ => return None,
    };
    let shown = if kind { given.parse::<f64>().map_or(given.to_string(), show_number) } else { given.to_string() };
    Some(if max == u64::MAX {
        format!("must be a whole number ≥ 0, got {shown}")
    } else {
        format!("must be a whole number from 0 to {max}, got {shown}")
    })
}
/// serde's words for a value where a table of fields belongs (`invalid type: integer `5`,
/// expected struct RunSection`, naming a type of the code) in the user's: `must be a table
/// of fields, got integer 5`. `None` for any other message.
pub fn table_words(message: &str) -> Option<String> {
    let rest = message.strip_prefix("invalid type: ")?;
    let (given, expected) = rest.split_once(", expected struct ")?;
    if expected.is_empty() || expected.contains(' ') {
        return None;
    }
    Some(format!("must be a table of fields, got {}", given.replace('`', "")))
}

/// The field a line of a TOML text sets, as a dotted path: the key before its `=`, under the
/// last table header above it (`[run]` + `seed = ...` → `run.seed`). For a TOML text that did
/// not parse, so only the line is known.
pub fn key_at_line(text: &str, line: usize) -> Option<String> {
    let mut header: Option<String> = None;
    for (i, l) in text.lines().enumerate() {
        let t = l.trim();
        if i + 1 == line {
            let (key, _) = t.split_once('=')?;
            let key = key.trim().trim_matches('"');
            if key.is_empty() || key.starts_with('#') {
                return None;
            }
            return Some(header.map_or(key.to_string(), |h| format!("{h}.{key}")));
        }
        if t.starts_with('[') {
            header = Some(t.trim_start_matches('[').split(']').next().unwrap_or("").trim().to_string()).filter(|h| !h.is_empty());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "name = \"x\"\n[run]\nduration = \"1 s\"\n\n[[link]]\nname = \"a\"\nrate = \"1 Mbit/s\"\n\n[[link]]\nname = \"b\"\nrate = \"2 Mbit/s\"\ndelay = { model = \"normal\", cv = 2 }\n[link.reverse]\nqueue = \"1 packets\"\n";

    fn p(s: &str) -> Vec<String> {
        s.split('.').map(String::from).collect()
    }

    #[test]
    fn finds_lines_of_named_array_elements() {
        assert_eq!(line_of_path(DOC, &p("run.duration")), Some(3));
        assert_eq!(line_of_path(DOC, &p("link.b.rate")), Some(11));
        assert_eq!(line_of_path(DOC, &p("link.a.rate")), Some(7));
        assert_eq!(line_of_path(DOC, &p("link.b")), Some(10));
        assert_eq!(line_of_path(DOC, &p("link.b.delay.cv")), Some(12));
        assert_eq!(line_of_path(DOC, &p("link.b.reverse.queue")), Some(14));
        assert_eq!(line_of_path(DOC, &p("link.b.nosuch")), Some(10));
    }

    #[test]
    fn serde_paths_become_user_paths() {
        let segs = vec![PathSegment::Key("link".into()), PathSegment::Index(1), PathSegment::Key("rate".into())];
        let names = [Some("a".to_string()), Some("b".to_string())];
        assert_eq!(user_path(&segs, &[("link", names.to_vec())]), p("link.b.rate"));
        assert_eq!(user_path(&segs, &[]), vec!["link[1]".to_string(), "rate".to_string()]);
    }

    #[test]
    fn serde_number_errors_read_like_the_schema_s_own() {
        assert_eq!(number_words("invalid value: integer `-1`, expected u32").as_deref(), Some("must be a whole number from 0 to 4294967295, got -1"));
        assert_eq!(number_words("invalid type: floating point `1000000000000000000000000000000.0`, expected u64").as_deref(), Some("must be a whole number ≥ 0, got 1e30"));
        assert_eq!(number_words("invalid type: floating point `2.5`, expected u32").as_deref(), Some("must be a whole number from 0 to 4294967295, got 2.5"));
        assert_eq!(number_words("invalid type: integer `5`, expected struct RunSection"), None);
        assert_eq!(number_words("invalid type: string \"a\", expected u32"), None);
        assert_eq!(number_words("invalid type: string \"18446744073709551615\", expected u64").as_deref(), Some("TOML integers stop at 2^63−1 (9223372036854775807), got 18446744073709551615"));
    }

    #[test]
    fn a_table_where_a_value_stands_is_named_a_table() {
        assert_eq!(table_words("invalid type: integer `5`, expected struct RunSection").as_deref(), Some("must be a table of fields, got integer 5"));
        assert_eq!(table_words("invalid type: string \"x\", expected struct LinkSection").as_deref(), Some("must be a table of fields, got string \"x\""));
        assert_eq!(table_words("invalid type: integer `5`, expected a string"), None);
    }

    #[test]
    fn the_key_of_a_line_names_its_table() {
        let text = "name = \"x\"\n[run]\n# c\nseed = 18446744073709551615\n[[link]]\nrate = 1\n";
        assert_eq!(key_at_line(text, 4).as_deref(), Some("run.seed"));
        assert_eq!(key_at_line(text, 1).as_deref(), Some("name"));
        assert_eq!(key_at_line(text, 6).as_deref(), Some("link.rate"));
        assert_eq!(key_at_line(text, 3), None);
    }

    #[test]
    fn a_path_inside_a_message_comes_out_again() {
        let m = inside(&p("policy.size"), "x");
        assert_eq!(split_inside(&m), (p("policy.size"), "x".to_string()));
        assert_eq!(split_inside("plain"), (Vec::<String>::new(), "plain".to_string()));
        assert_eq!(inside(&[], "x"), "x");
    }

    #[test]
    fn serde_choice_errors_read_like_the_schema_s_own() {
        assert_eq!(choice_words("aqm", "unknown variant `red`, expected one of `codel`, `fq_codel`, `pie`").as_deref(), Some("unknown aqm \"red\"; known: codel, fq_codel, pie"));
        assert_eq!(choice_words("sight", "unknown variant `nlos2`, expected `los` or `nlos`").as_deref(), Some("unknown sight \"nlos2\"; known: los, nlos"));
        assert_eq!(choice_words("ue_side", "unknown variant `x`, expected `a`").as_deref(), Some("unknown ue side \"x\"; known: a"));
        assert_eq!(choice_words("rate", "invalid type: integer `40`, expected a string"), None);
        assert_eq!(choice_words("queue", "unknown field `qeueu`, expected one of `rate`, `delay`"), None);
    }
}

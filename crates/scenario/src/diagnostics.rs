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
    fn serde_choice_errors_read_like_the_schema_s_own() {
        assert_eq!(choice_words("aqm", "unknown variant `red`, expected one of `codel`, `fq_codel`, `pie`").as_deref(), Some("unknown aqm \"red\"; known: codel, fq_codel, pie"));
        assert_eq!(choice_words("sight", "unknown variant `nlos2`, expected `los` or `nlos`").as_deref(), Some("unknown sight \"nlos2\"; known: los, nlos"));
        assert_eq!(choice_words("ue_side", "unknown variant `x`, expected `a`").as_deref(), Some("unknown ue side \"x\"; known: a"));
        assert_eq!(choice_words("rate", "invalid type: integer `40`, expected a string"), None);
        assert_eq!(choice_words("queue", "unknown field `qeueu`, expected one of `rate`, `delay`"), None);
    }
}

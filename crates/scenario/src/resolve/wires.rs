//! Wires (test builds only, feature `test-elements`): each `[[wire]]` becomes two link
//! directions whose element is a fixed-delay wire, so routes and splits name it like a link.
//!
//! The feature alone does not make them available: the tests that use them also turn on
//! [`allow_test_elements`]. A build with the feature for other reasons (`make test` builds the
//! Python extension with the test binaries' features, to share their compiled crates) refuses a
//! `[[wire]]` as a user-facing build does.

use super::errors::{check_name, err, FieldError};
use super::links::{Direction, LinkDirection};
use crate::schema::WireSection;
use multiconn_net::wire::WireModel;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

static ALLOWED: AtomicBool = AtomicBool::new(false);

/// Lets scenarios of this process use the test-only hop kinds (`[[wire]]`). Tests only.
pub fn allow_test_elements() {
    ALLOWED.store(true, Ordering::Relaxed);
}

/// Appends every wire's two directions to `links` and its name to `index`.
pub(super) fn resolve_wires<'f>(wires: &'f [WireSection], links: &mut Vec<LinkDirection>, index: &mut HashMap<&'f str, usize>) -> Result<(), FieldError> {
    if !wires.is_empty() && !ALLOWED.load(Ordering::Relaxed) {
        return Err(err(&["wire"], "unknown section: [[wire]] is a hop kind of the simulator's own tests"));
    }
    for (i, w) in wires.iter().enumerate() {
        check_name("wire", i, &w.name)?;
        if index.insert(&w.name, links.len() / 2).is_some() {
            return Err(err(&["wire", &w.name, "name"], format!("a link or wire is already named \"{}\"", w.name)));
        }
        if w.between[0] == w.between[1] {
            return Err(err(&["wire", &w.name, "between"], "a wire must join two different nodes"));
        }
        let [a, b] = w.between.clone();
        let model = Arc::new(WireModel { delay: w.delay });
        links.push(LinkDirection { name: w.name.clone(), direction: Direction::Forward, from: a.clone(), to: b.clone(), model: model.clone(), aqm: None, aqm_ecn: false });
        links.push(LinkDirection { name: w.name.clone(), direction: Direction::Reverse, from: b, to: a, model, aqm: None, aqm_ecn: false });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::{load, Origin};

    /// The library's own test process never calls [`super::allow_test_elements`]: there a
    /// `[[wire]]` is refused although the feature is on.
    #[test]
    fn a_wire_is_refused_unless_this_process_allowed_test_elements() {
        let text = r#"
[[link]]
name = "access"
between = ["server", "a"]
rate = "8 Mbit/s"
delay = "5 ms"
queue = "10 packets"

[[wire]]
name = "backhaul"
between = ["a", "client"]
delay = "7 ms"

[[flow]]
name = "one"
from = "server"
to = "client"
route = ["access", "backhaul"]
transport = "udp"
app = "bulk"
"#;
        let origin = Origin { name: "test.toml".into(), base_dir: ".".into() };
        let e = load(text, &origin, &[]).map(drop).expect_err("refused").to_string();
        assert!(e.contains("wire") && e.contains("unknown section"), "{e}");
    }
}

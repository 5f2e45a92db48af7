//! The records' fields as `_core.RECORDS` gives them: each result kind's table of fields
//! (`record!`, `crate::fields`) read into rows, which `ctxbench.schema` reads (the file
//! checks, the result classes, the stub's TypedDicts and the table's columns follow from it),
//! so a new column is its struct field and where it is filled.
//!
//! What the type cannot say is a field's `spec`, words separated by spaces: the levels of an
//! array (`[P,R]`: points, repetitions, cells `C`, any `*`, a count, or another field's name)
//! and its flags (`min=0`, `nan`, `inf` (+inf only), `holes` (null entries: no sample), `null`
//! (null although the type is not an `Option`: older files), `optional` (older files lack
//! it), `ragged`, `unsigned`, `column` (repeated by name on its rows of the tidy table),
//! `config` (what was asked; on a flattened field, of all its fields), `opaque` (an object
//! whose fields are not checked), `oneof=a|b` or `oneof=ENGINES` (checked values; an
//! upper-case name is the list `_core` exports), `literal=a|b` (the stub's values, not
//! checked), `alias=_Name` (the stub's name for the strings or the object), `keys=p50|p90`
//! (an object of these keys, each an array as the levels say).

use crate::fields::Field;
use crate::request::{known, Known};
use serde::Serialize;

/// An array's level: a count, a name the record binds (a scalar field of that name, else the
/// first array using it), or any length (null).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Level {
    Count(usize),
    Named(String),
    Any,
}

/// A field as `_core.RECORDS` gives it: `ctxbench._field.Field`'s arguments, its name and doc.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Row {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub shape: Vec<Level>,
    pub min: Option<f64>,
    pub nullable: bool,
    pub nan: bool,
    pub inf: bool,
    pub holes: bool,
    pub choices: Option<Vec<&'static str>>,
    pub literals: Option<Vec<&'static str>>,
    pub required: bool,
    pub ragged: bool,
    pub unsigned: bool,
    pub column: bool,
    pub config: bool,
    /// The stub's name of the object (its TypedDict) or of the strings (their `Literal`).
    pub alias: Option<&'static str>,
    pub fields: Option<Vec<Row>>,
    pub doc: String,
}

fn level(word: &str) -> Level {
    match word {
        "P" => Level::Named("points".into()),
        "R" => Level::Named("repetitions".into()),
        "C" => Level::Named("cells".into()),
        "*" => Level::Any,
        w => w
            .parse()
            .map_or_else(|_| Level::Named(w.into()), Level::Count),
    }
}

/// A list of names: `a|b`, or a list by its name: one `_core` exports, or one of these.
fn names(list: &'static str) -> Result<Vec<&'static str>, String> {
    if !list.chars().all(|c| c.is_ascii_uppercase() || c == '_') {
        return Ok(list.split('|').collect());
    }
    let own: &[(&str, &[&'static str])] = &[
        ("STOPPED", &crate::stop::Stopped::NAMES),
        ("VERDICTS", &crate::verdict::Verdict::NAMES),
        ("LEVELS", &crate::stats::Level::NAMES),
    ];
    if let Some((_, names)) = own.iter().find(|(name, _)| *name == list) {
        return Ok(names.to_vec());
    }
    match known().into_iter().find(|(name, _)| *name == list) {
        Some((_, Known::Names(names))) => Ok(names),
        _ => Err(format!("no list {list}")),
    }
}

/// Rows of a record's fields: a flattened field's fields in its place (with its `config`),
/// a field of the record's own replacing one of theirs of the same name.
pub fn rows(fields: &[Field]) -> Result<Vec<Row>, String> {
    let mut out: Vec<Row> = Vec::new();
    for f in fields {
        let own = row(f).map_err(|e| format!("{}: {e}", f.name))?;
        if f.serde != "(flatten)" {
            match out.iter_mut().find(|r| r.name == own.name) {
                Some(r) => *r = own,
                None => out.push(own),
            }
            continue;
        }
        for mut r in rows(f.shape.fields)? {
            r.config |= own.config;
            if !out.iter().any(|o| o.name == r.name) {
                out.push(r);
            }
        }
    }
    Ok(out)
}

/// One field's row: its type from `shape`, the rest from `spec`.
fn row(f: &Field) -> Result<Row, String> {
    let s = f.shape;
    // A field its file names otherwise (`#[serde(rename = "type")]`) is its file's.
    let renamed = f
        .serde
        .strip_prefix("(rename = \"")
        .and_then(|n| n.strip_suffix("\")"));
    let mut r = Row {
        name: renamed.unwrap_or(f.name).into(),
        kind: s.kind,
        nullable: s.nullable,
        required: true,
        alias: (!s.name.is_empty()).then_some(s.name),
        doc: f.doc.lines().map(str::trim).collect::<Vec<_>>().join(" "),
        ..Row::default()
    };
    let mut keys = None;
    for word in f.spec.split_whitespace() {
        let (key, value) = word.split_once('=').unwrap_or((word, ""));
        match key {
            _ if word.starts_with('[') => {
                let inner = word.trim_start_matches('[').trim_end_matches(']');
                r.shape = inner.split(',').map(level).collect();
            }
            "min" => r.min = Some(value.parse().map_err(|_| format!("min={value}"))?),
            "nan" => r.nan = true,
            "inf" => r.inf = true,
            "holes" => r.holes = true,
            "null" => r.nullable = true,
            "optional" => r.required = false,
            "ragged" => r.ragged = true,
            "unsigned" => r.unsigned = true,
            "column" => r.column = true,
            "config" => r.config = true,
            "opaque" => r.fields = Some(Vec::new()),
            "oneof" => r.choices = Some(names(value)?),
            "literal" => r.literals = Some(names(value)?),
            "alias" => r.alias = Some(value),
            "keys" => keys = Some(value),
            _ => return Err(format!("unknown word {word:?} in {:?}", f.spec)),
        }
    }
    if r.fields.take().is_some() {
        // Opaque: an object whose entries are not checked, whatever the Rust type holds.
        return Ok(Row { kind: "dict", ..r });
    }
    if s.kind == "dict" && f.serde != "(flatten)" {
        r.fields = Some(rows(s.fields)?);
    }
    let depth = s.depth - usize::from(keys.is_some());
    if r.shape.is_empty() {
        r.shape = vec![Level::Any; depth];
    }
    if r.shape.len() != depth {
        let levels = r.shape.len();
        return Err(format!("{levels} levels for a type {depth} lists deep"));
    }
    let Some(keys) = keys else { return Ok(r) };
    let entry = |name: &str| Row {
        name: name.into(),
        nullable: false,
        required: true,
        alias: None,
        doc: String::new(),
        ..r.clone()
    };
    let entries = keys.split('|').map(entry).collect();
    Ok(Row {
        kind: "dict",
        shape: Vec::new(),
        fields: Some(entries),
        min: None,
        nan: false,
        holes: false,
        ..r
    })
}

/// Every result kind's rows, by kind, in order: what `_core.RECORDS` holds.
pub struct Records(pub Vec<(&'static str, Vec<Row>)>);

impl Serialize for Records {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(kind, rows)| (kind, rows)))
    }
}

/// The records of the result kinds, or the first declaration that does not read.
pub fn records() -> Result<Records, String> {
    use super::{AbRecord, MatrixRecord, PingpongRecord, RingRecord};
    let kinds = [
        ("ring", RingRecord::FIELDS),
        ("pingpong", PingpongRecord::FIELDS),
        ("matrix", MatrixRecord::FIELDS),
        ("ab", AbRecord::FIELDS),
    ];
    let each = kinds.map(|(kind, fields)| rows(fields).map(|r| (kind, r)));
    Ok(Records(each.into_iter().collect::<Result<_, _>>()?))
}

/// What the core returns besides a kind's record, by the stub's name of it: what
/// `_core.RETURNS` holds.
pub fn returns() -> Result<Records, String> {
    let cache = rows(super::CacheRecord::FIELDS)?;
    Ok(Records(vec![("CacheSweepDict", cache)]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fields::Declared;

    #[test]
    fn every_declaration_reads_and_its_levels_fit_its_type() {
        let all = records().unwrap();
        let ring = &all.0[0].1;
        let field = |name: &str| ring.iter().find(|r| r.name == name).unwrap();
        assert_eq!(field("engine").choices.as_ref().unwrap()[0], "process");
        assert!(field("point_id").config && field("point_id").column);
        // The ring's own `interference` (asked and achieved), not the config's.
        let interference = field("interference");
        assert!(!interference.config);
        let inner = interference.fields.as_ref().unwrap();
        assert!(inner.iter().any(|r| r.name == "span_s"));
        assert!(inner.iter().any(|r| r.name == "hogs"));
        let percentiles = field("hop_percentiles_us");
        assert_eq!((percentiles.kind, percentiles.nullable), ("dict", true));
        assert_eq!(percentiles.fields.as_ref().unwrap().len(), 5);
        // A matrix's topology, declared where its table is made: a list of caches, each by
        // its file's names (`type`, not `kind`); the shares by cache name, any name.
        let topology = all.0[2].1.iter().find(|r| r.name == "topology").unwrap();
        let inner = |r: &Row, name: &str| {
            let fields = r.fields.as_ref().unwrap();
            fields.iter().find(|f| f.name == name).cloned().unwrap()
        };
        let caches = inner(topology, "caches");
        assert_eq!((caches.kind, caches.shape.len()), ("dict", 1));
        assert_eq!(inner(&caches, "type").kind, "str");
        let shares = inner(topology, "cache_share_kb");
        assert_eq!((shares.kind, shares.shape.len()), ("dict", 0));
        assert!(shares.fields.is_none());
        // A cache sweep's record: its ring records by the stub's name, its split by its own.
        let cache = &returns().unwrap().0[0].1;
        assert_eq!(cache[0].alias, Some("RingDict"));
        assert_eq!(cache[1].fields.as_ref().unwrap().len(), 7);
    }

    #[test]
    fn a_spec_that_does_not_fit_is_refused() {
        const PLAIN: Field = Field {
            name: "x",
            shape: <Vec<f64> as Declared>::SHAPE,
            spec: "",
            serde: "",
            doc: "",
        };
        let bad = |spec| Field { spec, ..PLAIN };
        assert!(row(&bad("[P]")).is_ok());
        assert!(row(&bad("[P,R]")).unwrap_err().contains("2 levels"));
        assert!(row(&bad("minimum=0")).unwrap_err().contains("unknown word"));
        assert!(row(&bad("oneof=NO_SUCH_LIST")).is_err());
    }
}

//! A record's fields, declared once beside its serde struct: `record!` writes the struct and
//! its table of fields (`FIELDS`: each field's name, its type as the Rust type says it, what
//! the type cannot say and its doc). Every module that owns a record's type declares it so
//! (`record/`, a ring's figures in `result/`, a matrix's topology, the neighbours asked);
//! `record::table` reads the tables into `_core.RECORDS` and lists the words of a field's spec.

/// A field's type as its Rust type says it: a scalar kind (or "dict", with fields), how many
/// lists deep, whether null is a value, and the object's stub name.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    pub kind: &'static str,
    pub depth: usize,
    pub nullable: bool,
    pub fields: &'static [Field],
    pub name: &'static str,
}

impl Shape {
    pub const fn scalar(kind: &'static str) -> Shape {
        Shape {
            kind,
            depth: 0,
            nullable: false,
            fields: &[],
            name: "",
        }
    }
    pub const fn record(fields: &'static [Field], name: &'static str) -> Shape {
        Shape {
            kind: "dict",
            depth: 0,
            nullable: false,
            fields,
            name,
        }
    }
    const fn listed(self) -> Shape {
        Shape {
            depth: self.depth + 1,
            ..self
        }
    }
    const fn or_null(self) -> Shape {
        Shape {
            nullable: true,
            ..self
        }
    }
}

/// A field of a record, as `record!` declares it.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    pub name: &'static str,
    pub shape: Shape,
    pub spec: &'static str,
    /// The field's serde attribute, as written (`(flatten)`: its fields are the record's).
    pub serde: &'static str,
    pub doc: &'static str,
}

/// What a type is in a record.
pub trait Declared {
    const SHAPE: Shape;
}

macro_rules! scalars {
    ($($kind:literal: $($t:ty),+;)+) => {$($(
        impl Declared for $t { const SHAPE: Shape = Shape::scalar($kind); }
    )+)+};
}
scalars! {
    "float": f64;
    "int": usize, u64, i64, i32, u32, u8;
    "bool": bool;
    "str": String, &'static str;
}
impl<T: Declared> Declared for Vec<T> {
    const SHAPE: Shape = T::SHAPE.listed();
}
impl<T: Declared, const N: usize> Declared for [T; N] {
    const SHAPE: Shape = T::SHAPE.listed();
}
impl<T: Declared> Declared for Option<T> {
    const SHAPE: Shape = T::SHAPE.or_null();
}
/// A named series (`in_order`): the key is the object's (`keys=`, or any where `opaque`).
impl<T: Declared> Declared for (&'static str, T) {
    const SHAPE: Shape = T::SHAPE;
}
impl<T: Declared> Declared for (String, T) {
    const SHAPE: Shape = T::SHAPE;
}

/// Named series as a map in their order ("p50" before "max"), or null.
pub(crate) fn in_order<S: serde::Serializer>(
    named: &Option<Vec<(&'static str, Vec<f64>)>>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match named {
        Some(v) => s.collect_map(v.iter().map(|(k, x)| (k, x))),
        None => s.serialize_none(),
    }
}

/// Declares records: each `pub struct Name as "StubName" { /// doc, #[serde(..)], pub field:
/// Type = "spec", ... }` becomes the serde struct and `Name::FIELDS`.
macro_rules! record {
    ($(
        $(#[$meta:meta])*
        pub struct $name:ident $(as $dict:literal)? {
            $(
                $(#[doc = $doc:literal])*
                $(#[serde $serde:tt])?
                pub $field:ident: $ty:ty = $spec:literal,
            )*
        }
    )*) => {$(
        $(#[$meta])*
        #[derive(Debug, Clone, serde::Serialize)]
        pub struct $name {
            $($(#[doc = $doc])* $(#[serde $serde])? pub $field: $ty,)*
        }
        impl $crate::fields::Declared for $name {
            const SHAPE: $crate::fields::Shape =
                $crate::fields::Shape::record(Self::FIELDS, concat!("" $(, $dict)?));
        }
        impl $name {
            /// Every field of the record, in order (`record::table`).
            pub const FIELDS: &'static [$crate::fields::Field] = &[$(
                $crate::fields::Field {
                    name: stringify!($field),
                    shape: <$ty as $crate::fields::Declared>::SHAPE,
                    spec: $spec,
                    serde: concat!("" $(, stringify!($serde))?),
                    doc: concat!("" $(, $doc, "\n")*),
                },
            )*];
        }
    )*};
}
pub(crate) use record;

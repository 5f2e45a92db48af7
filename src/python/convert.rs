//! Python values into the core's: each argument by its parameter's kind
//! (`request::Kind`), a call's arguments into a `Request`, each error into its exception.
//! Types are checked here (a `TypeError` naming the parameter); ranges, defaults and every
//! decision are the request's.

use crate::error::Error;
use crate::request::{expected, params, Door, Kind, Param, Request, Value};
use crate::stats::EarlierRun;
use pyo3::exceptions::{PyKeyboardInterrupt, PyMemoryError, PyOSError, PyRuntimeError};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDict, PyFrozenSet, PyInt, PyMemoryView, PySet, PyString,
};

/// The core's error as the Python exception that says it (`pending`: the exception a
/// signal handler raised, for an interrupted run).
pub fn to_py(e: Error, pending: Option<PyErr>) -> PyErr {
    match e {
        Error::Invalid { .. } => PyValueError::new_err(e.to_string()),
        Error::Type(_) => PyTypeError::new_err(e.to_string()),
        Error::Os { errno, .. } => PyOSError::new_err((errno, e.to_string())),
        Error::Memory { .. } => PyMemoryError::new_err(e.to_string()),
        Error::Peer(_) => PyRuntimeError::new_err(e.to_string()),
        Error::Interrupted => {
            pending.unwrap_or_else(|| PyKeyboardInterrupt::new_err("interrupted"))
        }
    }
}

/// The core's error as the Python exception that says it, so that `?` converts it.
impl From<Error> for PyErr {
    fn from(e: Error) -> PyErr {
        to_py(e, None)
    }
}

/// The request a call makes of `door`: its positional arguments by name (None: not given),
/// then its keyword arguments, each converted by its parameter's kind and checked by the
/// request.
pub fn request(
    door: Door,
    positional: &[(&str, Option<&Bound<'_, PyAny>>)],
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<Request> {
    let mut r = Request::new(door);
    let mut give = |name: &str, obj: &Bound<'_, PyAny>| -> PyResult<()> {
        let value = match params::find(door, name) {
            Some(param) => value(param, obj)?,
            // The request names what the measurement does not take.
            None => Value::None,
        };
        r.set(name, value)?;
        Ok(())
    };
    for (name, obj) in positional {
        if let Some(obj) = obj {
            give(name, obj)?;
        }
    }
    if let Some(kwargs) = kwargs {
        for (key, obj) in kwargs.iter() {
            give(&key.extract::<String>()?, &obj)?;
        }
    }
    Ok(r)
}

/// One argument as a value of `param`'s kind.
pub fn value(param: &Param, obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    let name = param.name;
    if obj.is_none() {
        return Ok(Value::None);
    }
    match param.kind {
        Kind::Counts if is_one_int(obj)? => Ok(Value::Int(int(obj, name, param.kind)?)),
        Kind::Placement if obj.is_instance_of::<PyString>() => Ok(Value::Name(obj.extract()?)),
        Kind::Counts | Kind::Sizes | Kind::Cpus | Kind::Placement => ints(obj, param),
        Kind::Count(_) | Kind::OptCount(_) | Kind::OptInt(_) | Kind::Cpu | Kind::Stride => {
            Ok(Value::Int(int(obj, name, param.kind)?))
        }
        Kind::Real(_) | Kind::OptReal(_) => real(obj, name).map(Value::Real),
        Kind::Switch => switch(obj, name).map(Value::Switch),
        Kind::Choice(_) | Kind::OptChoice(_) => text(obj, param).map(Value::Name),
        Kind::Memory if obj.is_instance_of::<PyString>() => Ok(Value::Name(obj.extract()?)),
        // A node id too wide for 64 bits is out of range (a ValueError), not of another type.
        Kind::Memory if is_one_int(obj)? => Ok(Value::Int(int(obj, name, param.kind)?)),
        Kind::Memory => Err(PyTypeError::new_err(format!(
            "{name}: expected {}",
            expected(param.kind)
        ))),
        Kind::History => history(obj).map(Value::Runs),
        Kind::Interference => pairs(obj, name).map(Value::Pairs),
    }
}

/// A dict of names to numbers (not bools), in its order; the request checks the names and
/// ranges.
fn pairs(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Vec<(String, f64)>> {
    let dict = obj.cast::<PyDict>().map_err(|_| {
        PyTypeError::new_err(format!(
            "{name}: expected a dict like {{\"hogs\": 2, \"duty\": 0.5}}, got {}",
            type_name(obj)
        ))
    })?;
    dict.iter()
        .map(|(k, v)| {
            let key: String = k.extract().map_err(|_| {
                PyTypeError::new_err(format!("{name}: keys are strings, got {}", type_name(&k)))
            })?;
            if v.is_instance_of::<PyBool>() {
                return Err(PyTypeError::new_err(format!(
                    "{name}: {key:?} expected a number, got bool"
                )));
            }
            let x: f64 = v.extract().map_err(|_| {
                PyTypeError::new_err(format!(
                    "{name}: {key:?} expected a number, got {}",
                    type_name(&v)
                ))
            })?;
            Ok((key, x))
        })
        .collect()
}

/// One count, as `procs=2` names one: an int (numpy's too), not a bool and not a sequence.
fn is_one_int(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    if obj.is_instance_of::<PyBool>() {
        return Ok(false);
    }
    Ok(obj.is_instance_of::<PyInt>()
        || (obj.hasattr("__index__")? && !obj.hasattr("__len__")? && !obj.hasattr("__iter__")?))
}

/// The items of an argument that lists things in order: a list, tuple, range, numpy array or
/// any other iterable but text, bytes and buffers (`bytearray(b"\x02")` is no list of counts)
/// and unordered collections (dict, set). At most `max` + 1 items are read, so that an endless
/// iterator ends in the caller's range error instead of filling memory; Ctrl-C is asked for
/// while reading.
pub fn items<'py>(
    obj: &Bound<'py, PyAny>,
    param: &str,
    expected: &str,
    max: usize,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let refused = obj.is_instance_of::<PyString>()
        || obj.is_instance_of::<PyBytes>()
        || obj.is_instance_of::<PyByteArray>()
        || obj.is_instance_of::<PyMemoryView>()
        || obj.is_instance_of::<PyDict>()
        || obj.is_instance_of::<PySet>()
        || obj.is_instance_of::<PyFrozenSet>()
        || obj.is_instance_of::<PyBool>();
    let iter = if refused { None } else { obj.try_iter().ok() };
    let Some(iter) = iter else {
        return Err(PyTypeError::new_err(format!(
            "{param}: expected {expected}, got {}",
            type_name(obj)
        )));
    };
    let mut out = Vec::new();
    for item in iter {
        if out.len() % 1024 == 1023 {
            obj.py().check_signals()?;
        }
        out.push(item?);
        if out.len() > max {
            break;
        }
    }
    Ok(out)
}

/// A sequence of ints, one past the most its kind holds read at most: the request refuses
/// it by name.
fn ints(obj: &Bound<'_, PyAny>, param: &Param) -> PyResult<Value> {
    let (name, kind) = (param.name, param.kind);
    items(obj, name, &expected(kind), kind.most_items())?
        .iter()
        .map(|item| int(item, name, kind))
        .collect::<PyResult<Vec<i64>>>()
        .map(Value::Ints)
}

pub fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_default()
}

/// An int: anything with `__index__` (numpy integers too) but `bool`, which Python counts as
/// an int and no caller means as one. One that does not fit 64 bits is out of range: the
/// parameter's limit says which.
pub fn int(obj: &Bound<'_, PyAny>, name: &'static str, kind: Kind) -> PyResult<i64> {
    let wrong = || PyTypeError::new_err(format!("{name}: expected an int, got {}", type_name(obj)));
    if obj.is_instance_of::<PyBool>() {
        return Err(wrong());
    }
    if let Ok(v) = obj.extract::<i64>() {
        return Ok(v);
    }
    let wide = obj.call_method0("__index__").map_err(|_| wrong())?;
    let text = wide.str()?.to_string();
    Err(kind.out_of_range(name, text).into())
}

/// A number (seconds, a fraction): an int or float, or anything with `__float__` (numpy
/// floats), but not `bool` or text, which no caller means as a number.
pub fn real(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<f64> {
    let wrong =
        || PyTypeError::new_err(format!("{name}: expected a number, got {}", type_name(obj)));
    if obj.is_instance_of::<PyBool>() || obj.is_instance_of::<PyString>() {
        return Err(wrong());
    }
    obj.extract::<f64>().map_err(|_| wrong())
}

/// True or False (numpy's bool too), never 1 or "yes".
fn switch(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<bool> {
    let numpy_bool = type_name(obj) == "bool_";
    if obj.is_instance_of::<PyBool>() || numpy_bool {
        return obj.is_truthy();
    }
    Err(PyTypeError::new_err(format!(
        "{name}: expected True or False, got {}",
        type_name(obj)
    )))
}

fn text(obj: &Bound<'_, PyAny>, param: &Param) -> PyResult<String> {
    if obj.is_instance_of::<PyString>() {
        return obj.extract();
    }
    Err(PyTypeError::new_err(format!(
        "{}: expected {}, got {}",
        param.name,
        expected(param.kind),
        type_name(obj)
    )))
}

/// Earlier runs of each point: a sequence of None or (ln figures, relative errors, ages in
/// seconds), three sequences of equal length.
pub fn history(obj: &Bound<'_, PyAny>) -> PyResult<Vec<Option<Vec<EarlierRun>>>> {
    let most = Kind::History.most_items();
    let points = items(obj, "history", "a sequence of runs per point", most)?;
    points
        .iter()
        .map(|p| {
            if p.is_none() {
                return Ok(None);
            }
            let (figures, ses, ages): (Vec<f64>, Vec<f64>, Vec<f64>) = p.extract()?;
            Ok(Some(EarlierRun::series(&figures, &ses, &ages)?))
        })
        .collect()
}

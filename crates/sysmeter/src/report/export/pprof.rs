//! pprof export: the run's weighted stacks as a gzipped `profile.proto` message, the format
//! of `go tool pprof`, Pyroscope and Grafana. `profile` gives on-CPU samples and nanoseconds
//! (and off-CPU nanoseconds with `--off-cpu`/`--both`), `alloc` Go's heap profile
//! (`alloc_objects`, `alloc_space`, `inuse_objects`, `inuse_space`), `locks` Go's mutex
//! profile (`contentions`, `delay`). A frame is a location at its source line, under one
//! function per name and file, so `-lines` and `-list` show lines; `profile` samples are
//! labelled with their thread (and reason). The message types below are hand-written from
//! profile.proto (github.com/google/pprof/proto/profile.proto) with `prost`'s derive, so no
//! protoc is needed; only the fields sysmeter fills are declared (a decoder skips the
//! others). Depends on `model` and the neutral `stacks` only.

use std::collections::HashMap;
use std::io::Write;

use prost::Message;

use super::ExportError;
use super::stacks::{Stacks, ValueType};
use super::stacks_of;
use crate::model::RunRecord;

/// profile.proto's `Profile`.
#[derive(Clone, PartialEq, prost::Message)]
struct Profile {
    #[prost(message, repeated, tag = "1")]
    sample_type: Vec<PbValueType>,
    #[prost(message, repeated, tag = "2")]
    sample: Vec<PbSample>,
    #[prost(message, repeated, tag = "4")]
    location: Vec<Location>,
    #[prost(message, repeated, tag = "5")]
    function: Vec<Function>,
    #[prost(string, repeated, tag = "6")]
    string_table: Vec<String>,
    #[prost(int64, tag = "9")]
    time_nanos: i64,
    #[prost(int64, tag = "10")]
    duration_nanos: i64,
    #[prost(message, optional, tag = "11")]
    period_type: Option<PbValueType>,
    #[prost(int64, tag = "12")]
    period: i64,
    #[prost(int64, repeated, tag = "13")]
    comment: Vec<i64>,
    #[prost(int64, tag = "14")]
    default_sample_type: i64,
}

/// `ValueType`: indices into the string table.
#[derive(Clone, PartialEq, prost::Message)]
struct PbValueType {
    #[prost(int64, tag = "1")]
    r#type: i64,
    #[prost(int64, tag = "2")]
    unit: i64,
}

/// `Sample`: location ids leaf first, one value per sample type.
#[derive(Clone, PartialEq, prost::Message)]
struct PbSample {
    #[prost(uint64, repeated, tag = "1")]
    location_id: Vec<u64>,
    #[prost(int64, repeated, tag = "2")]
    value: Vec<i64>,
    #[prost(message, repeated, tag = "3")]
    label: Vec<Label>,
}

/// `Label`: a string label (`key` = `str`).
#[derive(Clone, PartialEq, prost::Message)]
struct Label {
    #[prost(int64, tag = "1")]
    key: i64,
    #[prost(int64, tag = "2")]
    str: i64,
}

/// `Location`: one frame (sysmeter stores no addresses, so one location per frame). It
/// names no mapping: pprof's source view opens a mapping's file to disassemble the
/// location's address, and with none stored it fails (Go 1.26's pprof panics).
#[derive(Clone, PartialEq, prost::Message)]
struct Location {
    #[prost(uint64, tag = "1")]
    id: u64,
    #[prost(message, repeated, tag = "4")]
    line: Vec<Line>,
}

/// `Line`: the function and source line of a location.
#[derive(Clone, PartialEq, prost::Message)]
struct Line {
    #[prost(uint64, tag = "1")]
    function_id: u64,
    #[prost(int64, tag = "2")]
    line: i64,
}

/// `Function`: name and source file.
#[derive(Clone, PartialEq, prost::Message)]
struct Function {
    #[prost(uint64, tag = "1")]
    id: u64,
    #[prost(int64, tag = "2")]
    name: i64,
    #[prost(int64, tag = "3")]
    system_name: i64,
    #[prost(int64, tag = "4")]
    filename: i64,
}

/// The string table: index 0 is the empty string, as the format requires.
#[derive(Default)]
struct Strings {
    table: Vec<String>,
    index: HashMap<String, i64>,
}

impl Strings {
    fn id(&mut self, s: &str) -> i64 {
        if self.table.is_empty() {
            self.table.push(String::new());
            self.index.insert(String::new(), 0);
        }
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        self.table.push(s.to_string());
        let i = self.table.len() as i64 - 1;
        self.index.insert(s.to_string(), i);
        i
    }

    fn value_type(&mut self, t: ValueType) -> PbValueType {
        PbValueType {
            r#type: self.id(t.name),
            unit: self.id(t.unit),
        }
    }
}

/// The run as a gzipped pprof profile.
pub fn encode(run: &RunRecord) -> Result<Vec<u8>, ExportError> {
    let stacks = stacks_of::stacks(run).ok_or_else(|| ExportError::WrongKind {
        format: "pprof",
        kind: run.kind.as_str().to_string(),
        fits: "profile, alloc and locks",
    })??;
    let mut message = Vec::new();
    profile(&stacks, &run.id)
        .encode(&mut message)
        .map_err(|e| ExportError::Missing(format!("cannot encode the profile: {e}")))?;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let zipped = gz.write_all(&message).and_then(|()| gz.finish());
    zipped.map_err(|e| ExportError::Missing(format!("cannot compress the profile: {e}")))
}

/// The `Profile` message of `stacks`; ids are positions from 1 (0 means none in pprof).
fn profile(stacks: &Stacks, run_id: &str) -> Profile {
    let mut strings = Strings::default();
    strings.id("");
    let (location, function) = frames(stacks, &mut strings);
    let sample = stacks
        .samples
        .iter()
        .map(|s| PbSample {
            location_id: s.stack.iter().map(|&f| f as u64 + 1).collect(),
            value: s.values.clone(),
            label: (s.labels.iter())
                .map(|(k, v)| Label {
                    key: strings.id(k),
                    str: strings.id(v),
                })
                .collect(),
        })
        .collect();
    let sample_type = stacks
        .types
        .iter()
        .map(|&t| strings.value_type(t))
        .collect();
    let (period_type, period) = match stacks.period {
        Some((t, p)) => (Some(strings.value_type(t)), p),
        None => (None, 0),
    };
    let comment = vec![strings.id(&format!("sysmeter run {run_id}"))];
    let default_sample_type = stacks.default_type.map_or(0, |t| strings.id(t));
    Profile {
        sample_type,
        sample,
        location,
        function,
        string_table: strings.table,
        time_nanos: stacks.time.0,
        duration_nanos: stacks.time.1,
        period_type,
        period,
        comment,
        default_sample_type,
    }
}

/// One location per frame (a function at a source line), one function per name and file.
fn frames(stacks: &Stacks, strings: &mut Strings) -> (Vec<Location>, Vec<Function>) {
    let mut location = Vec::with_capacity(stacks.frames.len());
    let mut function: Vec<Function> = Vec::with_capacity(stacks.frames.len());
    let mut function_of: HashMap<(&str, &str), u64> = HashMap::new();
    for (i, frame) in stacks.frames.iter().enumerate() {
        let id = i as u64 + 1;
        // One function per name and file: the frames of its lines share it.
        let file = frame.file.as_deref().unwrap_or("");
        let next = function.len() as u64 + 1;
        let function_id = *function_of
            .entry((frame.function.as_str(), file))
            .or_insert(next);
        if function_id == next {
            let name = strings.id(&frame.function);
            function.push(Function {
                id: function_id,
                name,
                system_name: name,
                filename: strings.id(file),
            });
        }
        let line = frame.line.map_or(0, |l| l as i64);
        location.push(Location {
            id,
            line: vec![Line { function_id, line }],
        });
    }
    (location, function)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::export::stacks::Frame;

    /// Empty stacks of one sample type, CPU time in ns.
    fn cpu_stacks() -> Stacks {
        Stacks::new(vec![ValueType {
            name: "cpu",
            unit: "nanoseconds",
        }])
    }

    #[test]
    fn the_message_decodes_back_with_leaf_first_locations() {
        let mut stacks = cpu_stacks();
        let leaf = Frame {
            module: Some("fx".into()),
            ..Frame::from_label("hot (fx.c:9)")
        };
        stacks.add(&[leaf, Frame::from_label("main")], vec![7]);
        stacks.default_type = Some("cpu");
        let bytes = profile(&stacks, "r1").encode_to_vec();
        let back = Profile::decode(bytes.as_slice()).expect("decodes");
        assert_eq!(back.string_table[0], "");
        assert_eq!(back.sample[0].location_id, vec![1, 2]);
        assert_eq!(back.sample[0].value, vec![7]);
        let f = &back.function[0];
        let name = |i: i64| back.string_table[i as usize].as_str();
        assert_eq!((name(f.name), name(f.filename)), ("hot", "fx.c"));
        assert_eq!(back.location[0].line[0].line, 9);
        assert_eq!(name(back.default_sample_type), "cpu");
    }

    #[test]
    fn the_lines_of_one_function_share_its_function_entry() {
        let mut stacks = cpu_stacks();
        stacks.add(&[Frame::from_label("hot (fx.c:9)")], vec![1]);
        stacks.add(&[Frame::from_label("hot (fx.c:10)")], vec![1]);
        let back = profile(&stacks, "r1");
        assert_eq!((back.location.len(), back.function.len()), (2, 1));
        let lines: Vec<i64> = back.location.iter().map(|l| l.line[0].line).collect();
        assert_eq!(lines, [9, 10]);
        assert!(back.location.iter().all(|l| l.line[0].function_id == 1));
    }
}

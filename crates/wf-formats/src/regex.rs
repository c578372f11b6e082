//! `regex:'(?P<name>...)'`: a record is a row when the regular expression
//! matches it (anywhere; anchor with `^...$`); each named capture is a text
//! column, NULL where the group did not take part. The escape hatch for any
//! other format, and the slowest one. A record that does not match is malformed.

use super::{Columns, Field, Format, FormatError, Kind, Parser};

#[derive(Debug, Clone)]
pub struct RegexFormat {
    re: regex::bytes::Regex,
    /// Capture group index of each column.
    groups: Vec<usize>,
    fields: Vec<Field>,
}

impl RegexFormat {
    pub fn new(pattern: &str) -> Result<Self, FormatError> {
        let re =
            regex::bytes::Regex::new(pattern).map_err(|e| FormatError::Regex(e.to_string()))?;
        let mut groups = Vec::new();
        let mut fields = Vec::new();
        for (i, name) in re.capture_names().enumerate() {
            if let Some(n) = name {
                groups.push(i);
                fields.push(Field::new(n, Kind::Str));
            }
        }
        if fields.is_empty() {
            return Err(FormatError::RegexNoGroup);
        }
        Ok(RegexFormat { re, groups, fields })
    }
}

impl Format for RegexFormat {
    fn name(&self) -> String {
        format!("regex:'{}'", self.re.as_str())
    }

    fn fields(&self) -> &[Field] {
        &self.fields
    }

    fn ascii_boundaries(&self) -> bool {
        false
    }

    fn parser(&self, projection: &[usize]) -> Box<dyn Parser> {
        Box::new(RegexParser {
            re: self.re.clone(),
            groups: projection.iter().map(|&c| self.groups[c]).collect(),
            locs: self.re.capture_locations(),
        })
    }
}

struct RegexParser {
    re: regex::bytes::Regex,
    groups: Vec<usize>,
    locs: regex::bytes::CaptureLocations,
}

impl Parser for RegexParser {
    fn parse(&mut self, record: &[u8], out: &mut Columns) -> bool {
        if self.re.captures_read(&mut self.locs, record).is_none() {
            return false;
        }
        for (o, &g) in self.groups.iter().enumerate() {
            match self.locs.get(g) {
                Some((s, e)) => out.str(o, &record[s..e]),
                None => out.null(o),
            }
        }
        out.end_row();
        true
    }
}

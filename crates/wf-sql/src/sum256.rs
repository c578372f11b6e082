//! `sum` of decimals of over 28 digits, added in 256 bits. DataFusion sums a
//! Decimal128(p, s) into Decimal128(min(38, p + 10), s) in an i128 that
//! wraps: two values of 38 digits summed to -14028236692093846346337460743176821145,
//! and 99999999999999999999999999999999999999 + 1 printed 10^37, exit 0.
//! Here the rows are added in an i256 (no sum of rows can wrap it), whatever
//! their order or the thread count, and a total beyond 38 digits stops the
//! query, as DuckDB's HUGEINT sum does ("Overflow in HUGEINT addition"). The
//! result keeps DataFusion's type, Decimal128(38, s): summing the results
//! as Decimal256 gave every such sum a type of 48 digits that a UNION with a
//! Decimal128 column refused and DuckDB reads back from Parquet as DOUBLE.
//! Narrower decimals cannot reach 38 digits in fewer than 10^10 rows of
//! their largest value and stay DataFusion's; so does `sum(DISTINCT)`.

use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Decimal128Array, Decimal256Array, UInt64Array,
};
use datafusion::arrow::datatypes::{i256, DataType, Decimal128Type, Decimal256Type, Field};
use datafusion::arrow::datatypes::{FieldRef, UInt64Type};
use datafusion::common::{exec_err, Result, ScalarValue};
use datafusion::logical_expr::{Accumulator, EmitTo, GroupsAccumulator};

/// Decimals of more digits than this are summed here.
const WIDE_FROM: u8 = 28;

/// The largest magnitude of 38 digits.
const MAX_38: i128 = 99_999_999_999_999_999_999_999_999_999_999_999_999;

/// The scale of an input summed here: a Decimal128 of over [`WIDE_FROM`] digits.
pub fn wide_scale(input: &DataType) -> Option<i8> {
    match input {
        DataType::Decimal128(p, s) if *p > WIDE_FROM => Some(*s),
        _ => None,
    }
}

/// The partial state: the sum so far (Decimal256) and the count of values.
pub fn state_fields(name: &str, scale: i8) -> Vec<FieldRef> {
    vec![
        Arc::new(Field::new(
            format!("{name}[sum256]"),
            DataType::Decimal256(76, scale),
            true,
        )),
        Arc::new(Field::new(format!("{name}[count]"), DataType::UInt64, true)),
    ]
}

/// A total as Decimal128(38, scale), or the error of one beyond 38 digits.
fn narrow(sum: i256, scale: i8) -> Result<i128> {
    match sum.to_i128().filter(|v| v.unsigned_abs() <= MAX_38 as u128) {
        Some(v) => Ok(v),
        None => exec_err!("Overflow in sum: {sum} (scale {scale}) is beyond 38 digits"),
    }
}

/// One sum (a whole table's, or a window's: values can be retracted).
#[derive(Debug)]
pub struct Sum256 {
    sum: i256,
    count: u64,
    scale: i8,
}

impl Sum256 {
    pub fn new(scale: i8) -> Self {
        Sum256 {
            sum: i256::ZERO,
            count: 0,
            scale,
        }
    }

    fn add(&mut self, values: &Decimal128Array, retract: bool) {
        for v in values.iter().flatten().map(i256::from_i128) {
            if retract {
                self.sum = self.sum.wrapping_sub(v);
                self.count -= 1;
            } else {
                self.sum = self.sum.wrapping_add(v);
                self.count += 1;
            }
        }
    }
}

impl Accumulator for Sum256 {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.add(values[0].as_primitive::<Decimal128Type>(), false);
        Ok(())
    }

    fn retract_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.add(values[0].as_primitive::<Decimal128Type>(), true);
        Ok(())
    }

    fn supports_retract_batch(&self) -> bool {
        true
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let sums = states[0].as_primitive::<Decimal256Type>();
        let counts = states[1].as_primitive::<UInt64Type>();
        for (s, c) in sums.iter().zip(counts.iter()) {
            self.sum = self.sum.wrapping_add(s.unwrap_or(i256::ZERO));
            self.count += c.unwrap_or(0);
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![
            ScalarValue::Decimal256(Some(self.sum), 76, self.scale),
            ScalarValue::UInt64(Some(self.count)),
        ])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        let v = match self.count {
            0 => None,
            _ => Some(narrow(self.sum, self.scale)?),
        };
        Ok(ScalarValue::Decimal128(v, 38, self.scale))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self)
    }
}

/// The sums of a GROUP BY's groups.
#[derive(Debug)]
pub struct GroupSum256 {
    sums: Vec<i256>,
    counts: Vec<u64>,
    scale: i8,
}

impl GroupSum256 {
    pub fn new(scale: i8) -> Self {
        GroupSum256 {
            sums: Vec::new(),
            counts: Vec::new(),
            scale,
        }
    }

    fn grow(&mut self, groups: usize) {
        self.sums.resize(groups, i256::ZERO);
        self.counts.resize(groups, 0);
    }
}

/// Whether row `i` passes the filter (none: every row).
fn kept(filter: Option<&BooleanArray>, i: usize) -> bool {
    filter.is_none_or(|f| f.is_valid(i) && f.value(i))
}

impl GroupsAccumulator for GroupSum256 {
    fn update_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        opt_filter: Option<&BooleanArray>,
        total_num_groups: usize,
    ) -> Result<()> {
        self.grow(total_num_groups);
        let values = values[0].as_primitive::<Decimal128Type>();
        for (i, &g) in group_indices.iter().enumerate() {
            if values.is_valid(i) && kept(opt_filter, i) {
                let v = i256::from_i128(values.value(i));
                self.sums[g] = self.sums[g].wrapping_add(v);
                self.counts[g] += 1;
            }
        }
        Ok(())
    }

    fn merge_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        total_num_groups: usize,
    ) -> Result<()> {
        self.grow(total_num_groups);
        let sums = values[0].as_primitive::<Decimal256Type>();
        let counts = values[1].as_primitive::<UInt64Type>();
        for (i, &g) in group_indices.iter().enumerate() {
            if sums.is_valid(i) {
                self.sums[g] = self.sums[g].wrapping_add(sums.value(i));
                self.counts[g] += counts.value(i);
            }
        }
        Ok(())
    }

    fn evaluate(&mut self, emit_to: EmitTo) -> Result<ArrayRef> {
        let sums = emit_to.take_needed(&mut self.sums);
        let counts = emit_to.take_needed(&mut self.counts);
        let mut out = Vec::with_capacity(sums.len());
        for (s, c) in sums.into_iter().zip(counts) {
            out.push(match c {
                0 => None,
                _ => Some(narrow(s, self.scale)?),
            });
        }
        let a = Decimal128Array::from(out).with_precision_and_scale(38, self.scale)?;
        Ok(Arc::new(a))
    }

    fn state(&mut self, emit_to: EmitTo) -> Result<Vec<ArrayRef>> {
        let sums = emit_to.take_needed(&mut self.sums);
        let counts = emit_to.take_needed(&mut self.counts);
        let sums = Decimal256Array::from(sums).with_precision_and_scale(76, self.scale)?;
        Ok(vec![Arc::new(sums), Arc::new(UInt64Array::from(counts))])
    }

    /// Each row as a state of its own (a GROUP BY of many groups passes
    /// rows on unsummed).
    fn convert_to_state(
        &self,
        values: &[ArrayRef],
        opt_filter: Option<&BooleanArray>,
    ) -> Result<Vec<ArrayRef>> {
        let values = values[0].as_primitive::<Decimal128Type>();
        let one = |i: usize| values.is_valid(i) && kept(opt_filter, i);
        let sums: Decimal256Array = (0..values.len())
            .map(|i| one(i).then(|| i256::from_i128(values.value(i))))
            .collect();
        let counts: UInt64Array = (0..values.len()).map(|i| Some(one(i) as u64)).collect();
        let sums = sums.with_precision_and_scale(76, self.scale)?;
        Ok(vec![Arc::new(sums), Arc::new(counts)])
    }

    fn size(&self) -> usize {
        self.sums.capacity() * 32 + self.counts.capacity() * 8
    }
}

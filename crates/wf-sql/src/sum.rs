//! `sum` of integers as Decimal128(38, 0), as DuckDB's `sum(BIGINT)` gives a
//! HUGEINT: DataFusion's own `sum` of Int64 wraps silently (two rows of
//! 9223372036854775807 summed to -2, exit 0; issue 36). Integer arguments are
//! coerced to Decimal128(38, 0) and summed by DataFusion's decimal `sum`;
//! decimals of over 28 digits are added in 256 bits (`sum256`); every other
//! type (float, decimal, interval) is DataFusion's `sum` as it was.
//! An i128 holds the sum of 2^64 values of the i64 range, so the widened sum
//! cannot overflow. A scale-0 decimal prints the digits an integer would (text,
//! CSV and JSON alike); in Parquet and Python it is a decimal column.

use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::Result;
use datafusion::functions_aggregate::sum::Sum;
use datafusion::logical_expr::expr::AggregateFunction;
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::type_coercion::functions::fields_with_udf;
use datafusion::logical_expr::utils::AggregateOrderSensitivity;
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Documentation, Expr, GroupsAccumulator, Operator,
    ReversedUDAF, SetMonotonicity, Signature, StatisticsArgs, TypeSignature, Volatility,
};
use datafusion::scalar::ScalarValue;

use crate::sum256::{self, GroupSum256, Sum256};

/// The type integer sums are computed in.
pub const WIDE: DataType = DataType::Decimal128(38, 0);

/// DataFusion's `sum` with integer arguments widened first.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct WideSum {
    inner: Sum,
    signature: Signature,
}

impl WideSum {
    pub fn new() -> Self {
        WideSum {
            inner: Sum::new(),
            signature: Signature::new(TypeSignature::UserDefined, Volatility::Immutable),
        }
    }

    pub fn udaf() -> AggregateUDF {
        AggregateUDF::new_from_impl(Self::new())
    }
}

/// The scale of a sum added in 256 bits (`sum256`), if it is one: of its
/// input `fields`, not DISTINCT.
fn wide_of(fields: &[FieldRef], distinct: bool) -> Option<i8> {
    sum256::wide_scale(fields.first()?.data_type()).filter(|_| !distinct)
}

fn wide(args: &AccumulatorArgs) -> Option<i8> {
    wide_of(args.expr_fields, args.is_distinct)
}

impl Default for WideSum {
    fn default() -> Self {
        Self::new()
    }
}

impl AggregateUDFImpl for WideSum {
    fn name(&self) -> &str {
        "sum"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    /// DataFusion's coercion of `sum`, then integers to [`WIDE`].
    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        let fields: Vec<FieldRef> = arg_types
            .iter()
            .map(|t| std::sync::Arc::new(Field::new("a", t.clone(), true)))
            .collect();
        let sum = AggregateUDF::new_from_impl(Sum::new());
        let coerced = fields_with_udf(&fields, &sum)?;
        Ok(coerced
            .iter()
            .map(|f| match f.data_type() {
                t if t.is_integer() => WIDE,
                t => t.clone(),
            })
            .collect())
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        self.inner.return_type(arg_types)
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        match wide(&args) {
            Some(scale) => Ok(Box::new(Sum256::new(scale))),
            None => self.inner.accumulator(args),
        }
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        match wide_of(args.input_fields, args.is_distinct) {
            Some(scale) => Ok(sum256::state_fields(args.name, scale)),
            None => self.inner.state_fields(args),
        }
    }

    fn groups_accumulator_supported(&self, args: AccumulatorArgs) -> bool {
        self.inner.groups_accumulator_supported(args)
    }

    fn create_groups_accumulator(
        &self,
        args: AccumulatorArgs,
    ) -> Result<Box<dyn GroupsAccumulator>> {
        match wide(&args) {
            Some(scale) => Ok(Box::new(GroupSum256::new(scale))),
            None => self.inner.create_groups_accumulator(args),
        }
    }

    fn create_sliding_accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        match wide(&args) {
            Some(scale) => Ok(Box::new(Sum256::new(scale))),
            None => self.inner.create_sliding_accumulator(args),
        }
    }

    fn reverse_expr(&self) -> ReversedUDAF {
        self.inner.reverse_expr()
    }

    fn order_sensitivity(&self) -> AggregateOrderSensitivity {
        self.inner.order_sensitivity()
    }

    fn documentation(&self) -> Option<&Documentation> {
        self.inner.documentation()
    }

    fn set_monotonicity(&self, data_type: &DataType) -> SetMonotonicity {
        self.inner.set_monotonicity(data_type)
    }

    /// Not DataFusion's `sum(x + c)` to `sum(x) + c * count(x)`: its
    /// `c * count(x)` is in the literal's type and could overflow.
    fn simplify_expr_op_literal(
        &self,
        _agg: &AggregateFunction,
        _arg: &Expr,
        _op: Operator,
        _lit: &Expr,
        _arg_is_left: bool,
    ) -> Result<Option<Expr>> {
        Ok(None)
    }

    fn value_from_stats(&self, args: &StatisticsArgs) -> Option<ScalarValue> {
        self.inner.value_from_stats(args)
    }
}

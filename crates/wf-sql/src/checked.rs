//! Integer `+`, `-` and `*` that fail on overflow, as DuckDB's do ("Overflow
//! in multiplication of INT64"): DataFusion's wrap silently (`x * 2` of
//! 9000000000000000000 was -446744073709551616, exit 0; issue 36's
//! overflow). An analyzer rule, after DataFusion's type coercion, turns each
//! such operation on two integers of one type (and the negation of one, as
//! `0 - x`) into a call of [`Checked`],
//! arrow's checked kernel; its column keeps the name it had. Other types
//! (floats, decimals, times and intervals, so the time push-down's `now() -
//! INTERVAL '1 hour'`) are left to DataFusion. Integer `sum` is widened
//! apart ([`crate::sum`]).

use std::sync::Arc;

use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::compute::kernels::numeric;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{DFSchema, Result, ScalarValue};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::utils::merge_schema;
use datafusion::logical_expr::{
    BinaryExpr, ColumnarValue, Expr, ExprSchemable, LogicalPlan, Operator, ScalarFunctionArgs,
    ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use datafusion::optimizer::AnalyzerRule;

/// One checked operation on two integers of one type.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Checked {
    op: Operator,
    signature: Signature,
}

impl Checked {
    fn udf(op: Operator) -> ScalarUDF {
        ScalarUDF::new_from_impl(Checked {
            op,
            signature: Signature::any(2, Volatility::Immutable),
        })
    }
}

impl ScalarUDFImpl for Checked {
    fn name(&self) -> &str {
        match self.op {
            Operator::Plus => "checked_add",
            Operator::Minus => "checked_sub",
            _ => "checked_mul",
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        Ok(args[0].clone())
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let [l, r] = &args.args[..] else {
            unreachable!("two arguments (the signature)")
        };
        let kernel = match self.op {
            Operator::Plus => numeric::add,
            Operator::Minus => numeric::sub,
            _ => numeric::mul,
        };
        let out: ArrayRef = match (l, r) {
            (ColumnarValue::Array(a), ColumnarValue::Array(b)) => kernel(a, b)?,
            (ColumnarValue::Array(a), ColumnarValue::Scalar(b)) => kernel(a, &b.to_scalar()?)?,
            (ColumnarValue::Scalar(a), ColumnarValue::Array(b)) => kernel(&a.to_scalar()?, b)?,
            (ColumnarValue::Scalar(a), ColumnarValue::Scalar(b)) => {
                let one = kernel(&a.to_scalar()?, &b.to_scalar()?)?;
                return Ok(ColumnarValue::Scalar(ScalarValue::try_from_array(&one, 0)?));
            }
        };
        Ok(ColumnarValue::Array(out))
    }
}

/// The analyzer rule: integer `+`, `-`, `*` to [`Checked`] calls.
#[derive(Debug)]
pub struct CheckedArithmetic {
    add: Arc<ScalarUDF>,
    sub: Arc<ScalarUDF>,
    mul: Arc<ScalarUDF>,
}

impl Default for CheckedArithmetic {
    fn default() -> Self {
        CheckedArithmetic {
            add: Arc::new(Checked::udf(Operator::Plus)),
            sub: Arc::new(Checked::udf(Operator::Minus)),
            mul: Arc::new(Checked::udf(Operator::Multiply)),
        }
    }
}

impl AnalyzerRule for CheckedArithmetic {
    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|p| self.node(p))
            .map(|t| t.data)
    }

    fn name(&self) -> &str {
        "wf_checked_arithmetic"
    }
}

impl CheckedArithmetic {
    /// One plan node's expressions, their names kept.
    fn node(&self, plan: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
        let mut schema = merge_schema(&plan.inputs());
        if let LogicalPlan::TableScan(ts) = &plan {
            let scanned =
                DFSchema::try_from_qualified_schema(ts.table_name.clone(), &ts.source.schema())?;
            schema.merge(&scanned);
        }
        let names = NamePreserver::new(&plan);
        plan.map_expressions(|e| {
            let name = names.save(&e);
            e.transform_up(|e| self.expr(e, &schema))
                .map(|t| t.update_data(|e| name.restore(e)))
        })
    }

    /// `e` as a checked call if it is integer arithmetic.
    fn expr(&self, e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
        if let Expr::Negative(x) = &e {
            return self
                .negative(x, schema)
                .map(|n| n.map_or(Transformed::no(e), Transformed::yes));
        }
        let Expr::BinaryExpr(BinaryExpr { left, op, right }) = &e else {
            return Ok(Transformed::no(e));
        };
        let udf = match op {
            Operator::Plus => &self.add,
            Operator::Minus => &self.sub,
            Operator::Multiply => &self.mul,
            _ => return Ok(Transformed::no(e)),
        };
        let (Ok(l), Ok(r)) = (left.get_type(schema), right.get_type(schema)) else {
            return Ok(Transformed::no(e));
        };
        if l != r || !l.is_integer() {
            return Ok(Transformed::no(e));
        }
        let args = vec![(**left).clone(), (**right).clone()];
        let call = ScalarFunction::new_udf(udf.clone(), args);
        Ok(Transformed::yes(Expr::ScalarFunction(call)))
    }

    /// `-x` of a signed integer as `0 - x`, checked: DataFusion's negation
    /// wraps (`-a` of -9223372036854775808 was itself, exit 0; DuckDB:
    /// "Overflow in negation").
    fn negative(&self, x: &Expr, schema: &DFSchema) -> Result<Option<Expr>> {
        let Ok(t) = x.get_type(schema) else {
            return Ok(None);
        };
        if !t.is_signed_integer() {
            return Ok(None);
        }
        let zero = Expr::Literal(ScalarValue::new_zero(&t)?, None);
        let call = ScalarFunction::new_udf(self.sub.clone(), vec![zero, x.clone()]);
        Ok(Some(Expr::ScalarFunction(call)))
    }
}

//! `-0.0` and `0.0` as one value in a DISTINCT aggregate, as SQL compares
//! them (DuckDB counts them as one): DataFusion 55's distinct accumulators
//! (`count(DISTINCT f)` beside another aggregate, `sum(DISTINCT f)`, ...)
//! hash a float's bits, so `count(DISTINCT f), count(*)` over `0.0, -0.0`
//! was 2, exit 0, where `count(DISTINCT f)` alone (planned as a GROUP BY)
//! was 1. An analyzer rule gives each float argument of a DISTINCT
//! aggregate or window function `+ 0.0`, which makes `-0.0` `0.0` and
//! leaves every other value as it is; the column keeps its name. One with
//! an ORDER BY of its own (`array_agg(DISTINCT f ORDER BY f)`) is left as it
//! is: DataFusion wants that ORDER BY among its arguments. The data keep
//! their sign of zero (`SELECT f`, `1/f`, `atan2(f, -1)` are DuckDB's);
//! NaNs are made one NaN when read (`wf_formats::columns::canonical`).
//! Floats inside a struct or list (`count(DISTINCT (f, g))`) are not
//! reached.

use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{DFSchema, Result, ScalarValue};
use datafusion::logical_expr::expr::{AggregateFunction, WindowFunction};
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::utils::merge_schema;
use datafusion::logical_expr::{BinaryExpr, Expr, ExprSchemable, LogicalPlan, Operator};
use datafusion::optimizer::AnalyzerRule;

/// The analyzer rule (see the module comment).
#[derive(Debug, Default)]
pub struct DistinctZero;

impl AnalyzerRule for DistinctZero {
    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(node).map(|t| t.data)
    }

    fn name(&self) -> &str {
        "wf_distinct_zero"
    }
}

/// One plan node's DISTINCT aggregates and window functions, their names
/// kept.
fn node(plan: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
    if !matches!(plan, LogicalPlan::Aggregate(_) | LogicalPlan::Window(_)) {
        return Ok(Transformed::no(plan));
    }
    let schema = merge_schema(&plan.inputs());
    let names = NamePreserver::new(&plan);
    plan.map_expressions(|e| {
        let name = names.save(&e);
        e.transform_up(|e| distinct(e, &schema))
            .map(|t| t.update_data(|e| name.restore(e)))
    })
}

/// `e` with `+ 0.0` on its float arguments if it is a DISTINCT aggregate
/// (without an ORDER BY of its own) or window function.
fn distinct(e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    match e {
        Expr::AggregateFunction(AggregateFunction { func, mut params })
            if params.distinct && params.order_by.is_empty() =>
        {
            let changed = zero_floats(&mut params.args, schema)?;
            let e = Expr::AggregateFunction(AggregateFunction { func, params });
            Ok(if changed {
                Transformed::yes(e)
            } else {
                Transformed::no(e)
            })
        }
        Expr::WindowFunction(w) if w.params.distinct => {
            let WindowFunction { fun, mut params } = *w;
            let changed = zero_floats(&mut params.args, schema)?;
            let e = Expr::WindowFunction(Box::new(WindowFunction { fun, params }));
            Ok(if changed {
                Transformed::yes(e)
            } else {
                Transformed::no(e)
            })
        }
        e => Ok(Transformed::no(e)),
    }
}

/// Each float argument `a` made `a + 0.0`; whether any was.
fn zero_floats(args: &mut [Expr], schema: &DFSchema) -> Result<bool> {
    let mut changed = false;
    for arg in args.iter_mut() {
        let Ok(t) = arg.get_type(schema) else {
            continue;
        };
        if !t.is_floating() {
            continue;
        }
        let zero = Expr::Literal(ScalarValue::new_zero(&t)?, None);
        let plus = BinaryExpr::new(Box::new(arg.clone()), Operator::Plus, Box::new(zero));
        *arg = Expr::BinaryExpr(plus);
        changed = true;
    }
    Ok(changed)
}

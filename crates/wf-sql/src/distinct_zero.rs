//! `-0.0` and `0.0` as one value in a DISTINCT aggregate, as SQL compares
//! them (DuckDB counts them as one): DataFusion 55's distinct accumulators
//! (`count(DISTINCT f)` beside another aggregate, `sum(DISTINCT f)`, ...)
//! hash a float's bits, so `count(DISTINCT f), count(*)` over `0.0, -0.0`
//! was 2, exit 0, where `count(DISTINCT f)` alone (planned as a GROUP BY)
//! was 1. An analyzer rule gives each float argument of a DISTINCT
//! aggregate `+ 0.0`, which makes `-0.0` `0.0` and leaves every other value
//! as it is; the column keeps its name. The data keep their sign of zero
//! (`SELECT f`, `1/f`, `atan2(f, -1)` are DuckDB's); NaNs are made one NaN
//! when read (`wf_formats::columns::canonical`).

use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{DFSchema, Result, ScalarValue};
use datafusion::logical_expr::expr::AggregateFunction;
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

/// One plan node's DISTINCT aggregates, their names kept.
fn node(plan: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
    if !matches!(plan, LogicalPlan::Aggregate(_)) {
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

/// `e` with `+ 0.0` on its float arguments if it is a DISTINCT aggregate.
fn distinct(e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let Expr::AggregateFunction(AggregateFunction { func, params }) = e else {
        return Ok(Transformed::no(e));
    };
    if !params.distinct {
        let e = Expr::AggregateFunction(AggregateFunction { func, params });
        return Ok(Transformed::no(e));
    }
    let mut params = params;
    let mut changed = false;
    for arg in params.args.iter_mut() {
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
    let e = Expr::AggregateFunction(AggregateFunction { func, params });
    Ok(if changed {
        Transformed::yes(e)
    } else {
        Transformed::no(e)
    })
}

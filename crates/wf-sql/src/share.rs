//! One scan for several readers of a table.
//!
//! DataFusion plans a table once per reference, and inlines a CTE at each use,
//! so a query of several lists over one log (`UNION ALL` of GROUP BYs, the way
//! `examples/sql/wf2.sql` is written) read and parsed the log once per list.
//! [`ShareScans`], a physical optimizer rule that runs after DataFusion's own,
//! finds the table's scans in the plan; when it is safe, they become readers of
//! one [`Shared`] scan (`crate::shared`) that parses the union of their columns once and gives
//! each reader its own columns of every batch. On the 1 GiB log, the report's
//! two scans (of four and five columns) as one of six: 22.0 G instructions to
//! 15.6 G, CPU time 7.3 s to 5.4 s (perf stat, release build, medians of 2,
//! `WF_SHARED_READERS=1` against the default); 5.26x to 3.27x `wf wf2`.
//!
//! Safe means that no reader can wait for another: every batch goes to every
//! reader through a bounded channel, so one reader left unread holds the scan
//! back from the rest. Scans share only when every two of them meet at a
//! `UNION ALL`, and on the path from there to each scan an operator drains its
//! input before it yields a row (a sort, an aggregation past its partial step,
//! a window over whole partitions, a join's build side), with only operators
//! that keep reading their input below it: filters, projections, partial
//! aggregations, repartitions, limits, and joins whose other side reads no scan
//! of ours (a join collects its build side before it reads the probe side, so
//! a scan on each side of one self-join would deadlock; those scans read on
//! their own, as before). Whatever stands above a draining operator need only
//! poll it once; a streaming merge above two undrained readers (`... UNION ALL
//! ... ORDER BY` a column constant in each branch) deadlocked in review.
//!
//! A reader that joins late (its stream is asked for only after the scan
//! started, say behind a join's build side) is not waited for: the scan starts
//! once every reader has joined or `shared::WAIT` has passed, and a reader that comes
//! later runs a scan of its own. So a late reader costs a second scan, never a
//! lost batch.
//!
//! The rule also marks the scan of a table that the plan reads exactly once
//! (and not inside a recursive query, whose recursive term runs again and
//! again) as its table's sole scan: only such a scan reads the table's streams
//! as they come, where every other one reads a copy (see `crate::stream`).

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::error::Result;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::aggregates::{AggregateExec, AggregateMode};
use datafusion::physical_plan::{ExecutionPlan, InputOrderMode};

use crate::inner::TableInner;
use crate::shared::Shared;
use crate::table::ScanExec;

/// The physical optimizer rule that makes a table's scans share one scan
/// where that is safe (see the module comment).
#[derive(Debug, Default)]
pub struct ShareScans;

/// A scan in the plan: the operators from the root down to it, each with the
/// index of the child the path takes.
struct Leaf {
    scan: Arc<dyn ExecutionPlan>,
    path: Vec<(Arc<dyn ExecutionPlan>, usize)>,
}

impl PhysicalOptimizerRule for ShareScans {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let mut leaves = Vec::new();
        find_scans(&plan, &mut Vec::new(), &mut leaves);
        let mut tables: HashMap<*const TableInner, Vec<&Leaf>> = HashMap::new();
        for l in &leaves {
            let scan = l.scan.downcast_ref::<ScanExec>().unwrap();
            tables.entry(Arc::as_ptr(&scan.table)).or_default().push(l);
        }
        let mut share: HashMap<*const (), (Arc<Shared>, usize)> = HashMap::new();
        let mut sole: Vec<*const ()> = Vec::new();
        for group in tables.values() {
            if group.len() == 1 {
                if !group[0]
                    .path
                    .iter()
                    .any(|(n, _)| n.name() == "RecursiveQueryExec")
                {
                    sole.push(Arc::as_ptr(&group[0].scan) as *const ());
                }
                continue;
            }
            // A scan with a time window reads spans of its own.
            let windowed = |l: &&Leaf| {
                let s = l.scan.downcast_ref::<ScanExec>();
                s.is_some_and(|s| s.time.is_some())
            };
            if !can_share(group) || group.iter().any(windowed) {
                continue;
            }
            let scans: Vec<&ScanExec> = group
                .iter()
                .map(|l| l.scan.downcast_ref::<ScanExec>().unwrap())
                .collect();
            let members = scans
                .iter()
                .map(|s| (s.projection.clone(), s.schema.clone()))
                .collect();
            let shared = Shared::new(scans[0].table.clone(), scans[0].batch_rows(), members);
            for (i, l) in group.iter().enumerate() {
                share.insert(Arc::as_ptr(&l.scan) as *const (), (shared.clone(), i));
            }
        }
        if share.is_empty() && sole.is_empty() {
            return Ok(plan);
        }
        plan.transform_up(|node| {
            let key = Arc::as_ptr(&node) as *const ();
            let Some(scan) = node.downcast_ref::<ScanExec>() else {
                return Ok(Transformed::no(node));
            };
            if let Some((sh, i)) = share.get(&key) {
                return Ok(Transformed::yes(Arc::new(scan.shared(sh.clone(), *i)) as _));
            }
            if sole.contains(&key) {
                return Ok(Transformed::yes(Arc::new(scan.sole()) as _));
            }
            Ok(Transformed::no(node))
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        "wf_share_scans"
    }

    fn schema_check(&self) -> bool {
        true
    }
}

fn find_scans(
    node: &Arc<dyn ExecutionPlan>,
    path: &mut Vec<(Arc<dyn ExecutionPlan>, usize)>,
    out: &mut Vec<Leaf>,
) {
    if node.downcast_ref::<ScanExec>().is_some() {
        out.push(Leaf {
            scan: node.clone(),
            path: path.clone(),
        });
        return;
    }
    for (i, child) in node.children().into_iter().enumerate() {
        path.push((node.clone(), i));
        find_scans(child, path, out);
        path.pop();
    }
}

/// Every two scans of the group meet at a union, below which nothing holds
/// a reader back (the same plan node twice is never shared).
fn can_share(group: &[&Leaf]) -> bool {
    for (k, a) in group.iter().enumerate() {
        for b in &group[k + 1..] {
            if Arc::ptr_eq(&a.scan, &b.scan) || !meet_at_union(&a.path, &b.path) {
                return false;
            }
        }
    }
    true
}

fn meet_at_union(
    a: &[(Arc<dyn ExecutionPlan>, usize)],
    b: &[(Arc<dyn ExecutionPlan>, usize)],
) -> bool {
    let Some(d) = a.iter().zip(b).position(|(x, y)| x.1 != y.1) else {
        return false;
    };
    let lca = a[d].0.name();
    (lca == "UnionExec" || lca == "InterleaveExec") && drained(&a[d + 1..]) && drained(&b[d + 1..])
}

/// Below the union, the scan is read to its end by an operator that drains its
/// input before it yields anything, through operators that keep reading. What
/// stands above that operator cannot hold the scan back: it only has to poll
/// it once.
fn drained(path: &[(Arc<dyn ExecutionPlan>, usize)]) -> bool {
    path.iter().all(keeps_reading) && path.iter().any(drains)
}

/// The operator reads the input the path takes to its end before it yields a
/// row: a full sort, an aggregation past its partial step, a window over whole
/// partitions, a join's build side.
fn drains((node, child): &(Arc<dyn ExecutionPlan>, usize)) -> bool {
    if let Some(a) = node.downcast_ref::<AggregateExec>() {
        // A partial aggregation may pass its rows on as they come.
        return *a.mode() != AggregateMode::Partial
            && *a.input_order_mode() == InputOrderMode::Linear;
    }
    match node.name() {
        "SortExec" | "SortExec(TopK)" | "WindowAggExec" => true,
        "HashJoinExec" | "CrossJoinExec" | "NestedLoopJoinExec" => *child == 0,
        _ => false,
    }
}

/// The operator keeps reading the input the path takes until that input ends
/// or it needs no more (then it drops it, which the scan sees).
fn keeps_reading((node, child): &(Arc<dyn ExecutionPlan>, usize)) -> bool {
    if let Some(a) = node.downcast_ref::<AggregateExec>() {
        // One with a LIMIT may stop reading early.
        return a.limit_options().is_none();
    }
    match node.name() {
        "ProjectionExec"
        | "FilterExec"
        | "RepartitionExec"
        | "CoalesceBatchesExec"
        | "CoalescePartitionsExec"
        | "CooperativeExec"
        | "UnionExec"
        | "InterleaveExec"
        | "SortExec"
        | "SortExec(TopK)"
        | "PartialSortExec"
        | "SortPreservingMergeExec"
        | "BoundedWindowAggExec"
        | "WindowAggExec"
        | "GlobalLimitExec"
        | "LocalLimitExec" => true,
        // A join reads one side, then the other: safe when the other side
        // reads no scan of ours (it would wait or make this one wait).
        "HashJoinExec" | "CrossJoinExec" | "NestedLoopJoinExec" => node
            .children()
            .into_iter()
            .enumerate()
            .all(|(i, c)| i == *child || !reads_a_scan(c)),
        _ => false,
    }
}

fn reads_a_scan(node: &Arc<dyn ExecutionPlan>) -> bool {
    node.downcast_ref::<ScanExec>().is_some() || node.children().into_iter().any(reads_a_scan)
}

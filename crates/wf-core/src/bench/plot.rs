//! `wf bench --plot`: median throughput against threads as an SVG chart, drawn
//! with the plotters crate's SVG backend (no font files: its text is SVG
//! `<text>`, laid out by the viewer).
//!
//! One line per cache state (and per io / read variant when several were run),
//! a bar from the slowest to the fastest run at each point, threads on a log2
//! axis with a tick at each thread count measured, MB/s from zero, the title
//! above and the legend in a column of its own right of the plot, where it never
//! hides a point (plotters draws its own legend inside the plotting area).

use plotters::coord::combinators::{LogCoord, WithKeyPoints};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{Cache, Setting, SettingResult};

const SIZE: (u32, u32) = (860, 480);
const FONT: &str = "sans-serif";
const COLD: RGBColor = RGBColor(0x1f, 0x77, 0xb4);
const WARM: RGBColor = RGBColor(0xd6, 0x27, 0x28);
/// Width of the legend's column right of the plot, pixels.
const LEGEND_WIDTH: u32 = 210;
/// Most labels on the MB/s axis.
const Y_LABELS: usize = 6;
const GRID: RGBColor = RGBColor(0xe0, 0xe0, 0xe0);
/// Dash and gap lengths (pixels) of the second, third, ... variant of a cache
/// state; the first is drawn solid.
const DASHES: [(u32, u32); 3] = [(8, 5), (3, 3), (12, 4)];

type Chart<'a, DB> =
    ChartContext<'a, DB, Cartesian2d<WithKeyPoints<LogCoord<f64>>, RangedCoordf64>>;
type DrawResult<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// One line of the chart: a cache state and, when swept, an io / read variant.
struct Series<'a> {
    cache: Cache,
    io: Option<usize>,
    read: Option<&'a str>,
    points: Vec<&'a SettingResult>,
    label: String,
    color: RGBColor,
    /// `None`: solid.
    dash: Option<(u32, u32)>,
}

/// The results grouped into lines, in order of first appearance, each sorted by
/// threads and labelled with what varies between them.
fn series(results: &[SettingResult]) -> Vec<Series<'_>> {
    let first = results.first().map(|r| &r.setting);
    let varies = |same: &dyn Fn(&Setting, &Setting) -> bool| {
        first.is_some_and(|f| results.iter().any(|r| !same(f, &r.setting)))
    };
    let show_io = varies(&|a, b| a.io == b.io);
    let show_read = varies(&|a, b| a.read == b.read);
    let mut out: Vec<Series> = Vec::new();
    for r in results {
        let s = &r.setting;
        let key = (s.cache, s.io, s.read.as_deref());
        if let Some(x) = out.iter_mut().find(|x| (x.cache, x.io, x.read) == key) {
            x.points.push(r);
            continue;
        }
        let mut label = s.cache.name().to_string();
        if show_io {
            label.push_str(&s.io.map_or(" io=default".into(), |n| format!(" io={n}")));
        }
        if show_read {
            label.push_str(&format!(" {}", s.read.as_deref().unwrap_or("default")));
        }
        let variant = out.iter().filter(|x| x.cache == s.cache).count();
        out.push(Series {
            cache: s.cache,
            io: s.io,
            read: s.read.as_deref(),
            points: vec![r],
            label,
            color: match s.cache {
                Cache::Cold => COLD,
                Cache::Warm => WARM,
            },
            dash: variant.checked_sub(1).map(|k| DASHES[k % DASHES.len()]),
        });
    }
    for s in &mut out {
        s.points.sort_by_key(|r| r.setting.threads);
    }
    out
}

fn threads(r: &SettingResult) -> f64 {
    r.setting.threads.max(1) as f64
}

/// MB/s of the run that took `wall` seconds (the median's when unknown).
fn mb_s_at(r: &SettingResult, wall: f64) -> f64 {
    let v = if wall > 0.0 {
        crate::report::stats::mb_per_s(r.bytes, wall)
    } else {
        r.mb_s
    };
    if v.is_finite() {
        v
    } else {
        0.0
    }
}

/// Slowest, median and fastest run, in MB/s.
fn spread(r: &SettingResult) -> (f64, f64, f64) {
    let median = if r.mb_s.is_finite() { r.mb_s } else { 0.0 };
    (mb_s_at(r, r.wall_max), median, mb_s_at(r, r.wall_min))
}

/// [`svg_titled`] with the default title.
pub fn svg(results: &[SettingResult]) -> String {
    svg_titled(results, "wf bench: throughput vs threads")
}

/// A standalone SVG document: median throughput (MB/s) against threads, one line
/// per series with a bar from the slowest to the fastest run at each point,
/// labelled axes, the title and a legend. With no results, the empty axes.
pub fn svg_titled(results: &[SettingResult], title: &str) -> String {
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, SIZE).into_drawing_area();
        if let Err(e) = draw(&root, results, title) {
            // Drawing into a string has no I/O to fail; say so in the picture
            // rather than lose the table that follows.
            let _ = root.draw(&Text::new(
                format!("plot failed: {e}"),
                (10, 20),
                (FONT, 16).into_font().color(&RED),
            ));
        }
        let _ = root.present();
    }
    buf
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    results: &[SettingResult],
    title: &str,
) -> DrawResult<DB> {
    root.fill(&WHITE)?;
    let (left, right) = root.split_horizontally(SIZE.0 - LEGEND_WIDTH);
    let bold = (FONT, 22).into_font().style(FontStyle::Bold);
    let body = left.margin(10, 0, 0, 0).titled(title, bold)?;
    let mut chart = axes(&body, results)?;
    let lines = series(results);
    for s in &lines {
        draw_series(&mut chart, s)?;
    }
    let top = chart.plotting_area().get_pixel_range().1.start;
    legend(&right, &lines, top + 12)
}

/// The chart's frame: log2 threads axis with a tick at each thread count,
/// MB/s axis from zero to a round number above the fastest run, horizontal grid
/// lines.
fn axes<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    results: &[SettingResult],
) -> Result<Chart<'a, DB>, DrawingAreaErrorKind<DB::ErrorType>> {
    let mut xs: Vec<f64> = results.iter().map(threads).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let lo = xs.first().copied().unwrap_or(1.0);
    let hi = xs.last().copied().unwrap_or(1.0);
    // Room beside the outer points: a third of a doubling, or one doubling
    // each side of a single thread count.
    let pad = if hi > lo { 1.3 } else { 2.0 };
    let fastest = results.iter().map(|r| spread(r).2).fold(0.0, f64::max);
    let top = y_top(fastest * 1.04);
    let mut chart = ChartBuilder::on(area)
        .margin(16)
        .x_label_area_size(56)
        .y_label_area_size(84)
        .build_cartesian_2d(
            (lo / pad..hi * pad)
                .log_scale()
                .base(2.0)
                .with_key_points(xs),
            0.0..top,
        )?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .bold_line_style(GRID)
        .light_line_style(TRANSPARENT)
        .y_labels(Y_LABELS)
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| tick(*y))
        .label_style((FONT, 16))
        .axis_desc_style((FONT, 17))
        .x_desc("threads (-j), log2 scale")
        .y_desc("throughput (MB/s, median of runs)")
        .draw()?;
    Ok(chart)
}

/// The top of the MB/s axis: the first multiple of a round step (1, 2 or 5
/// times a power of ten) at or above `max` that leaves at most [`Y_LABELS`]
/// ticks from 0. plotters picks the same step for the labels (the smallest of
/// that form that fits), so the top of the axis is labelled.
fn y_top(max: f64) -> f64 {
    let max = if max > 0.0 && max.is_finite() {
        max
    } else {
        1.0
    };
    let intervals = (Y_LABELS - 1) as f64;
    let mut step = 10f64.powf((max / intervals).log10().floor());
    for m in [1.0, 2.0, 5.0, 10.0] {
        if (max / (m * step)).ceil() <= intervals {
            step *= m;
            break;
        }
    }
    (max / step).ceil() * step
}

/// A tick label: whole numbers as they are, others to at most two decimals.
fn tick(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The legend, right of the plot: one entry per line (its stroke and dot, then
/// its label), then what the bars mean.
fn legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    lines: &[Series],
    top: i32,
) -> DrawResult<DB> {
    if lines.is_empty() {
        return Ok(());
    }
    let font = TextStyle::from((FONT, 16).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    let mut y = top;
    for s in lines {
        let stroke = s.color.stroke_width(3);
        let path = [(4, y), (32, y)];
        match s.dash {
            None => area.draw(&PathElement::new(path, stroke))?,
            Some((d, g)) => area.draw(&DashedPathElement::new(path, d, g, stroke))?,
        }
        area.draw(&Circle::new((18, y), 4, s.color.filled()))?;
        area.draw(&Text::new(s.label.as_str(), (42, y), &font))?;
        y += 24;
    }
    y += 4;
    let grey = RGBColor(0x66, 0x66, 0x66).filled().stroke_width(2);
    area.draw(&ErrorBar::new_vertical(18, y - 9, y, y + 9, grey, 8))?;
    area.draw(&Text::new("min\u{2013}max of runs", (42, y), &font))?;
    Ok(())
}

/// One series: the slowest-to-fastest bars, the line through the medians (dashed
/// for a second or later variant of its cache state), and a dot at each median.
fn draw_series<'a, DB: DrawingBackend + 'a>(
    chart: &mut Chart<'a, DB>,
    s: &Series,
) -> DrawResult<DB> {
    let color = s.color;
    chart.draw_series(s.points.iter().map(|r| {
        let (slow, median, fast) = spread(r);
        ErrorBar::new_vertical(
            threads(r),
            slow,
            median,
            fast,
            color.mix(0.5).filled().stroke_width(2),
            8,
        )
    }))?;
    let points: Vec<(f64, f64)> = s.points.iter().map(|r| (threads(r), spread(r).1)).collect();
    let line = color.stroke_width(3);
    match s.dash {
        None => chart.draw_series(LineSeries::new(points.clone(), line))?,
        Some((dash, gap)) => {
            chart.draw_series(DashedLineSeries::new(points.clone(), dash, gap, line))?
        }
    };
    chart.draw_series(points.iter().map(|&p| Circle::new(p, 4, color.filled())))?;
    Ok(())
}

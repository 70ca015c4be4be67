//! The three kinds of chart, drawn with [`super::svg`]'s primitives: a line chart over time with
//! a transparent hover column per time step whose `<title>` lists every series' value there; the
//! percentile spectrum on the "nines" axis, with a `<title>` on each point; and a dot chart of
//! runs in panels side by side (it/s, and latency), with each series' median dashed.

use super::axis::{self, Unit};
use super::escape::Esc;
use super::svg::{
    BOTTOM, Chart, Column, HEIGHT, LEFT, Plot, RIGHT, Series, TOP, WIDTH, close, max_y, open, path_element, y_ticks,
};

/// The plot area of a chart one panel wide, from 0 to `end` on x, and its y ticks, the top one
/// the highest value drawn rounded up.
fn full_width(chart: &Chart, end: f64) -> (Plot, Vec<(f64, String)>) {
    let ticks = y_ticks(chart.unit, max_y(&chart.series));
    let plot = Plot {
        left: LEFT,
        top: TOP,
        width: WIDTH - LEFT - RIGHT,
        height: HEIGHT - TOP - BOTTOM,
        x: (0.0, end),
        y_top: ticks.last().map_or(1.0, |t| t.0),
    };
    (plot, ticks)
}

/// A line chart over time, from 0 to `end` seconds, with a hover column per entry of `columns`.
pub fn time_chart(chart: &Chart, end: f64, columns: &[Column]) -> String {
    let mut out = String::new();
    open(&mut out, chart, false, HEIGHT);
    let (plot, ticks) = full_width(chart, end);
    let x_ticks: Vec<(f64, String)> = axis::time_ticks(end).into_iter().map(|t| (t, axis::clock(t))).collect();
    plot.frame(&mut out, &x_ticks, &ticks, ["time since the start", chart.y_title]);
    let lone = columns.first().map_or(0.5, |c| (c.to - c.from) / 2.0);
    for (i, series) in chart.series.iter().enumerate() {
        path_element(&mut out, i, series, &plot.path(series, lone));
    }
    // The columns' paint is inherited, to keep each of the (up to 300) rects short.
    out.push_str(r##"<g class="cols" fill="#1F2937" fill-opacity="0">"##);
    for column in columns {
        let centre = (column.from + column.to) / 2.0;
        let mut title = column.heading.clone();
        for series in &chart.series {
            if let Some(value) = series.value_at(centre) {
                title.push_str(&format!("\n{}: {}", series.name, chart.unit.value(value)));
            }
        }
        let (x0, x1) = (plot.px(column.from), plot.px(column.to));
        out.push_str(&format!(
            r#"<rect x="{x0:.1}" y="{:.1}" width="{:.1}" height="{:.1}"><title>{}</title></rect>"#,
            plot.top,
            (x1 - x0).max(0.1),
            plot.height,
            Esc(&title)
        ));
    }
    out.push_str("</g>");
    close(&mut out);
    out
}

/// The percentile spectrum: each series' points are `(percentile, microseconds)`, drawn on the
/// nines axis, the 100 % point one tick past the farthest finite one.
pub fn spectrum_chart(chart: &Chart) -> String {
    let mut out = String::new();
    open(&mut out, chart, false, HEIGHT);
    let farthest = chart.series.iter().flat_map(Series::drawn).filter_map(|(p, _)| axis::nines(p)).fold(0.0, f64::max);
    let end = axis::nines_end(farthest);
    let has_max = chart.series.iter().flat_map(Series::drawn).any(|(p, _)| p >= 100.0);
    let at = |p: f64| axis::nines(p).unwrap_or(end).min(end);
    let (plot, ticks) = full_width(chart, end);
    let last = end as u32;
    let x_ticks: Vec<(f64, String)> = (0..=last)
        .map(|k| (f64::from(k), if k == last && has_max { "100%".to_owned() } else { axis::nines_label(k) }))
        .collect();
    plot.frame(&mut out, &x_ticks, &ticks, ["percentile (log scale of nines)", chart.y_title]);
    for (i, series) in chart.series.iter().enumerate() {
        let moved =
            Series { points: series.points.iter().map(|p| p.map(|(p, y)| (at(p), y))).collect(), ..series.clone() };
        path_element(&mut out, i, series, &plot.path(&moved, 0.05));
        out.push_str(&format!(r#"<g class="points" data-series="{i}" fill="{}">"#, series.colour()));
        for (p, y) in series.drawn() {
            out.push_str(&format!(
                r#"<circle cx="{:.1}" cy="{:.1}" r="2.6"><title>{}</title></circle>"#,
                plot.px(at(p)),
                plot.py(y),
                Esc(&format!("{}\n{}: {}", series.name, axis::percentile_name(p), chart.unit.value(y)))
            ));
        }
        out.push_str("</g>");
    }
    close(&mut out);
    out
}

/// One panel of a dot chart: its unit, its y title and its series (`(run, value)` points).
#[derive(Debug, Clone)]
pub struct Panel {
    /// The unit of its values.
    pub unit: Unit,
    /// The y axis's title.
    pub y_title: &'static str,
    /// How many of the chart's series are this panel's, in order (the first panel's come first).
    pub series: usize,
}

/// A dot chart of `runs` runs in panels side by side: a dot per run and series, and a dashed line
/// at each series' median.
pub fn dot_chart(chart: &Chart, runs: usize, panels: &[Panel]) -> String {
    let mut out = String::new();
    open(&mut out, chart, true, HEIGHT);
    let gap = 40.0;
    let n = panels.len().max(1) as f64;
    let width = (WIDTH - n * (LEFT + RIGHT) - (n - 1.0) * gap) / n;
    let x_ticks: Vec<(f64, String)> = axis::run_ticks(runs).into_iter().map(|t| (t, format!("{t}"))).collect();
    let mut first = 0;
    for (p, panel) in panels.iter().enumerate() {
        let own = &chart.series[first.min(chart.series.len())..(first + panel.series).min(chart.series.len())];
        let ticks = y_ticks(panel.unit, max_y(own));
        let plot = Plot {
            left: LEFT + p as f64 * (width + LEFT + RIGHT + gap),
            top: TOP,
            width,
            height: HEIGHT - TOP - BOTTOM,
            x: (0.5, runs.max(1) as f64 + 0.5),
            y_top: ticks.last().map_or(1.0, |t| t.0),
        };
        plot.frame(&mut out, &x_ticks, &ticks, ["run", panel.y_title]);
        for (i, series) in own.iter().enumerate() {
            let index = first + i;
            let colour = series.colour();
            out.push_str(&format!(r#"<g class="series" data-series="{index}" fill="{colour}">"#));
            let mut values: Vec<f64> = series.drawn().map(|(_, y)| y).collect();
            values.sort_by(f64::total_cmp);
            if let Some(median) = median(&values) {
                let y = plot.py(median);
                out.push_str(&format!(
                    r#"<path class="median" d="M{:.1} {y:.1}L{:.1} {y:.1}" fill="none" stroke="{colour}" stroke-width="1.5" stroke-dasharray="5 4"><title>{}</title></path>"#,
                    plot.left,
                    plot.left + plot.width,
                    Esc(&format!("{}: median {}", series.name, panel.unit.value(median)))
                ));
            }
            for (run, value) in series.drawn() {
                out.push_str(&format!(
                    r#"<circle cx="{:.1}" cy="{:.1}" r="4.5"><title>{}</title></circle>"#,
                    plot.px(run),
                    plot.py(value),
                    Esc(&format!("{}\nrun {run}: {}", series.name, panel.unit.value(value)))
                ));
            }
            out.push_str("</g>");
        }
        first += panel.series;
    }
    close(&mut out);
    out
}

/// The median of sorted `values`.
fn median(values: &[f64]) -> Option<f64> {
    let n = values.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(values[n / 2]),
        _ => Some((values[n / 2 - 1] + values[n / 2]) / 2.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(series: Vec<Series>) -> Chart {
        Chart {
            kind: "latency",
            id: "s0-latency".into(),
            title: "Latency over time",
            label: "latency of <x>".into(),
            unit: Unit::Micros,
            y_title: "latency",
            series,
        }
    }

    #[test]
    fn a_gap_starts_a_new_line_and_a_lone_point_is_a_short_stroke() {
        let s = Series::new("p50", 0, vec![Some((0.5, 10.0)), Some((1.5, 20.0)), None, Some((3.5, 5.0))]);
        let svg = time_chart(&chart(vec![s]), 4.0, &[]);
        let d = svg.split(r#"data-series="0" d=""#).nth(1).and_then(|rest| rest.split('"').next()).unwrap_or_default();
        assert_eq!(d.matches('M').count(), 2, "{d}");
        assert_eq!(d.matches('L').count(), 2, "{d}");
    }

    #[test]
    fn every_series_gets_a_numbered_path_and_a_legend_switch() {
        let series = vec![
            Series::new("a", 0, vec![Some((0.5, 1.0)), Some((1.5, 2.0))]),
            Series::new("b<", 1, vec![Some((0.5, 3.0))]),
        ];
        let columns =
            [Column { from: 0.0, to: 1.0, heading: "0s".into() }, Column { from: 1.0, to: 2.0, heading: "1s".into() }];
        let svg = time_chart(&chart(series), 2.0, &columns);
        for i in 0..2 {
            assert!(svg.contains(&format!(r#"<path class="series" data-series="{i}""#)), "{svg}");
            assert!(svg.contains(&format!(r#"class="legend-item" data-series="{i}" aria-pressed="true""#)), "{svg}");
        }
        assert!(svg.contains("<title>0s\na: 1µs\nb&lt;: 3µs</title>"), "{svg}");
        assert!(svg.contains("<title>1s\na: 2µs</title>"), "{svg}");
        assert!(svg.contains(r#"aria-label="latency of &lt;x&gt;""#));
    }

    #[test]
    fn the_spectrum_puts_its_maximum_one_tick_past_the_farthest_point() {
        let points = [(0.0, 100.0), (90.0, 200.0), (99.0, 300.0), (99.9, 400.0), (100.0, 900.0)];
        let s = Series::new("hello", 0, points.iter().map(|&p| Some(p)).collect());
        let svg = spectrum_chart(&Chart { kind: "spectrum", ..chart(vec![s]) });
        for label in [">0%<", ">90%<", ">99%<", ">99.9%<", ">100%<"] {
            assert!(svg.contains(label), "{label} in {svg}");
        }
        assert!(!svg.contains(">99.99%<"), "{svg}");
        assert!(svg.contains("<title>hello\nmax: 900µs</title>"), "{svg}");
        assert_eq!(svg.matches("<circle cx").count(), 5);
    }

    #[test]
    fn medians() {
        assert_eq!(
            [&[][..], &[1.0], &[1.0, 3.0], &[1.0, 2.0, 9.0]].map(median),
            [None, Some(1.0), Some(2.0), Some(2.0)]
        );
    }
}

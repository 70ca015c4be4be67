//! Chart primitives, as hand-written SVG: series and their colours, a plotting area with its
//! gridlines, ticks and axis titles, a series' path, and the `<figure>` around a chart with its
//! legend (one button per series, which `page.js` turns into a switch). [`super::plots`] draws the
//! three kinds of chart with them. Each chart is an `<svg class="chart" data-chart="KIND">` whose
//! series are `.series` elements numbered by `data-series`.
//!
//! Only numbers formatted here and text passed through [`Esc`] reach the markup.

use super::axis::{self, Unit};
use super::escape::Esc;

/// Okabe and Ito's colour-blind-safe palette (the yellow darkened to read on white), in the order
/// series take them.
pub const PALETTE: [&str; 8] = ["#0072B2", "#D55E00", "#009E73", "#E69F00", "#CC79A7", "#56B4E9", "#3A3A3A", "#B8A200"];

/// How a series' line is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dash {
    /// A solid line.
    Solid,
    /// Long dashes: a baseline, or a second figure of the same target.
    Dashed,
    /// Dots: a third figure of the same target.
    Dotted,
}

impl Dash {
    /// The `stroke-dasharray` attribute, if any.
    pub fn attribute(self) -> &'static str {
        match self {
            Dash::Solid => "",
            Dash::Dashed => r#" stroke-dasharray="7 4""#,
            Dash::Dotted => r#" stroke-dasharray="2 3""#,
        }
    }
}

/// One curve (or row of dots) of a chart.
#[derive(Debug, Clone)]
pub struct Series {
    /// Its legend and tooltip name.
    pub name: String,
    /// Its colour, an index into [`PALETTE`] (wrapping).
    pub colour: usize,
    /// Its line.
    pub dash: Dash,
    /// Its points in the order of x; `None` breaks the line (a second without a value).
    pub points: Vec<Option<(f64, f64)>>,
}

impl Series {
    /// A solid series; a point that is not a finite number (from a damaged file) is a gap.
    pub fn new(name: impl Into<String>, colour: usize, points: Vec<Option<(f64, f64)>>) -> Series {
        let points = points.into_iter().map(|p| p.filter(|(x, y)| x.is_finite() && y.is_finite())).collect();
        Series { name: name.into(), colour, dash: Dash::Solid, points }
    }

    /// This series drawn with `dash`.
    pub fn dashed(self, dash: Dash) -> Series {
        Series { dash, ..self }
    }

    pub fn colour(&self) -> &'static str {
        PALETTE[self.colour % PALETTE.len()]
    }

    pub fn drawn(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.points.iter().flatten().copied()
    }

    /// The series' value at `x`: a point's, or the line's between two points; `None` outside it
    /// or in a gap.
    pub fn value_at(&self, x: f64) -> Option<f64> {
        let mut previous: Option<(f64, f64)> = None;
        for point in &self.points {
            match (*point, previous) {
                (Some((px, py)), _) if (px - x).abs() < 1e-9 => return Some(py),
                (Some((bx, by)), Some((ax, ay))) if ax < x && x < bx => {
                    return Some(ay + (by - ay) * (x - ax) / (bx - ax));
                }
                _ => {}
            }
            previous = *point;
        }
        None
    }
}

/// What every chart has: its kind, place, names and series.
#[derive(Debug, Clone)]
pub struct Chart {
    /// Its `data-chart`: `throughput`, `latency`, `spectrum`, …
    pub kind: &'static str,
    /// Its figure's id, made of numbers and the kind only (`s0-throughput`).
    pub id: String,
    /// Its caption: `Throughput`.
    pub title: &'static str,
    /// What a screen reader says of it.
    pub label: String,
    /// The unit of its values.
    pub unit: Unit,
    /// The y axis's title.
    pub y_title: &'static str,
    /// The series, numbered in this order.
    pub series: Vec<Series>,
}

/// A time step a hover column covers, from `from` to `to` seconds, headed `heading` (`12s`,
/// `2m–2m12s`) in its tooltip.
#[derive(Debug, Clone)]
pub struct Column {
    /// Its start, in seconds.
    pub from: f64,
    /// Its end.
    pub to: f64,
    /// The tooltip's first line: `12s`, `2m–2m12s (averages)`.
    pub heading: String,
}

pub const WIDTH: f64 = 960.0;
pub const HEIGHT: f64 = 300.0;
pub const LEFT: f64 = 74.0;
pub const RIGHT: f64 = 18.0;
pub const TOP: f64 = 14.0;
pub const BOTTOM: f64 = 50.0;

/// A plotting area of the SVG and the values it maps.
pub struct Plot {
    /// Its left edge, in the SVG's units.
    pub left: f64,
    /// Its top edge.
    pub top: f64,
    /// Its width.
    pub width: f64,
    /// Its height.
    pub height: f64,
    /// The values at its left and right edges.
    pub x: (f64, f64),
    /// The value at its top edge (its bottom is 0).
    pub y_top: f64,
}

impl Plot {
    pub fn px(&self, x: f64) -> f64 {
        self.left + (x - self.x.0) / (self.x.1 - self.x.0).max(f64::MIN_POSITIVE) * self.width
    }

    pub fn py(&self, y: f64) -> f64 {
        self.top + self.height - y.max(0.0) / self.y_top.max(f64::MIN_POSITIVE) * self.height
    }

    /// Gridlines and tick labels, the axes and their titles.
    pub fn frame(&self, out: &mut String, x_ticks: &[(f64, String)], y_ticks: &[(f64, String)], titles: [&str; 2]) {
        let (bottom, right) = (self.top + self.height, self.left + self.width);
        out.push_str(r#"<g class="grid">"#);
        for (y, _) in y_ticks {
            let py = self.py(*y);
            out.push_str(&format!(r#"<line x1="{:.1}" y1="{py:.1}" x2="{right:.1}" y2="{py:.1}"/>"#, self.left));
        }
        for (x, _) in x_ticks {
            let px = self.px(*x);
            out.push_str(&format!(r#"<line x1="{px:.1}" y1="{:.1}" x2="{px:.1}" y2="{bottom:.1}"/>"#, self.top));
        }
        out.push_str("</g>");
        out.push_str(&format!(
            r#"<path class="axis" d="M{:.1} {:.1}V{bottom:.1}H{right:.1}" fill="none"/>"#,
            self.left, self.top
        ));
        out.push_str(r#"<g class="ticks">"#);
        for (y, label) in y_ticks {
            let py = self.py(*y) + 4.0;
            out.push_str(&format!(
                r#"<text x="{:.1}" y="{py:.1}" text-anchor="end">{}</text>"#,
                self.left - 8.0,
                Esc(label)
            ));
        }
        for (x, label) in x_ticks {
            let px = self.px(*x);
            out.push_str(&format!(
                r#"<text x="{px:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                bottom + 18.0,
                Esc(label)
            ));
        }
        out.push_str("</g>");
        let (cx, cy) = (self.left + self.width / 2.0, self.top + self.height / 2.0);
        out.push_str(&format!(
            r#"<text class="axis-title" x="{cx:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            bottom + 40.0,
            Esc(titles[0])
        ));
        out.push_str(&format!(
            r#"<text class="axis-title" transform="translate({:.1} {cy:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
            self.left - 58.0,
            Esc(titles[1])
        ));
    }

    /// A series' line: `M x y L x y …`, a new `M` after each gap; a point alone becomes a short
    /// flat stroke `lone` wide on each side, so every drawn path has two points.
    pub fn path(&self, series: &Series, lone: f64) -> String {
        let mut d = String::new();
        for run in series.points.split(|p| p.is_none()) {
            let run: Vec<(f64, f64)> = run.iter().flatten().copied().collect();
            let run = match run.as_slice() {
                [] => continue,
                [(x, y)] => vec![(x - lone, *y), (x + lone, *y)],
                _ => run,
            };
            for (i, (x, y)) in run.into_iter().enumerate() {
                let x = self.px(x).clamp(self.left, self.left + self.width);
                d.push_str(&format!("{}{x:.1} {:.1}", if i == 0 { "M" } else { "L" }, self.py(y)));
            }
        }
        d
    }
}

/// The `<figure>`'s opening, with the caption and the legend, and the `<svg>`'s.
pub fn open(out: &mut String, chart: &Chart, dots: bool, height: f64) {
    out.push_str(&format!(
        r#"<figure class="chart-box" id="{}"><figcaption><span class="chart-title">{}</span><span class="legend">"#,
        Esc(&chart.id),
        Esc(chart.title)
    ));
    for (i, series) in chart.series.iter().enumerate() {
        let mark = if dots {
            format!(r#"<circle cx="12" cy="6" r="4" fill="{}"/>"#, series.colour())
        } else {
            format!(
                r#"<line x1="1" y1="6" x2="23" y2="6" stroke="{}" stroke-width="3"{}/>"#,
                series.colour(),
                series.dash.attribute()
            )
        };
        out.push_str(&format!(
            r#"<button type="button" class="legend-item" data-series="{i}" aria-pressed="true"><svg class="swatch" viewBox="0 0 24 12" aria-hidden="true" focusable="false">{mark}</svg>{}</button>"#,
            Esc(&series.name)
        ));
    }
    out.push_str("</span></figcaption>");
    out.push_str(&format!(
        r#"<svg class="chart" data-chart="{}" role="img" aria-label="{}" viewBox="0 0 {WIDTH} {height}" preserveAspectRatio="xMidYMid meet">"#,
        Esc(chart.kind),
        Esc(&chart.label)
    ));
}

pub fn close(out: &mut String) {
    out.push_str("</svg></figure>\n");
}

/// The y ticks of a unit up to `max`, with their labels.
pub fn y_ticks(unit: Unit, max: f64) -> Vec<(f64, String)> {
    let ticks = axis::linear_ticks(max);
    let labels = unit.tick_labels(&ticks);
    ticks.into_iter().zip(labels).collect()
}

pub fn max_y<'a>(series: impl IntoIterator<Item = &'a Series>) -> f64 {
    series.into_iter().flat_map(Series::drawn).map(|(_, y)| y).fold(0.0, f64::max)
}

pub fn path_element(out: &mut String, index: usize, series: &Series, d: &str) {
    out.push_str(&format!(
        r#"<path class="series" data-series="{index}" d="{d}" fill="none" stroke="{}" stroke-width="2" stroke-linejoin="round" stroke-linecap="round"{}/>"#,
        series.colour(),
        series.dash.attribute()
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_series_is_read_between_its_points_and_not_across_a_gap() {
        let s = Series::new("p50", 0, vec![Some((0.5, 10.0)), Some((1.5, 20.0)), None, Some((3.5, 5.0))]);
        assert_eq!(
            [0.5, 1.0, 1.5, 2.5, 3.5, 9.0].map(|x| s.value_at(x)),
            [Some(10.0), Some(15.0), Some(20.0), None, Some(5.0), None]
        );
    }
}

//! SVG charts for `bench`: first-pass GB/s against N, one line per version, the read-only
//! ceiling dashed.
//!
//! plotters is built with its SVG backend only (no `ttf`/`ab_glyph` feature): the SVG backend
//! writes text as `<text>` elements that the viewer lays out, so no font file is read and
//! nothing but Rust is linked. N goes on a log2 axis (the sizes are powers of two or near
//! them), labelled `2^k` at every whole exponent.

use anyhow::{Context, Result, anyhow};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use std::path::Path;

/// One line of the chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// The legend entry (`v5`, `cub`, `read-only`).
    pub name: String,
    /// `(N, GB/s)`; drawn in order of N.
    pub points: Vec<(usize, f64)>,
    /// The bandwidth ceiling: drawn black and dashed, listed last in the legend.
    pub ceiling: bool,
}

/// Line colours (matplotlib's "tab10" and two more): distinct on white, none close to the
/// ceiling's black.
const COLORS: [RGBColor; 12] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
    RGBColor(0, 0, 128),
    RGBColor(128, 0, 0),
];

const WIDTH: u32 = 1100;
const HEIGHT: u32 = 700;

/// The chart as SVG text. Series without points are left out; with no points at all the
/// chart still has its axes and title (so a run whose every size failed still writes a file).
pub fn render_svg(title: &str, series: &[Series]) -> Result<String> {
    let drawn: Vec<Series> = series
        .iter()
        .filter(|s| s.points.iter().any(|&(n, y)| n > 0 && y.is_finite()))
        .map(|s| {
            let mut points: Vec<(usize, f64)> = s
                .points
                .iter()
                .copied()
                .filter(|&(n, y)| n > 0 && y.is_finite())
                .collect();
            points.sort_by_key(|&(n, _)| n);
            Series {
                points,
                ..s.clone()
            }
        })
        .collect();
    let exponents = drawn
        .iter()
        .flat_map(|s| s.points.iter().map(|&(n, _)| log2(n)));
    let (mut x_min, mut x_max) = exponents
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
            (lo.min(x), hi.max(x))
        });
    if !x_min.is_finite() {
        (x_min, x_max) = (10.0, 28.0);
    }
    let (x_min, mut x_max) = (x_min.floor(), x_max.ceil());
    if x_max <= x_min {
        x_max = x_min + 1.0;
    }
    let y_top = drawn
        .iter()
        .flat_map(|s| s.points.iter().map(|&(_, y)| y))
        .fold(0.0f64, f64::max);
    let y_top = if y_top > 0.0 { y_top * 1.08 } else { 1.0 };
    // A label at every whole exponent (every second one past 16 of them): plotters picks
    // steps of 1, 2 or 5 on a float axis, and this many labels makes it pick 1 (or 2).
    let span = (x_max - x_min) as usize;
    let x_labels = if span > 16 { span / 2 + 1 } else { span + 1 };

    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 26))
            .margin(16)
            .x_label_area_size(56)
            .y_label_area_size(80)
            .build_cartesian_2d(x_min..x_max, 0.0..y_top)
            .map_err(draw_error)?;
        chart
            .configure_mesh()
            .x_desc("N (elements, log scale)")
            .y_desc("first-pass GB/s")
            .axis_desc_style(("sans-serif", 18))
            .label_style(("sans-serif", 15))
            .x_labels(x_labels)
            .x_label_formatter(&exponent_label)
            .y_label_formatter(&|y| format!("{y:.0}"))
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(draw_error)?;

        let (lines, ceilings): (Vec<&Series>, Vec<&Series>) =
            drawn.iter().partition(|s| !s.ceiling);
        for (i, s) in lines.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            let style = ShapeStyle::from(color).stroke_width(2);
            let points: Vec<(f64, f64)> = s.points.iter().map(|&(n, y)| (log2(n), y)).collect();
            chart
                .draw_series(LineSeries::new(points.clone(), style))
                .map_err(draw_error)?
                .label(s.name.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], style));
            chart
                .draw_series(
                    points
                        .iter()
                        .map(|&p| Circle::new(p, 3, ShapeStyle::from(color).filled())),
                )
                .map_err(draw_error)?;
        }
        for s in ceilings {
            let style = ShapeStyle::from(BLACK).stroke_width(2);
            let points: Vec<(f64, f64)> = s.points.iter().map(|&(n, y)| (log2(n), y)).collect();
            chart
                .draw_series(DashedLineSeries::new(points, 8, 6, style))
                .map_err(draw_error)?
                .label(s.name.as_str())
                .legend(move |(x, y)| {
                    DashedPathElement::new(vec![(x, y), (x + 24, y)], 6, 4, style)
                });
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 16))
            .draw()
            .map_err(draw_error)?;
        root.present().map_err(draw_error)?;
    }
    Ok(svg)
}

/// Renders the chart and writes it to `path`.
pub fn write_svg(path: &Path, title: &str, series: &[Series]) -> Result<()> {
    let svg = render_svg(title, series).with_context(|| format!("drawing {}", path.display()))?;
    std::fs::write(path, svg).with_context(|| format!("writing {}", path.display()))
}

/// `2^k` for the exponent `k` (fractional exponents, which the axis should not produce, as
/// `2^k.k`).
fn exponent_label(x: &f64) -> String {
    if (x - x.round()).abs() < 1e-9 {
        format!("2^{}", x.round() as i64)
    } else {
        format!("2^{x:.1}")
    }
}

fn log2(n: usize) -> f64 {
    (n as f64).log2()
}

fn draw_error<E: std::error::Error + Send + Sync>(error: DrawingAreaErrorKind<E>) -> anyhow::Error {
    anyhow!("plotting failed: {error}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn synthetic() -> Vec<Series> {
        let sizes = [1usize << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20];
        let line = |name: &str, scale: f64, ceiling: bool| Series {
            name: name.to_string(),
            points: sizes
                .iter()
                .enumerate()
                .map(|(i, &n)| (n, scale * (i + 1) as f64))
                .collect(),
            ceiling,
        };
        vec![
            line("v0", 100.0, false),
            line("v8", 400.0, false),
            line("cub", 420.0, false),
            line("read-only", 450.0, true),
        ]
    }

    #[test]
    fn chart_names_every_series_and_labels_powers_of_two() {
        let dir = std::env::temp_dir().join(format!("reduce-rs-chart-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("bench_f32.svg");
        write_svg(&path, "f32 sum — test GPU", &synthetic()).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(200)]);
        // Every title, axis label and legend entry is a <text> element: the viewer lays it out,
        // no font file was read.
        let texts: Vec<&str> = svg
            .split("<text")
            .skip(1)
            .filter_map(|t| t.split_once('>')?.1.split_once("</text>"))
            .map(|(text, _)| text.trim())
            .collect();
        for name in [
            "v0",
            "v8",
            "cub",
            "read-only",
            "f32 sum — test GPU",
            "first-pass GB/s",
        ] {
            assert!(texts.contains(&name), "{name} not in {texts:?}");
        }
        for label in ["2^10", "2^11", "2^14", "2^20"] {
            assert!(texts.contains(&label), "x label {label} not in {texts:?}");
        }
        // The ceiling is dashed: many short black segments (plus its legend sample).
        let black_dashes = svg
            .matches(r##"<polyline fill="none" opacity="1" stroke="#000000" stroke-width="2""##)
            .count();
        assert!(black_dashes > 20, "{black_dashes} black dashes");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn empty_and_single_size_charts_still_render() {
        assert!(render_svg("empty", &[]).unwrap().contains("empty"));
        let one = Series {
            name: "v3".into(),
            points: vec![(1 << 20, 10.0), (0, 5.0), (1 << 21, f64::NAN)],
            ceiling: false,
        };
        let svg = render_svg("one", &[one]).unwrap();
        assert!(svg.contains("v3") && svg.contains("2^20"));
    }

    #[test]
    fn writing_into_a_missing_directory_says_where() {
        let path = std::env::temp_dir()
            .join(format!("reduce-rs-missing-{}", std::process::id()))
            .join("no")
            .join("bench.svg");
        let error = format!("{:#}", write_svg(&path, "t", &synthetic()).unwrap_err());
        assert!(
            error.contains("writing") && error.contains("bench.svg"),
            "{error}"
        );
    }
}

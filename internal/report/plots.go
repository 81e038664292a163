package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/feedrun/feedrun/internal/harness"
)

// Plot names; each is written as name.png and name.svg.
const (
	GainForestPlot    = "gain_forest"
	DecompositionPlot = "decomposition"
	RepeatPlot        = "repeat_by_harness"
	RolloutPlot       = "rollout_success"
	RetryPlot         = "retry_budget"
	SizePlot          = "by_model_size"
)

// pngDPI is high enough for a printed page; the SVG is for editing.
const pngDPI = 150

// WritePlots draws the study's six plots from computed tables into dir
// (created if needed): the forest plot of mean per-token gain under the
// verbatim harness, Δcopy and Δsem under verbatim, P(repeat) before and
// after each harness, the rollouts' success rate per harness, success
// against the retry budget under each loop policy, and the verbatim gain
// per token and copy share against model size (sizes by model name, as
// the registry gives them; a model without one is left out). A plot
// with nothing to show is still written, with empty axes, so that the set
// of files is the same for every report.
func WritePlots(dir string, tables []Table, sizes map[string]string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	plots, err := drawPlots(tables, sizes)
	if err != nil {
		return err
	}
	for _, p := range plots {
		for ext, data := range map[string][]byte{".png": p.png, ".svg": p.svg} {
			if err := os.WriteFile(filepath.Join(dir, p.name+ext), data, 0o644); err != nil {
				return fmt.Errorf("plots: %w", err)
			}
		}
	}
	return nil
}

// drawnPlot is one plot drawn twice, and the table it draws.
type drawnPlot struct {
	name, table string
	png, svg    []byte
}

// drawPlots draws the plots of WritePlots, in memory: the HTML report
// carries them inline.
func drawPlots(tables []Table, sizes map[string]string) ([]drawnPlot, error) {
	inv, dec, cmp := findTable(tables, InversionTable), findTable(tables, DecompositionTable), findTable(tables, HarnessTable)
	var out []drawnPlot
	add := func(table string) func(drawnPlot, error) error {
		return func(p drawnPlot, err error) error {
			p.table = table
			out = append(out, p)
			return err
		}
	}
	forest, h, err := gainForest(inv)
	if err != nil {
		return nil, err
	}
	if err := add(InversionTable)(draw2(GainForestPlot, 7*vg.Inch, h, forest.Draw)); err != nil {
		return nil, err
	}
	decomp, err := decompositionBars(dec)
	if err != nil {
		return nil, err
	}
	if err := add(DecompositionTable)(draw2(DecompositionPlot, 7*vg.Inch, 4.5*vg.Inch, decomp.Draw)); err != nil {
		return nil, err
	}
	repeat, err := repeatPanels(cmp)
	if err != nil {
		return nil, err
	}
	if err := add(HarnessTable)(drawPanels(RepeatPlot, repeat)); err != nil {
		return nil, err
	}
	success, err := successPanels(findTable(tables, RolloutTable))
	if err != nil {
		return nil, err
	}
	if err := add(RolloutTable)(drawPanels(RolloutPlot, success)); err != nil {
		return nil, err
	}
	retry, err := retryPanels(findTable(tables, RetryTable))
	if err != nil {
		return nil, err
	}
	if err := add(RetryTable)(drawPanels(RetryPlot, retry)); err != nil {
		return nil, err
	}
	bySize, err := sizePanels(inv, dec, sizes)
	if err != nil {
		return nil, err
	}
	if err := add(InversionTable)(drawPanels(SizePlot, bySize)); err != nil {
		return nil, err
	}
	return out, nil
}

// parameterCount reads a size as models.yaml gives it ("135M", "1.5B") as
// a number of parameters.
func parameterCount(size string) (float64, bool) {
	if len(size) < 2 {
		return 0, false
	}
	unit := map[byte]float64{'M': 1e6, 'B': 1e9}[size[len(size)-1]]
	v, err := strconv.ParseFloat(size[:len(size)-1], 64)
	if unit == 0 || err != nil || v <= 0 {
		return 0, false
	}
	return v * unit, true
}

// sizePoint is one model's figure at its size.
type sizePoint struct {
	params float64
	label  string
	point
}

// sizePoints are, per environment in table order, the verbatim rows'
// figure id of models whose size is known, with their intervals.
func sizePoints(t Table, id string, sizes map[string]string) (envs []string, points map[string][]sizePoint) {
	points = map[string][]sizePoint{}
	for _, r := range t.Rows {
		f, ok := r.Figures[id]
		n, known := parameterCount(sizes[r.Model])
		if r.Harness != harness.Verbatim || !defined(f, ok) || !known {
			continue
		}
		if _, seen := points[r.Env]; !seen {
			envs = append(envs, r.Env)
		}
		points[r.Env] = append(points[r.Env], sizePoint{params: n, label: r.ModelLabel(), point: pointOf(f)})
	}
	return envs, points
}

// sizePanels plots, per environment, the verbatim mean gain per token
// (from the inversion table) and the copy share of means (from the
// decomposition table) against the model's parameter count on a log
// axis, each point with its interval and the model's label: does the
// inversion grow or shrink with size?
func sizePanels(inv, dec Table, sizes map[string]string) ([]*plot.Plot, error) {
	var panels []*plot.Plot
	for _, fig := range []struct {
		t            Table
		id, title, y string
	}{
		{inv, "gain_per_token", "Gain per token by model size (verbatim)", "nats per token (< 0: feedback inversion)"},
		{dec, "copy_share", "Copy share by model size (verbatim)", "Δcopy / (Δcopy + Δsem), of means"},
	} {
		p := plot.New()
		p.Title.Text = fig.title
		p.X.Label.Text = "parameters (log scale)"
		p.Y.Label.Text = fig.y
		// The study's range, 135M to 1.7B, whatever the runs hold, so
		// that plots of different reports compare.
		p.X.Scale = plot.LogScale{}
		p.X.Min, p.X.Max = 1e8, 2.5e9
		p.X.Tick.Marker = plot.ConstantTicks{{Value: 135e6, Label: "135M"}, {Value: 270e6, Label: "270M"}, {Value: 0.5e9, Label: "0.5B"}, {Value: 1e9, Label: "1B"}, {Value: 1.5e9, Label: "1.5B"}}
		p.Legend.Top = true
		envs, points := sizePoints(fig.t, fig.id, sizes)
		sizeAxisLeavingLegendRoom(p, envs, points)
		for i, env := range envs {
			var xys plotter.XYs
			var errs plotter.YErrors
			var labels []string
			for _, sp := range points[env] {
				xys = append(xys, plotter.XY{X: sp.params, Y: sp.est})
				errs = append(errs, struct{ Low, High float64 }{sp.est - sp.lo, sp.hi - sp.est})
				labels = append(labels, sp.label)
			}
			dots, err := plotter.NewScatter(xys)
			if err != nil {
				return nil, fmt.Errorf("plots: %s: %w", SizePlot, err)
			}
			dots.Color = plotutil.Color(i)
			dots.Shape = plotutil.Shape(i)
			bars, err := plotter.NewYErrorBars(struct {
				plotter.XYs
				plotter.YErrors
			}{xys, errs})
			if err != nil {
				return nil, fmt.Errorf("plots: %s: %w", SizePlot, err)
			}
			bars.Color = plotutil.Color(i)
			names, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
			if err != nil {
				return nil, fmt.Errorf("plots: %s: %w", SizePlot, err)
			}
			names.Offset = vg.Point{X: vg.Points(4), Y: vg.Points(4)}
			p.Add(bars, dots, names)
			p.Legend.Add(env, dots)
		}
		panels = append(panels, p)
	}
	return panels, nil
}

// sizeAxisLeavingLegendRoom spans the y axis over every interval and then
// as much again as the legend needs above them: gonum draws the legend
// inside the plot area, in the top right corner where the largest model's
// point and label sit, so without the room it covers them.
func sizeAxisLeavingLegendRoom(p *plot.Plot, envs []string, points map[string][]sizePoint) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, env := range envs {
		for _, sp := range points[env] {
			lo, hi = min(lo, sp.lo), max(hi, sp.hi)
		}
	}
	if math.IsInf(lo, 0) {
		return
	}
	span := hi - lo
	if span == 0 {
		span = max(math.Abs(hi), 1) / 10
	}
	rows := float64(len(envs))
	p.Y.Min = lo - 0.05*span
	p.Y.Max = hi + (0.15+0.12*rows)*span
}

// drawPanels draws one plot per model × env in a grid two panels wide.
func drawPanels(name string, panels []*plot.Plot) (drawnPlot, error) {
	cols := min(2, max(1, len(panels)))
	rows := max(1, (len(panels)+cols-1)/cols)
	grid := make([][]*plot.Plot, rows)
	for i := range grid {
		grid[i] = make([]*plot.Plot, cols)
	}
	for i, p := range panels {
		grid[i/cols][i%cols] = p
	}
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Centimeter, PadY: vg.Centimeter,
		PadTop: vg.Centimeter / 2, PadBottom: vg.Centimeter / 2, PadLeft: vg.Centimeter / 2, PadRight: vg.Centimeter / 2}
	drawGrid := func(dc draw.Canvas) {
		canvases := plot.Align(grid, tiles, dc)
		for j := range grid {
			for i, p := range grid[j] {
				if p != nil {
					p.Draw(canvases[j][i])
				}
			}
		}
	}
	return draw2(name, vg.Length(cols)*panelWidth, vg.Length(rows)*4*vg.Inch, drawGrid)
}

// panelWidth is the width of one model × env panel.
const panelWidth = 5.5 * vg.Inch

func findTable(tables []Table, id string) Table {
	for _, t := range tables {
		if t.ID == id {
			return t
		}
	}
	return Table{ID: id}
}

// point is one estimate with its interval, NaN bounds drawn as none.
type point struct{ est, lo, hi float64 }

func pointOf(f Figure) point {
	p := point{est: f.Estimate, lo: f.Lo, hi: f.Hi}
	if math.IsNaN(p.lo) || math.IsNaN(p.hi) {
		p.lo, p.hi = p.est, p.est
	}
	return p
}

// defined reports whether f is a number that can be drawn.
func defined(f Figure, ok bool) bool {
	return ok && !f.Banned && !math.IsNaN(f.Estimate)
}

func groupLabel(r Row) string { return r.ModelLabel() + ", " + r.Env }

// gainForest is the forest plot of mean per-token gain under verbatim, one
// line per model × env from top to bottom in table order, and its height.
func gainForest(t Table) (*plot.Plot, vg.Length, error) {
	var pts []point
	var names []string
	for _, r := range t.Rows {
		if f, ok := r.Figures["gain_per_token"]; r.Harness == harness.Verbatim && defined(f, ok) {
			pts = append(pts, pointOf(f))
			names = append(names, groupLabel(r))
		}
	}
	p := plot.New()
	p.Title.Text = "Mean corrective gain per action token (verbatim)"
	p.X.Label.Text = "nats per token (< 0: feedback inversion)"
	n := len(pts)
	xys := make(plotter.XYs, n)
	errs := make(plotter.XErrors, n)
	labels := make([]string, n)
	for i, pt := range pts {
		// NominalY puts label k at y = k, from the bottom up.
		y := float64(n - 1 - i)
		xys[n-1-i] = plotter.XY{X: pt.est, Y: y}
		errs[n-1-i] = struct{ Low, High float64 }{pt.est - pt.lo, pt.hi - pt.est}
		labels[n-1-i] = names[i]
	}
	zero, err := plotter.NewLine(plotter.XYs{{X: 0, Y: -0.5}, {X: 0, Y: float64(n) - 0.5}})
	if err != nil {
		return nil, 0, fmt.Errorf("plots: %s: %w", GainForestPlot, err)
	}
	zero.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	zero.LineStyle.Color = color.Gray{Y: 100}
	p.Add(zero)
	if n > 0 {
		bars, err := plotter.NewXErrorBars(struct {
			plotter.XYs
			plotter.XErrors
		}{xys, errs})
		if err != nil {
			return nil, 0, fmt.Errorf("plots: %s: %w", GainForestPlot, err)
		}
		dots, err := plotter.NewScatter(xys)
		if err != nil {
			return nil, 0, fmt.Errorf("plots: %s: %w", GainForestPlot, err)
		}
		p.Add(bars, dots)
		p.NominalY(labels...)
	}
	p.Y.Min, p.Y.Max = -0.5, float64(n)-0.5
	return p, max(3*vg.Inch, vg.Length(n)*0.35*vg.Inch+1.5*vg.Inch), nil
}

// bars draws one or more series of bars per category (e.g. Δcopy and
// Δsem) side by side with their intervals, in a plot width wide, on a y
// range that includes 0. Several series get a legend, named by names.
func bars(p *plot.Plot, labels []string, series [][]point, names []string, width vg.Length) error {
	n := len(labels)
	p.X.Min, p.X.Max = -0.5, float64(n)-0.5
	if n == 0 {
		return nil
	}
	// Categories are one data unit apart and the series share 0.8 of it;
	// the drawing width of a unit is roughly the plot's width less its axis,
	// so bars are sized from it.
	k := float64(len(series))
	barWidth := (width - 1.5*vg.Inch) / vg.Length(n) * vg.Length(0.7/k)
	for s := range series {
		offset := -0.4 + 0.8*(float64(s)+0.5)/k
		values := make(plotter.Values, n)
		xys := make(plotter.XYs, n)
		errs := make(plotter.YErrors, n)
		for i, pt := range series[s] {
			values[i] = pt.est
			xys[i] = plotter.XY{X: float64(i) + offset, Y: pt.est}
			errs[i] = struct{ Low, High float64 }{pt.est - pt.lo, pt.hi - pt.est}
		}
		b, err := plotter.NewBarChart(values, barWidth)
		if err != nil {
			return fmt.Errorf("plots: %s: %w", names[s], err)
		}
		b.XMin = offset
		b.Color = plotutil.Color(s)
		b.LineStyle.Width = 0
		eb, err := plotter.NewYErrorBars(struct {
			plotter.XYs
			plotter.YErrors
		}{xys, errs})
		if err != nil {
			return fmt.Errorf("plots: %s: %w", names[s], err)
		}
		p.Add(b, eb)
		if len(series) > 1 {
			p.Legend.Add(names[s], b)
		}
	}
	lo, hi := 0.0, 0.0
	for _, pts := range series {
		for _, pt := range pts {
			lo, hi = min(lo, pt.lo), max(hi, pt.hi)
		}
	}
	p.Y.Min, p.Y.Max = lo, hi
	if len(series) > 1 {
		// Leave room above the highest interval for the legend, which gonum
		// draws inside the plot area.
		p.Y.Max = hi + 0.25*(hi-lo)
	}
	p.NominalX(labels...)
	p.X.Tick.Label.Rotation = math.Pi / 8
	p.X.Tick.Label.XAlign = draw.XRight
	p.X.Tick.Label.YAlign = draw.YCenter
	p.Legend.Top = true
	return nil
}

// decompositionBars is mean Δcopy and mean Δsem under verbatim per model × env.
func decompositionBars(t Table) (*plot.Plot, error) {
	var labels []string
	var series [2][]point
	for _, r := range t.Rows {
		c, okC := r.Figures["d_copy"]
		s, okS := r.Figures["d_sem"]
		if r.Harness != harness.Verbatim || !defined(c, okC) || !defined(s, okS) {
			continue
		}
		labels = append(labels, groupLabel(r))
		series[0] = append(series[0], pointOf(c))
		series[1] = append(series[1], pointOf(s))
	}
	p := plot.New()
	p.Title.Text = "Copy and semantic terms of the inversion (verbatim)"
	p.Y.Label.Text = "mean nats per action (−G = Δcopy + Δsem)"
	err := bars(p, labels, series[:], []string{"Δcopy", "Δsem"}, 7*vg.Inch)
	return p, err
}

// repeatPanels is one plot per model × env of P(repeat) before and after
// each harness, on the items paired with verbatim.
func repeatPanels(t Table) ([]*plot.Plot, error) {
	var panels []*plot.Plot
	for _, rows := range groupRows(t.Rows) {
		var labels []string
		var series [2][]point
		for _, r := range rows {
			pre, okPre := r.Figures["p_repeat_pre"]
			post, okPost := r.Figures["p_repeat_post"]
			if !defined(pre, okPre) || !defined(post, okPost) {
				continue
			}
			labels = append(labels, string(r.Harness))
			series[0] = append(series[0], pointOf(pre))
			series[1] = append(series[1], pointOf(post))
		}
		p := plot.New()
		p.Title.Text = "P(repeat): " + groupLabel(rows[0])
		p.Y.Label.Text = "candidate-set P(repeat)"
		if err := bars(p, labels, series[:], []string{"before", "after"}, panelWidth); err != nil {
			return nil, err
		}
		panels = append(panels, p)
	}
	return panels, nil
}

// successPanels is one plot per model × env of each harness's success rate
// in rollouts, with its interval over episodes.
func successPanels(t Table) ([]*plot.Plot, error) {
	var panels []*plot.Plot
	for _, rows := range groupRows(t.Rows) {
		var labels []string
		var passed []point
		for _, r := range rows {
			if f, ok := r.Figures["passed_rate"]; defined(f, ok) {
				labels = append(labels, string(r.Harness))
				passed = append(passed, pointOf(f))
			}
		}
		p := plot.New()
		p.Title.Text = "Rollout success: " + groupLabel(rows[0])
		p.Y.Label.Text = "share of episodes passed"
		if err := bars(p, labels, [][]point{passed}, []string{"passed"}, panelWidth); err != nil {
			return nil, err
		}
		// A share: the full 0–1 scale, so panels compare at a glance.
		p.Y.Min, p.Y.Max = 0, 1
		panels = append(panels, p)
	}
	return panels, nil
}

// draw2 draws a figure twice, as PNG and as SVG.
func draw2(name string, w, h vg.Length, drawTo func(draw.Canvas)) (drawnPlot, error) {
	img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(pngDPI))
	drawTo(draw.New(img))
	var png bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&png); err != nil {
		return drawnPlot{}, fmt.Errorf("plots: %s.png: %w", name, err)
	}
	svg := vgsvg.New(w, h)
	drawTo(draw.New(svg))
	var doc bytes.Buffer
	if _, err := svg.WriteTo(&doc); err != nil {
		return drawnPlot{}, fmt.Errorf("plots: %s.svg: %w", name, err)
	}
	return drawnPlot{name: name, png: png.Bytes(), svg: doc.Bytes()}, nil
}

// retryPanels is two plots per agent × fault rate of Table 5, the share of
// episodes that finished and the share that finished with both suites
// passing, each against the retry budget: a line with intervals per loop
// policy (nudged apart sideways so equal rates stay visible) and the
// closed-form prediction dashed beside it where the agent has one.
func retryPanels(t Table) ([]*plot.Plot, error) {
	var panels []*plot.Plot
	metrics := []struct{ figure, predicted, label string }{
		{"finished_rate", "predicted_finished", "finished"},
		{"passed_rate", "predicted_passed", "finished with tests passing"},
	}
	for _, rows := range groupRows(t.Rows) {
		byPolicy := map[string][]Row{}
		var policies []string
		for _, r := range rows {
			if r.Retry == nil {
				return nil, fmt.Errorf("plots: %s row %q has no retry setting", RetryTable, r.label())
			}
			policy := r.Retry.OnLoop
			if _, ok := byPolicy[policy]; !ok {
				policies = append(policies, policy)
			}
			byPolicy[policy] = append(byPolicy[policy], r)
		}
		for _, m := range metrics {
			p := plot.New()
			p.Title.Text = groupLabel(rows[0]) + ": " + m.label
			p.X.Label.Text = "retries per call"
			p.Y.Label.Text = "share of episodes " + m.label
			p.Y.Min, p.Y.Max = 0, 1.05
			p.X.Tick.Marker = plot.TickerFunc(integerTicks)
			for i, policy := range policies {
				offset := 0.04 * (float64(i) - float64(len(policies)-1)/2)
				var measured, predicted plotter.XYs
				var errs plotter.YErrors
				for _, r := range byPolicy[policy] {
					x := r.Retry.Retries
					if f, ok := r.Figures[m.figure]; defined(f, ok) {
						pt := pointOf(f)
						measured = append(measured, plotter.XY{X: float64(x) + offset, Y: pt.est})
						errs = append(errs, struct{ Low, High float64 }{pt.est - pt.lo, pt.hi - pt.est})
					}
					if f, ok := r.Figures[m.predicted]; defined(f, ok) {
						predicted = append(predicted, plotter.XY{X: float64(x), Y: f.Estimate})
					}
				}
				if len(measured) == 0 {
					continue
				}
				line, points, err := plotter.NewLinePoints(measured)
				if err != nil {
					return nil, fmt.Errorf("plots: %s: %w", policy, err)
				}
				line.Color, points.Color = plotutil.Color(i), plotutil.Color(i)
				points.Shape = plotutil.Shape(i)
				eb, err := plotter.NewYErrorBars(struct {
					plotter.XYs
					plotter.YErrors
				}{measured, errs})
				if err != nil {
					return nil, fmt.Errorf("plots: %s: %w", policy, err)
				}
				eb.Color = plotutil.Color(i)
				p.Add(line, points, eb)
				p.Legend.Add("on loop: "+policy, line, points)
				if len(predicted) > 0 {
					pred, err := plotter.NewLine(predicted)
					if err != nil {
						return nil, fmt.Errorf("plots: %s: %w", policy, err)
					}
					pred.Color = plotutil.Color(i)
					pred.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
					p.Add(pred)
					p.Legend.Add("predicted, "+policy, pred)
				}
			}
			p.Legend.Top = false
			p.Legend.Left = false
			p.Legend.YOffs = vg.Inch / 2
			panels = append(panels, p)
		}
	}
	return panels, nil
}

// integerTicks labels every whole number in range: retry budgets.
func integerTicks(min, max float64) []plot.Tick {
	var ticks []plot.Tick
	for x := math.Ceil(min); x <= max; x++ {
		ticks = append(ticks, plot.Tick{Value: x, Label: strconv.Itoa(int(x))})
	}
	return ticks
}

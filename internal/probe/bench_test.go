package probe

import (
	"testing"

	"github.com/feedrun/feedrun/envs/toolshed"
	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/llama"
	"github.com/feedrun/feedrun/internal/lm"
	"github.com/feedrun/feedrun/internal/models"
)

// counting counts what scoring from scratch would evaluate: for every
// continuation, the whole prefix plus the continuation.
type counting struct {
	lm.Model
	effective int
}

func (c *counting) Score(prefix []lm.Token, conts []lm.Continuation) ([][]float64, error) {
	for _, x := range conts {
		c.effective += len(prefix) + len(x.Tokens)
	}
	return c.Model.Score(prefix, conts)
}

// BenchmarkProbeItem measures whole ToolShed items on SmolLM2-135M, every
// harness, with prefix reuse on (the default) and off. Run with `make bench`.
func BenchmarkProbeItem(b *testing.B) {
	path, err := models.CachedPath("smollm2-135m")
	if err != nil {
		b.Fatal(err)
	}
	items := toolshed.MakeItems(1, 4)
	for _, c := range []struct {
		name    string
		noReuse bool
	}{{"reuse", false}, {"scratch", true}} {
		b.Run(c.name, func(b *testing.B) {
			m, err := llama.Load(path, llama.Options{NoPrefixReuse: c.noReuse})
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			cm := &counting{Model: m}
			p := New(cm, Options{Harnesses: harness.ProbeHarnesses})
			n := 0
			for b.Loop() {
				if _, _, err := p.Item(items[n%len(items)]); err != nil {
					b.Fatal(err)
				}
				n++
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "items/s")
			b.ReportMetric(float64(cm.effective)/b.Elapsed().Seconds(), "effective-tokens/s")
		})
	}
}

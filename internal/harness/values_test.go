package harness

import (
	"slices"
	"testing"
)

// The lists the probe, the rollout and the report iterate come from the
// harness values, in the order the report prints: the text bans beside
// the study's, memory last, and the probe without either.
func TestHarnessListsKeepTheReportOrder(t *testing.T) {
	probe := []Name{Verbatim, Instruction, Abstract, Ban, AbstractBan, Drop, ErrorOnly, Scrub}
	rollout := []Name{Verbatim, Instruction, Abstract, Ban, AbstractBan, BanText, AbstractBanText, Drop, ErrorOnly, Scrub, Memory}
	if !slices.Equal(ProbeHarnesses, probe) {
		t.Errorf("probe harnesses %v, want %v", ProbeHarnesses, probe)
	}
	if !slices.Equal(RolloutHarnesses, rollout) {
		t.Errorf("rollout harnesses %v, want %v", RolloutHarnesses, rollout)
	}
}

// What the rollout loop and the report ask of a harness, beyond its
// contexts (TestEpisodeContextsAreTheDesignedOnes): scrub escalates past
// MaxScrubs failures and no other does; memory alone reads guidance and
// gates writes; only the study's ban may take the unbanned reply; a run
// made before the token ban reads its ban as the text ban; and a name no
// harness has changes nothing.
func TestHarnessesAnswerForThemselves(t *testing.T) {
	for _, n := range RolloutHarnesses {
		if got, want := n.Escalates(MaxScrubs+1), n == Scrub; got != want {
			t.Errorf("%s escalates after %d failures: %v, want %v", n, MaxScrubs+1, got, want)
		}
		if n.Escalates(MaxScrubs) {
			t.Errorf("%s escalates after only %d failures", n, MaxScrubs)
		}
		if got, want := n.Guided() && n.Gated(), n == Memory; got != want || n.Guided() != n.Gated() {
			t.Errorf("%s: guided %v, gated %v; want both %v", n, n.Guided(), n.Gated(), want)
		}
		if got, want := n.Of().Ban.SharesUnconstrained(), n == Ban || n == AbstractBan; got != want {
			t.Errorf("%s shares the unbanned reply: %v, want %v", n, got, want)
		}
	}
	for old, now := range map[Name]Name{Ban: BanText, AbstractBan: AbstractBanText, Verbatim: Verbatim, BanText: BanText} {
		if got := old.BeforeTokenBan(); got != now {
			t.Errorf("%s before the token ban is %s, want %s", old, got, now)
		}
	}
	if v, ok := Drop.Fixes("inversion", "gain_per_token"); !ok || v != 0 {
		t.Errorf("drop fixes G at %v, %v; want 0", v, ok)
	}
	if _, ok := Verbatim.Fixes("inversion", "gain_per_token"); ok {
		t.Error("verbatim fixes G")
	}
	odd := Name("made-up")
	if odd.Bans() || odd.Guided() || odd.Escalates(MaxScrubs+1) || odd.RuledOut([]Turn{{Failed: true, Description: "D"}}) != nil {
		t.Errorf("a name no harness has acts: %+v", odd.Of())
	}
}

package report

import (
	"strings"
	"testing"
)

// --reference: "" is the copy built in, "none" no study columns, else
// the file named.
func TestUseReference(t *testing.T) {
	var o Options
	o.UseReference("")
	if o.ReferenceData == nil || !strings.Contains(o.Reference, "built in") {
		t.Errorf(`UseReference("") = %q, %d bytes; want the built-in copy`, o.Reference, len(o.ReferenceData))
	}
	o = Options{}
	if o.UseReference("none"); o.Reference != "" || o.ReferenceData != nil {
		t.Errorf(`UseReference("none") = %q; want none`, o.Reference)
	}
	if o.UseReference("mine.yaml"); o.Reference != "mine.yaml" || o.ReferenceData != nil {
		t.Errorf(`UseReference("mine.yaml") = %q; want the file`, o.Reference)
	}
}

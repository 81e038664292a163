package config

import (
	"fmt"
	"math"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/feedrun/feedrun/internal/usage"
)

// boundsAnnotation marks an integer flag with the range it accepts.
const boundsAnnotation = "feedrun_bounds"

// Unbounded is the upper end of a count with no upper bound of its own.
const Unbounded = math.MaxInt

// Bound declares the range [lo, hi] of the int or int-list flag name, which
// CheckBounds enforces once flags, environment and config file are resolved,
// before a command's run function starts and so before it writes anything.
func Bound(fs *pflag.FlagSet, name string, lo, hi int) {
	if err := fs.SetAnnotation(name, boundsAnnotation, []string{strconv.Itoa(lo), strconv.Itoa(hi)}); err != nil {
		panic(err) // a flag that was never registered: a programming error
	}
}

// Bounded reports whether fl has a range declared by Bound.
func Bounded(fl *pflag.Flag) bool {
	_, ok := fl.Annotations[boundsAnnotation]
	return ok
}

// CheckBounds refuses the first flag whose value is out of range, as a
// usage error naming the flag and what it expects: a bounded count (any
// element of a list) outside its range, or any float flag of any command
// that is not a finite number. NaN passes every comparison a command's own
// check makes (NaN < 0 is false), +Inf passes a lower bound, and neither can
// be written to a manifest (encoding/json refuses them), so a run given one
// failed only once its folder was made; here it is refused before anything
// is opened or written.
func CheckBounds(cmd *cobra.Command) error {
	var firstErr error
	cmd.Flags().VisitAll(func(fl *pflag.Flag) {
		if firstErr != nil {
			return
		}
		if err := checkFinite(cmd.Flags(), fl); err != nil {
			firstErr = err
			return
		}
		b, ok := fl.Annotations[boundsAnnotation]
		if !ok {
			return
		}
		lo, _ := strconv.Atoi(b[0])
		hi, _ := strconv.Atoi(b[1])
		var values []int
		switch fl.Value.Type() {
		case "int":
			v, _ := cmd.Flags().GetInt(fl.Name)
			values = []int{v}
		case "intSlice":
			values, _ = cmd.Flags().GetIntSlice(fl.Name)
		default:
			panic(fmt.Sprintf("bound: flag --%s is a %s, not an int or int list", fl.Name, fl.Value.Type()))
		}
		for _, v := range values {
			if v < lo || v > hi {
				firstErr = usage.Errorf("--%s: expected %s, got %d", fl.Name, rangeText(lo, hi), v)
				return
			}
		}
	})
	return firstErr
}

// checkFinite refuses NaN and ±Inf in the float flag fl (any element of a
// list); flags of other types pass.
func checkFinite(fs *pflag.FlagSet, fl *pflag.Flag) error {
	var values []float64
	switch fl.Value.Type() {
	case "float64":
		v, _ := fs.GetFloat64(fl.Name)
		values = []float64{v}
	case "float32":
		v, _ := fs.GetFloat32(fl.Name)
		values = []float64{float64(v)}
	case "float64Slice":
		values, _ = fs.GetFloat64Slice(fl.Name)
	case "float32Slice":
		list, _ := fs.GetFloat32Slice(fl.Name)
		for _, v := range list {
			values = append(values, float64(v))
		}
	}
	for _, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return usage.Errorf("--%s: expected a finite number, got %v", fl.Name, v)
		}
	}
	return nil
}

func rangeText(lo, hi int) string {
	if hi == Unbounded {
		return fmt.Sprintf("a whole number >= %d", lo)
	}
	return fmt.Sprintf("a whole number from %d to %d", lo, hi)
}

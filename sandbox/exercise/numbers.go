package exercise

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// bounds are the numeric constraints of a number or integer schema.
type bounds struct {
	lo, hi         float64
	hasLo, hasHi   bool
	exclLo, exclHi bool
	step           float64 // multipleOf, 0 when absent
	integer        bool
}

// numBounds reads minimum, maximum, exclusiveMinimum and exclusiveMaximum in
// both the draft-4 (boolean beside minimum) and draft-6+ (numeric) forms,
// and multipleOf.
func numBounds(s *object, integer bool) bounds {
	b := bounds{integer: integer}
	b.lo, b.hasLo = num(s.vals["minimum"])
	b.hi, b.hasHi = num(s.vals["maximum"])
	switch x := s.vals["exclusiveMinimum"].(type) {
	case bool:
		b.exclLo = x && b.hasLo
	case json.Number:
		if f, ok := num(x); ok && (!b.hasLo || f >= b.lo) {
			b.lo, b.hasLo, b.exclLo = f, true, true
		}
	}
	switch x := s.vals["exclusiveMaximum"].(type) {
	case bool:
		b.exclHi = x && b.hasHi
	case json.Number:
		if f, ok := num(x); ok && (!b.hasHi || f <= b.hi) {
			b.hi, b.hasHi, b.exclHi = f, true, true
		}
	}
	if m, ok := num(s.vals["multipleOf"]); ok && m > 0 {
		b.step = m
	}
	return b
}

// ok reports whether x satisfies the bounds.
func (b bounds) ok(x float64) bool {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return false
	case b.integer && x != math.Trunc(x):
		return false
	case b.hasLo && (x < b.lo || (b.exclLo && x == b.lo)):
		return false
	case b.hasHi && (x > b.hi || (b.exclHi && x == b.hi)):
		return false
	case b.step > 0:
		q := x / b.step
		return math.Abs(q-math.Round(q)) < 1e-9
	}
	return true
}

// candidates lists values in order of preference: 1, the minimum or just
// above it, the maximum or just below it, the middle, and multiples of
// multipleOf from the bottom of the range upwards.
func (b bounds) candidates() []float64 {
	c := []float64{1, 0}
	if b.hasLo {
		c = append(c, b.lo, math.Floor(b.lo)+1, b.lo+1)
	}
	if b.hasHi {
		c = append(c, b.hi, math.Ceil(b.hi)-1, b.hi-1)
	}
	if b.hasLo && b.hasHi {
		c = append(c, b.lo/2+b.hi/2, math.Floor(b.lo/2+b.hi/2))
	}
	if b.step > 0 {
		k, dir := 1.0, 1.0
		switch {
		case b.hasLo:
			k = math.Ceil(b.lo / b.step)
		case b.hasHi:
			k, dir = math.Floor(b.hi/b.step), -1
		}
		for i := 0; i < 1000; i++ {
			c = append(c, (k+dir*float64(i))*b.step)
		}
	}
	return c
}

// number generates a number within the bounds, 1 when it fits; variant n
// asks for a distinct one, n steps (multipleOf or 1) further.
func (g *generator) number(s *object, path string, integer bool, variant int) (any, error) {
	b := numBounds(s, integer)
	var x float64
	found := false
	for _, c := range b.candidates() {
		if b.ok(c) {
			x, found = c, true
			break
		}
	}
	if !found {
		return nil, prefix(path, fmt.Errorf("no %s fits the bounds", map[bool]string{true: "integer", false: "number"}[integer]))
	}
	if variant > 0 {
		step := b.step
		if step == 0 {
			step = 1
		}
		for _, y := range []float64{x + float64(variant)*step, x - float64(variant)*step} {
			if b.ok(y) {
				x = y
				break
			}
		}
	}
	out := json.Number(strconv.FormatFloat(x, 'f', -1, 64))
	return out, g.add(len(out))
}

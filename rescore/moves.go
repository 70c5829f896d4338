package rescore

import (
	"math"
	"slices"
	"strings"

	"github.com/verifymcp/verifymcp/rubric"
)

// moveAcc aggregates what moved, one run at a time.
type moveAcc struct {
	rb         *rubric.Rubric
	baselines  map[string]int
	noBaseline int
	comp       CompositeMove
	compTenths int64 // the deltas' sum, in tenths: exact, so in any order the same
	dims       map[string]*dimAcc
	codes      map[string]*CodeMove
	recollect  map[string]int
	recRuns    int
}

type dimAcc struct {
	DimensionMove
	tenths     int64 // as moveAcc.compTenths
	oldWeights map[float64]bool
}

func newMoveAcc(rb *rubric.Rubric) *moveAcc {
	return &moveAcc{
		rb:        rb,
		baselines: map[string]int{},
		dims:      map[string]*dimAcc{},
		codes:     map[string]*CodeMove{},
		recollect: map[string]int{},
	}
}

func (a *moveAcc) add(r *rescored) {
	if len(r.recollect) > 0 {
		a.recRuns++
		for _, s := range r.recollect {
			a.recollect[s]++
		}
	}
	if r.baseline == "" {
		a.noBaseline++
		return
	}
	a.baselines[r.baseline]++

	c := &a.comp
	c.Compared++
	switch o, n := r.oldScore, r.score; {
	case o == nil && n == nil:
		c.Unchanged++
	case o == nil:
		c.Gained++
	case n == nil:
		c.Lost++
	default:
		d := delta(*n, *o)
		switch {
		case d > 0:
			c.Up++
		case d < 0:
			c.Down++
		default:
			c.Unchanged++
		}
		if c.Scored == 0 || d < c.MinDelta {
			c.MinDelta = d
		}
		if c.Scored == 0 || d > c.MaxDelta {
			c.MaxDelta = d
		}
		c.Scored++
		a.compTenths += tenths(d)
	}

	for _, p := range r.dims {
		da := a.dims[p.id]
		if da == nil {
			da = &dimAcc{DimensionMove: DimensionMove{ID: p.id, StateChanges: map[string]int{}}, oldWeights: map[float64]bool{}}
			a.dims[p.id] = da
		}
		if p.inOld {
			da.oldWeights[p.oldWeight] = true
		}
		switch {
		case p.inOld && !p.inNew:
			da.Removed++
		case !p.inOld && p.inNew:
			da.Added++
		default:
			d := delta(p.newScore, p.oldScore)
			if da.Compared == 0 || d < da.MinDelta {
				da.MinDelta = d
			}
			if da.Compared == 0 || d > da.MaxDelta {
				da.MaxDelta = d
			}
			da.Compared++
			da.tenths += tenths(d)
			if d != 0 || p.oldState != p.newState {
				da.Moved++
			}
			if p.oldState != p.newState {
				da.StateChanges[string(p.oldState)+"->"+string(p.newState)]++
			}
		}
	}

	code := func(c string) *CodeMove {
		m := a.codes[c]
		if m == nil {
			m = &CodeMove{Code: c}
			a.codes[c] = m
		}
		return m
	}
	// Both lists are sorted and unique: merge them.
	i, j := 0, 0
	for i < len(r.codesOld) || j < len(r.codesNew) {
		switch {
		case j == len(r.codesNew) || i < len(r.codesOld) && r.codesOld[i] < r.codesNew[j]:
			m := code(r.codesOld[i])
			m.Before++
			m.Disappeared++
			i++
		case i == len(r.codesOld) || r.codesNew[j] < r.codesOld[i]:
			m := code(r.codesNew[j])
			m.After++
			m.Appeared++
			j++
		default:
			m := code(r.codesNew[j])
			m.Before++
			m.After++
			i++
			j++
		}
	}
}

// delta is new - old for scores rounded to one decimal, as Evaluate
// rounds them, rounded again so that 56.5 - 50 is 6.5 and not
// 6.500000000000001.
func delta(after, before float64) float64 { return math.Round((after-before)*10) / 10 }

// tenths is a delta in tenths. Summing deltas as floats would make a
// pass's means depend on the order the workers finish in.
func tenths(d float64) int64 { return int64(math.Round(d * 10)) }

// fill writes the aggregates into sum, in a stable order.
func (a *moveAcc) fill(sum *Summary) {
	if sum.Failed == nil {
		sum.Failed = []Failure{}
	}
	sum.Baselines = a.baselines
	sum.NoBaseline = a.noBaseline
	sum.Recollect = a.recollect
	sum.RecollectRuns = a.recRuns
	sum.Composite = a.comp
	if a.comp.Scored > 0 {
		sum.Composite.MeanDelta = float64(a.compTenths) / 10 / float64(a.comp.Scored)
	}
	dim := func(id string, weight float64) DimensionMove {
		da := a.dims[id]
		if da == nil {
			return DimensionMove{ID: id, Weight: weight, OldWeights: []float64{}, StateChanges: map[string]int{}}
		}
		m := da.DimensionMove
		m.Weight = weight
		m.OldWeights = make([]float64, 0, len(da.oldWeights))
		for w := range da.oldWeights {
			m.OldWeights = append(m.OldWeights, w)
		}
		slices.Sort(m.OldWeights)
		if m.Compared > 0 {
			m.MeanDelta = float64(da.tenths) / 10 / float64(m.Compared)
		}
		return m
	}
	sum.Dimensions = make([]DimensionMove, 0, len(a.rb.Dimensions))
	for _, d := range a.rb.Dimensions {
		sum.Dimensions = append(sum.Dimensions, dim(d.ID, d.Weight))
	}
	var gone []string
	for id := range a.dims {
		if _, ok := a.rb.Dimension(id); !ok {
			gone = append(gone, id)
		}
	}
	slices.Sort(gone)
	for _, id := range gone {
		sum.Dimensions = append(sum.Dimensions, dim(id, 0))
	}
	sum.Codes = make([]CodeMove, 0, len(a.codes))
	for _, m := range a.codes {
		sum.Codes = append(sum.Codes, *m)
	}
	slices.SortFunc(sum.Codes, func(x, y CodeMove) int { return strings.Compare(x.Code, y.Code) })
}

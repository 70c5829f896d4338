package store

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/verifymcp/verifymcp/rubric"
)

func TestResultShapeKnown(t *testing.T) {
	// If this fails, rubric.Result changed shape and encodeResult has
	// fallen back to json.Marshal: correct, but slow. Teach appendResult
	// the new shape.
	if !resultShapeKnown {
		t.Fatal("encodeResult does not know the shape of rubric.Result")
	}
}

func checkEncodeResult(t *testing.T, res rubric.Result) {
	t.Helper()
	want, wantErr := json.Marshal(res)
	got, gotErr := encodeResult(res)
	if (wantErr != nil) != (gotErr != nil) {
		t.Fatalf("encodeResult error %v, json.Marshal error %v", gotErr, wantErr)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("encodeResult differs from json.Marshal:\n got %s\nwant %s", got, want)
	}
}

func TestEncodeResultMatchesMarshalOnRescoredRuns(t *testing.T) {
	fx := loadRescoreFixtures(t)
	var rubrics []*rubric.Rubric
	for _, v := range []string{"1", "2", "3", "4", "5"} {
		r, err := rubric.Load(v)
		if err != nil {
			t.Fatal(err)
		}
		rubrics = append(rubrics, r)
	}
	for i := range 64 {
		b := fx.mixed(i)
		for _, r := range rubrics {
			checkEncodeResult(t, rubric.Evaluate(b, r))
		}
	}
}

// trickyStrings are strings whose JSON encoding takes a closer look.
var trickyStrings = []string{
	"", "plain", `quote " and \ backslash`, "<script>&amp;</script>", "tab\tnew\nline\rcr\bbs\fff",
	"\x00\x01\x1f\x7f", "caf\u00e9 \u65e5\u672c", "line\u2028para\u2029end", "bad \xff utf8 \xc3",
	"\xed\xa0\x80 surrogate", "emoji \U0001F600", "\u200b zero width \ufeff", "trailing \xe2\x80",
}

// trickyFloats are floats at encoding/json's formatting boundaries.
var trickyFloats = []float64{
	0, math.Copysign(0, -1), 1, -1, 0.1, 87.5, 100, 1e-6, 9.99e-7, 1e-7, 1.5e-9, 1e20, 1e21, 1.2345e22,
	-1e21, math.MaxFloat64, math.SmallestNonzeroFloat64, 123456789.123, 1e-300,
}

func randomResult(r *rand.Rand) rubric.Result {
	str := func() string {
		if r.IntN(3) == 0 {
			return trickyStrings[r.IntN(len(trickyStrings))]
		}
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = byte(r.IntN(256))
			if r.IntN(2) == 0 {
				b[i] = byte(' ' + r.IntN(95))
			}
		}
		return string(b)
	}
	num := func() float64 {
		if r.IntN(2) == 0 {
			return trickyFloats[r.IntN(len(trickyFloats))]
		}
		return (r.Float64() - 0.5) * math.Pow(10, float64(r.IntN(50)-25))
	}
	ptr := func() *float64 {
		if r.IntN(3) == 0 {
			return nil
		}
		v := num()
		return &v
	}
	res := rubric.Result{RubricVersion: str(), RubricHash: str(), Score: ptr()}
	if r.IntN(5) > 0 {
		res.Findings = make([]rubric.Finding, r.IntN(6))
		for i := range res.Findings {
			res.Findings[i] = rubric.Finding{
				Code: str(), Kind: rubric.Kind(str()), Severity: rubric.Severity(str()), Dimension: str(),
				Subject: str(), Message: str(), Evidence: str(), Value: ptr(),
			}
		}
	}
	if r.IntN(5) > 0 {
		res.Dimensions = make([]rubric.DimensionScore, r.IntN(6))
		for i := range res.Dimensions {
			res.Dimensions[i] = rubric.DimensionScore{ID: str(), Weight: num(), State: rubric.State(str()), Score: num(), Reason: str()}
		}
	}
	return res
}

func TestEncodeResultMatchesMarshalOnRandomResults(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		checkEncodeResult(t, randomResult(r))
	}
}

func TestEncodeResultRefusesWhatMarshalRefuses(t *testing.T) {
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		checkEncodeResult(t, rubric.Result{Score: &v})
		checkEncodeResult(t, rubric.Result{Dimensions: []rubric.DimensionScore{{Weight: v}}})
		checkEncodeResult(t, rubric.Result{Findings: []rubric.Finding{{Value: &v}}})
	}
}

func FuzzEncodeResult(f *testing.F) {
	for _, s := range trickyStrings {
		f.Add(s, 87.5)
	}
	f.Fuzz(func(t *testing.T, s string, v float64) {
		checkEncodeResult(t, rubric.Result{
			RubricVersion: s, RubricHash: s, Score: &v,
			Findings:   []rubric.Finding{{Code: s, Kind: rubric.Kind(s), Severity: rubric.Severity(s), Dimension: s, Subject: s, Message: s, Evidence: s, Value: &v}},
			Dimensions: []rubric.DimensionScore{{ID: s, Weight: v, State: rubric.State(s), Score: v, Reason: s}},
		})
	})
}

func TestSafe8(t *testing.T) {
	// Every byte value in every position, among safe bytes.
	for pos := range 8 {
		for c := range 256 {
			b := []byte("abcdefgh")
			b[pos] = byte(c)
			want := c >= 0x20 && c < 0x80 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
			if got := safe8(string(b)); got != want {
				t.Errorf("safe8(%q) = %v, want %v", b, got, want)
			}
		}
	}
}

package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/rubric"
)

func allRubrics(t testing.TB) []*rubric.Rubric {
	t.Helper()
	var rs []*rubric.Rubric
	for _, v := range []string{"1", "2", "3", "4", "5"} {
		r, err := rubric.Load(v)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	return rs
}

// memoPopulation returns stored bundles of the mixed population, in which
// contracts, supply-chain and judge evidence repeat across runs that
// differ in everything else, and a few bundles whose shared parts differ
// in one byte or are absent.
func memoPopulation(t testing.TB, n int) [][]byte {
	t.Helper()
	fx := loadRescoreFixtures(t)
	var out [][]byte
	for i := range n {
		data, err := json.Marshal(fx.mixed(i))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, data)
	}
	// The same contract under another server name: the contract checks
	// read the name, so nothing may be reused.
	b := fx.mixed(3)
	c := *b.Contract
	c.ServerInfo.Name += "-fork"
	b.Contract = &c
	// No contract, supply or judge at all.
	nb := fx.mixed(4)
	nb.Contract, nb.Supply, nb.Judge = nil, nil, nil
	for _, v := range []*evidence.Bundle{b, nb} {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, data)
	}
	return out
}

func TestRescoreMemoMatchesDecodeAndEvaluate(t *testing.T) {
	pop := memoPopulation(t, 96)
	for _, r := range allRubrics(t) {
		t.Run("rubric="+r.Version, func(t *testing.T) {
			m := newRescoreMemo(r)
			// Twice over: the second round finds everything memoised.
			for round := range 2 {
				for i, data := range pop {
					want, wantErr := DecodeBundle(data)
					got, gotErr := m.decodeBundle(data)
					if wantErr != nil || gotErr != nil {
						t.Fatalf("run %d: decode errors %v, %v", i, wantErr, gotErr)
					}
					if !reflect.DeepEqual(want, got) {
						t.Fatalf("round %d, run %d: memo decodes differently (-want +got):\n%s", round, i, diff(want, got))
					}
					wantJSON, err := json.Marshal(rubric.Evaluate(want, r))
					if err != nil {
						t.Fatal(err)
					}
					gotJSON, err := encodeResult(m.evaluate(got))
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(wantJSON, gotJSON) {
						t.Fatalf("round %d, run %d: memo scores differently:\n got %s\nwant %s", round, i, gotJSON, wantJSON)
					}
				}
			}
			// What the memo shares is as decoded: scoring modified none of it.
			for _, tab := range []*memoTable{&m.dec.contract, &m.dec.supply, &m.dec.judge} {
				if tab.n == 0 {
					t.Fatal("a memo table is empty: nothing was shared")
				}
				for _, list := range tab.byPrefix {
					for _, e := range list {
						fresh := reflect.New(e.p.Type().Elem())
						if err := json.Unmarshal([]byte(e.raw), fresh.Interface()); err != nil {
							t.Fatal(err)
						}
						if !reflect.DeepEqual(fresh.Interface(), e.p.Interface()) {
							t.Fatalf("a shared %s was modified (-want +got):\n%s", e.p.Type(), diff(fresh.Interface(), e.p.Interface()))
						}
					}
				}
			}
		})
	}
}

func TestRescoreMemoConcurrent(t *testing.T) {
	pop := memoPopulation(t, 64)
	r := rubric.Current()
	want := make([][]byte, len(pop))
	for i, data := range pop {
		b, err := DecodeBundle(data)
		if err != nil {
			t.Fatal(err)
		}
		if want[i], err = json.Marshal(rubric.Evaluate(b, r)); err != nil {
			t.Fatal(err)
		}
	}
	m := newRescoreMemo(r)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 3 * len(pop) {
				i := (k + w*7) % len(pop)
				b, err := m.decodeBundle(pop[i])
				if err != nil {
					errs <- err
					return
				}
				got, err := encodeResult(m.evaluate(b))
				if err != nil {
					errs <- err
					return
				}
				if !bytes.Equal(got, want[i]) {
					errs <- fmt.Errorf("run %d scored differently under concurrency", i)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func TestDecodeMemoIsBounded(t *testing.T) {
	m := newDecodeMemo()
	fx := loadRescoreFixtures(t)
	for i := range memoEntries + 10 {
		b := fx.mixed(0)
		c := *b.Contract
		c.ServerInfo.Version = fmt.Sprintf("1.0.%d", i)
		b.Contract = &c
		data, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		var got evidence.Bundle
		if err := fastDecode(data, &got, m); err != nil {
			t.Fatal(err)
		}
		if got.Contract.ServerInfo.Version != c.ServerInfo.Version {
			t.Fatalf("decoded version %s, want %s", got.Contract.ServerInfo.Version, c.ServerInfo.Version)
		}
	}
	if n := m.contract.n; n > memoEntries || n == 0 {
		t.Fatalf("contract table holds %d entries; want 1..%d", n, memoEntries)
	}
	// Contracts that differ only at their end share a prefix.
	m = newDecodeMemo()
	for i := range 3 * memoCandidates {
		b := fx.mixed(0)
		c := *b.Contract
		c.Tools = slices.Clone(c.Tools)
		c.Tools[len(c.Tools)-1].Description = fmt.Sprintf("variant %d", i%(2*memoCandidates))
		b.Contract = &c
		data, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		var got evidence.Bundle
		if err := fastDecode(data, &got, m); err != nil {
			t.Fatal(err)
		}
		want, err := DecodeBundle(data)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Contract, want.Contract) {
			t.Fatalf("variant %d decoded as another:\n%s", i, diff(want.Contract, got.Contract))
		}
	}
	if len(m.contract.byPrefix) != 1 || m.contract.n > memoCandidates {
		t.Fatalf("contract table holds %d prefixes, %d entries; want 1 prefix and at most %d", len(m.contract.byPrefix), m.contract.n, memoCandidates)
	}
}

// FuzzMemoDecode checks that decoding through a memo, first and again
// (when the shared parts are found in the memo), gives what DecodeBundle
// gives, including for inputs that are not valid JSON.
func FuzzMemoDecode(f *testing.F) {
	for _, name := range []string{"everything.bundle.json", "supply.bundle.json", "judge.bundle.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"contract":{"tools":[{"name":"a]"}]}}`))
	f.Add([]byte(`{"contract":{"tools":[}]}}`))
	f.Add([]byte(`{"contract":{"x":"\"}"},"supply":{}}`))
	f.Add([]byte(`{"contract":{"a":1},"contract":{"b":2}}`))
	f.Add([]byte(`{"judge":{"verdicts":[]} ,"supply":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		want, wantErr := DecodeBundle(data)
		m := newRescoreMemo(rubric.Current())
		for round := range 2 {
			got, gotErr := m.decodeBundle(data)
			if (wantErr != nil) != (gotErr != nil) {
				t.Fatalf("round %d: memo decode error %v, DecodeBundle error %v", round, gotErr, wantErr)
			}
			if !reflect.DeepEqual(want, got) {
				t.Fatalf("round %d: decodes differently (-want +got):\n%s", round, diff(want, got))
			}
		}
	})
}

func TestValueEnds(t *testing.T) {
	for _, tt := range []struct {
		in          string
		object, str int
	}{
		{`{}`, 2, -1},
		{`{"a":"}"},1`, 9, -1},
		{`{"a":[1,{"b":"\"]}"}]}x`, 22, -1},
		{`[{}, [], "["]`, 13, -1},
		{`{"a":"\`, -1, -1},
		{`{"a":{}`, -1, -1},
		{`"abc",`, -1, 5},
		{`"a\"b\\",`, -1, 8},
		{`"a\`, -1, -1},
		{`"caf` + "\u00e9" + `"`, -1, 7},
	} {
		if tt.in[0] != '"' {
			if got := objectEnd([]byte(tt.in), 0); got != tt.object {
				t.Errorf("objectEnd(%q) = %d, want %d", tt.in, got, tt.object)
			}
		} else if got := stringEnd([]byte(tt.in), 0); got != tt.str {
			t.Errorf("stringEnd(%q) = %d, want %d", tt.in, got, tt.str)
		}
	}
}

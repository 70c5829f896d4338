//go:build docker

package cli_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"

	"github.com/verifymcp/verifymcp/cache"
	"github.com/verifymcp/verifymcp/judge/judgetest"
	"github.com/verifymcp/verifymcp/store"
)

// credentialShapes match the canary formats raw, and the hex and base64
// forms of the AWS key id's fixed prefix (the fixtures exfiltrate those).
// Copied from sandbox/behavior_docker_test.go: the canaries are drawn
// afresh for every scan, so the test knows them only by their shape.
var credentialShapes = regexp.MustCompile(`AKIA[A-Z0-9]{16}|ghp_[A-Za-z0-9]{36}|npm_[A-Za-z0-9]{36}|sk-proj-[A-Za-z0-9_-]{20,}|sk-ant-api03-[A-Za-z0-9_-]{20,}|(?i)414b4941[0-9a-f]{8}|QUtJQ[A-Za-z0-9+/]{8}|BEGIN OPENSSH PRIVATE KEY`)

// knownSecret is one value the test knows and that must appear nowhere.
type knownSecret struct{ name, value string }

// needle is one form of a known secret to look for.
type needle struct {
	name string
	form []byte
}

// leakFinder looks for secrets in what verifymcp wrote or sent.
type leakFinder struct {
	needles []needle
	// hits are the leaks found, one line each.
	hits []string
	// sources counts what was looked at, by kind, so that a test that
	// looked at nothing does not pass.
	sources map[string]int
}

// base64Forms are the parts of v's standard base64 encoding that stay the
// same wherever v sits in a longer encoded text: one for each of the three
// alignments, the characters that depend on v's bytes only.
func base64Forms(v string) [][]byte {
	var out [][]byte
	for k := 0; k < 3; k++ {
		enc := base64.StdEncoding.EncodeToString(append(make([]byte, k), v...))
		var b []byte
		for i := range len(enc) {
			if 6*i >= 8*k && 6*i+6 <= 8*(k+len(v)) {
				b = append(b, enc[i])
			}
		}
		if len(b) >= 12 {
			out = append(out, b)
		}
	}
	return out
}

func newLeakFinder(secrets []knownSecret) *leakFinder {
	lf := &leakFinder{sources: map[string]int{}}
	for _, s := range secrets {
		lf.needles = append(lf.needles, needle{s.name, []byte(s.value)})
		lf.needles = append(lf.needles, needle{s.name + " (hex)", []byte(hex.EncodeToString([]byte(s.value)))})
		for _, f := range base64Forms(s.value) {
			lf.needles = append(lf.needles, needle{s.name + " (base64)", f})
		}
	}
	return lf
}

// context80 is the 80 characters around data[a:b].
func context80(data []byte, a, b int) string {
	lo, hi := max(0, a-40), min(len(data), b+40)
	if hi-lo > 80+(b-a) {
		hi = lo + 80 + (b - a)
	}
	return fmt.Sprintf("%q", data[lo:hi])
}

// look records every known secret and every credential shape in data;
// skip names the secrets allowed there (by their name).
func (lf *leakFinder) look(kind, where string, data []byte, skip ...string) {
	lf.sources[kind]++
	const perSource = 12
	n := 0
	report := func(what string, a, b int) {
		n++
		if n <= perSource {
			lf.hits = append(lf.hits, fmt.Sprintf("%s: %s at byte %d: %s", where, what, a, context80(data, a, b)))
		} else if n == perSource+1 {
			lf.hits = append(lf.hits, fmt.Sprintf("%s: more hits left out", where))
		}
	}
	for _, nd := range lf.needles {
		allowed := false
		for _, s := range skip {
			allowed = allowed || strings.HasPrefix(nd.name, s)
		}
		if allowed {
			continue
		}
		for off := 0; ; {
			i := bytes.Index(data[off:], nd.form)
			if i < 0 {
				break
			}
			report(nd.name, off+i, off+i+len(nd.form))
			off += i + len(nd.form)
		}
	}
	for _, m := range credentialShapes.FindAllIndex(data, -1) {
		report("credential shape "+fmt.Sprintf("%q", data[m[0]:m[1]]), m[0], m[1])
	}
}

// lookBlob looks at a stored value and at its decompressed forms: the
// store's S2 framing ("\x00s2", see store/codec.go), gzip and zstd.
func (lf *leakFinder) lookBlob(kind, where string, data []byte) {
	lf.look(kind, where, data)
	for _, d := range decompressed(data) {
		if d.data == nil {
			lf.hits = append(lf.hits, where+": "+d.how)
			continue
		}
		lf.look(kind, where+" ("+d.how+")", d.data)
	}
}

type decoded struct {
	how  string
	data []byte
}

func decompressed(data []byte) []decoded {
	var out []decoded
	switch {
	case bytes.HasPrefix(data, []byte("\x00s2")):
		if j, err := s2.Decode(nil, data[3:]); err == nil {
			out = append(out, decoded{"s2-decoded", j})
		} else {
			// Not provably clean: counted as a hit by lookBlob.
			out = append(out, decoded{"undecodable S2 blob: " + err.Error(), nil})
		}
	case bytes.HasPrefix(data, []byte{0x1f, 0x8b}):
		if zr, err := gzip.NewReader(bytes.NewReader(data)); err == nil {
			if j, err := io.ReadAll(zr); err == nil {
				out = append(out, decoded{"gunzipped", j})
			}
		}
	case bytes.HasPrefix(data, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		if zr, err := zstd.NewReader(bytes.NewReader(data)); err == nil {
			if j, err := io.ReadAll(zr); err == nil {
				out = append(out, decoded{"zstd-decoded", j})
			}
			zr.Close()
		}
	}
	return out
}

// lookTree reads every file under dir raw (and decompressed when it is).
func (lf *leakFinder) lookTree(t *testing.T, kind, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		lf.lookBlob(kind, kind+" file "+rel, data)
		return nil
	})
	if err != nil {
		t.Errorf("read %s: %v", dir, err)
	}
}

// lookSQLite dumps every row of every table of a SQLite file, each column
// on its own, decompressing compressed blobs.
func (lf *leakFinder) lookSQLite(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var tables []string
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	if err != nil {
		t.Fatalf("list tables of %s: %v", path, err)
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, n)
	}
	rows.Close()
	if len(tables) == 0 {
		t.Errorf("%s has no tables", path)
	}
	for _, table := range tables {
		rows, err := db.Query(`SELECT * FROM "` + strings.ReplaceAll(table, `"`, `""`) + `"`)
		if err != nil {
			t.Errorf("dump %s: %v", table, err)
			continue
		}
		cols, _ := rows.Columns()
		row := 0
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Errorf("dump %s: %v", table, err)
				break
			}
			for i, v := range vals {
				var data []byte
				switch v := v.(type) {
				case []byte:
					data = v
				case string:
					data = []byte(v)
				case nil:
					continue
				default:
					data = []byte(fmt.Sprint(v))
				}
				lf.lookBlob("sqlite", fmt.Sprintf("sqlite table %s row %d column %s", table, row, cols[i]), data)
			}
			row++
		}
		if err := rows.Err(); err != nil {
			t.Errorf("dump %s: %v", table, err)
		}
		rows.Close()
	}
}

var digestRE = regexp.MustCompile(`\b[0-9a-f]{64}\b`)

// lookStore reads the store through its own API: every run's bundle,
// every result, every bundle EachBundle streams, every artefact a bundle
// names, the derived runs; and the answer cache's statistics. It returns
// the decoded bundles by run id.
func (lf *leakFinder) lookStore(t *testing.T, data string) map[string][]byte {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(ctx, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	bundles := map[string][]byte{}
	for _, r := range runs {
		summary, _ := json.Marshal(r)
		lf.look("store", "store.Runs row of "+r.RunID, summary)
		if _, ok := bundles[r.RunID]; !ok {
			b, err := st.Bundle(ctx, r.RunID)
			if err != nil {
				t.Errorf("bundle of %s: %v", r.RunID, err)
				continue
			}
			bundles[r.RunID] = b
			lf.look("store", "store.Bundle "+r.RunID, b)
			derived, err := st.Derived(ctx, r.RunID)
			if err != nil {
				t.Errorf("derived of %s: %v", r.RunID, err)
			}
			lf.look("store", "store.Derived "+r.RunID, []byte(strings.Join(derived, "\n")))
			for _, d := range digestRE.FindAllString(string(b), -1) {
				if a, err := st.Artifact(ctx, d); err == nil {
					lf.lookBlob("store", "store.Artifact "+d, a)
				}
			}
		}
		if r.RubricVersion != "" {
			res, err := st.Result(ctx, r.RunID, r.RubricVersion)
			if err != nil {
				t.Errorf("result of %s under %s: %v", r.RunID, r.RubricVersion, err)
				continue
			}
			j, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			lf.look("store", "store.Result "+r.RunID+" rubric "+r.RubricVersion, j)
		}
	}
	err = st.EachBundle(ctx, store.Filter{}, func(id string, b []byte) error {
		lf.look("store", "store.EachBundle "+id, b)
		return nil
	})
	if err != nil {
		t.Error(err)
	}
	if len(bundles) == 0 {
		t.Error("the store holds no run: nothing was looked at")
	}
	c, err := cache.Open(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	stats, err := c.Stats(ctx)
	if err != nil {
		t.Error(err)
	}
	j, _ := json.Marshal(stats)
	lf.look("store", "cache.Stats", j)
	return bundles
}

// lookJudge looks at every request the judge fake received since from:
// the bodies for every secret, the headers for every secret but the
// judge's key in Authorization, where it belongs.
func (lf *leakFinder) lookJudge(reqs []judgetest.Request, from int) {
	for _, r := range reqs[from:] {
		where := fmt.Sprintf("judge request %d", r.N)
		lf.look("judge", where+" path", []byte(r.Method+" "+r.Path))
		lf.look("judge", where+" body", r.Body)
		names := make([]string, 0, len(r.Header))
		for k := range r.Header {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			hv := []byte(k + ": " + strings.Join(r.Header[k], ", "))
			if strings.EqualFold(k, "Authorization") {
				lf.look("judge", where+" header "+k, hv, "key:judge")
			} else {
				lf.look("judge", where+" header "+k, hv)
			}
		}
	}
}
